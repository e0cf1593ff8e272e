/** A timer of the virtual clock. */
export interface Timer {
  id: number;
  due: number;
  seq: number;
  callback: () => unknown;
  /** Set by `clearTimeout`: the heap drops it when it surfaces (cheaper than removing it in place). */
  cancelled: boolean;
}

const before = (a: Timer, b: Timer): boolean => a.due < b.due || (a.due === b.due && a.seq < b.seq);

/** A binary min-heap of timers by (due, seq): O(log n) per timer, so 10 000 pending retries stay cheap. */
export function createTimerHeap() {
  const heap: Timer[] = [];

  function up(index: number): void {
    let i = index;
    const timer = heap[i]!;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!before(timer, heap[parent]!)) break;
      heap[i] = heap[parent]!;
      i = parent;
    }
    heap[i] = timer;
  }

  function down(index: number): void {
    let i = index;
    for (;;) {
      const left = 2 * i + 1;
      const right = left + 1;
      let smallest = i;
      if (left < heap.length && before(heap[left]!, heap[smallest]!)) smallest = left;
      if (right < heap.length && before(heap[right]!, heap[smallest]!)) smallest = right;
      if (smallest === i) return;
      const swap = heap[i]!;
      heap[i] = heap[smallest]!;
      heap[smallest] = swap;
      i = smallest;
    }
  }

  return {
    push(timer: Timer): void {
      heap.push(timer);
      up(heap.length - 1);
    },
    peek: (): Timer | undefined => heap[0],
    pop(): Timer | undefined {
      const top = heap[0];
      const last = heap.pop();
      if (heap.length > 0 && last) {
        heap[0] = last;
        down(0);
      }
      return top;
    },
  };
}
