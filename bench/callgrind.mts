/**
 * Running a bench under callgrind, and reading its output for the instruction counts of the benches:
 * the total, and the part the garbage collector ran (by V8's function names), since whether a major
 * collection falls inside the counted window moves a total by up to 15%.
 */

// V8's collector by function name: scavenges, mark-compact, sweeping, and the write barrier while marking.
const COLLECTOR =
  /Scaveng|MarkCompact|Marking|Sweep|Evacuat|RememberedSet|RecordMigrated|RecordWrite|heap::base|v8::internal::Heap::|GCTracer|MinorMS|SlotSet|LiveObjectVisitor|IterateObjectCache|RootVisitor|BodyDescriptorBase::IteratePointers/;

/** The total instructions of a callgrind output file, and those of the collector's own functions. */
export function countsOf(text: string): { total: number; collector: number } {
  const total = Number(/^totals:\s+(\d+)/m.exec(text)?.[1]);
  const names = new Map<string, string>();
  let current = '';
  let skipNext = false;
  let collector = 0;
  for (const line of text.split('\n')) {
    const fn = /^fn=\((\d+)\)(?: (.*))?$/.exec(line);
    if (fn) {
      if (fn[2] !== undefined) names.set(fn[1]!, fn[2]);
      current = names.get(fn[1]!) ?? '';
      continue;
    }
    // The cost line after `calls=` is the callee's inclusive cost, not this function's own.
    if (line.startsWith('calls=')) {
      skipNext = true;
      continue;
    }
    const cost = /^[+-]?\d+ (\d+)$/.exec(line) ?? /^\* (\d+)$/.exec(line);
    if (cost) {
      if (!skipNext && COLLECTOR.test(current)) collector += Number(cost[1]);
      skipNext = false;
    } else {
      const named = /^cfn=\((\d+)\)(?: (.*))?$/.exec(line);
      if (named?.[2] !== undefined) names.set(named[1]!, named[2]);
    }
  }
  return { total, collector };
}

/**
 * valgrind's arguments to run `script` (through tsx) under callgrind with counting off until the
 * script turns it on, and V8 set so JIT and collector fall at the same points of every run (as
 * bench/instructions.mts runs its servers and loops).
 */
export function callgrindArgs(out: string, script: string, ...args: string[]): string[] {
  return [
    '--tool=callgrind',
    '--instr-atstart=no',
    `--callgrind-out-file=${out}`,
    process.execPath,
    '--single-threaded',
    '--predictable-gc-schedule',
    '--initial-old-space-size=2048',
    '--import',
    'tsx',
    script,
    ...args,
  ];
}
