/**
 * Running a bench under callgrind, and reading its output for the instruction counts of the benches:
 * the total, and the part the garbage collector ran (by V8's function names), since whether a major
 * collection falls inside the counted window moves a total by up to 15%.
 */

// V8's collector by function name: scavenges, mark-compact, sweeping, and the write barrier while marking.
const COLLECTOR =
  /Scaveng|MarkCompact|Marking|Sweep|Evacuat|RememberedSet|RecordMigrated|RecordWrite|heap::base|v8::internal::Heap::|GCTracer|MinorMS|SlotSet|LiveObjectVisitor|IterateObjectCache|RootVisitor|BodyDescriptorBase::IteratePointers/;

// V8's compilers by their runtime entries (lazy compilation, Maglev and TurboFan tier-up, OSR): a
// function's first optimisation can land inside the counted window, and one of a large function (zod's
// parse of a whole schema) costs millions of instructions once.
const COMPILER = /^v8::internal::Runtime_(?:Compile|Optimize|InstallBaselineCode)/;

/**
 * The total instructions of a callgrind output file, those of the collector's own functions, and
 * those of the JIT compilers (inclusive: every call into one of their runtime entries).
 */
export function countsOf(text: string): { total: number; collector: number; compiler: number } {
  const total = Number(/^totals:\s+(\d+)/m.exec(text)?.[1]);
  const names = new Map<string, string>();
  let current = '';
  let callee = '';
  let skipNext = false;
  let collector = 0;
  let compiler = 0;
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
      if (skipNext && COMPILER.test(callee) && !COMPILER.test(current)) compiler += Number(cost[1]);
      skipNext = false;
    } else {
      const named = /^cfn=\((\d+)\)(?: (.*))?$/.exec(line);
      if (named) {
        if (named[2] !== undefined) names.set(named[1]!, named[2]);
        callee = names.get(named[1]!) ?? '';
      }
    }
  }
  return { total, collector, compiler };
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
