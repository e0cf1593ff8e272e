/**
 * Reading callgrind's output for the instruction counts of bench/instructions.mts and bench/otel.mts:
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
