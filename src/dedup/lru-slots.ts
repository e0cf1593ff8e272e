/**
 * Numbered slots for at most `maxKeys` string keys, found by key and kept in least-recently-used order;
 * the memory store keeps each slot's state in its own arrays. All of it is a few flat arrays that
 * double as keys arrive (up to maxKeys), not an object or Map entry per key:
 *
 * - an open-addressing hash table (linear probing, at most half full) holds slot numbers, and `hashes`
 *   each slot's hash, so probing rarely reads a key string and evicting never does;
 * - `prev`/`next` chain the slots in recency order through slot 0 (next[0] is the least recently used,
 *   prev[0] the most recent), so a touch relinks two neighbours instead of re-inserting anything;
 * - freed slots are chained through `next` from `free` and reused first.
 */

// Slot arrays are allocated for this many keys at first (or maxKeys if smaller), then doubled.
const INITIAL_SLOTS = 256;

/**
 * The slots of {@link createLruSlots}. Slot numbers run from 1 to maxKeys; 0 means none.
 *
 * @example
 * ```ts
 * const slots: LruSlots = createLruSlots(100_000);
 * ```
 */
export interface LruSlots {
  /** Keys held. */
  readonly size: number;
  /** The slot holding `key`, or 0. */
  find(key: string): number;
  /** Puts `key` (not held) in a slot as the most recent; when full, evicts the least recent key first. */
  add(key: string): number;
  /** Makes `slot` the most recently used. */
  touch(slot: number): void;
  /** Forgets the key in `slot` and frees the slot. */
  remove(slot: number): void;
  /** The least recently used slot, or 0 when empty. */
  oldest(): number;
  /** The slot used next after `slot`, or 0 after the most recent. */
  newer(slot: number): number;
  /** Forgets every key and goes back to the first allocation. */
  clear(): void;
}

/**
 * Creates empty {@link LruSlots} for at most `maxKeys` keys.
 *
 * @example
 * ```ts
 * const slots = createLruSlots(2);
 * slots.add('a');
 * slots.add('b');
 * slots.add('c'); // evicts 'a', the least recently used, and reuses its slot
 * slots.find('a'); // 0
 * ```
 */
export function createLruSlots(maxKeys: number): LruSlots {
  // Per store, so which keys share a probe run differs between stores and processes. Drawn at the
  // first key, not here: Workers refuse random values in global scope, where receivers (and their
  // memory store) are commonly created.
  let seed: number | undefined;
  let capacity = 0; // slots allocated, up to maxKeys
  let mask = 0; // table length - 1, a power of two
  let table = new Uint32Array(0); // slot numbers; 0 is an empty position
  let [hashes, prev, next] = [table, table, table];
  let keys: (string | undefined)[] = [];
  let top = 0; // slots 1..top have been handed out
  let free = 0;
  let size = 0;
  // claim() finds then adds the same key, and complete() finds it again: hash it once.
  let lastKey: string | undefined;
  let lastHash = 0;

  function hashOf(key: string): number {
    if (key === lastKey) return lastHash;
    seed ??= globalThis.crypto.getRandomValues(new Uint32Array(1))[0]!;
    let h = seed ^ key.length;
    for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 0x01000193); // FNV-1a
    h = Math.imul(h ^ (h >>> 16), 0x85ebca6b); // the table position is the low bits: mix the high ones in
    lastKey = key;
    lastHash = (h ^ (h >>> 13)) >>> 0;
    return lastHash;
  }

  function place(slot: number): void {
    let i = hashes[slot]! & mask;
    while (table[i] !== 0) i = (i + 1) & mask;
    table[i] = slot;
  }

  function unplace(slot: number): void {
    let hole = hashes[slot]! & mask;
    while (table[hole] !== slot) hole = (hole + 1) & mask;
    // Backward-shift deletion, so no tombstones pile up: a later entry of the probe run moves into the
    // hole when the hole lies between its home position (hash & mask) and where it sits.
    for (let i = (hole + 1) & mask; table[i] !== 0; i = (i + 1) & mask) {
      const other = table[i]!;
      if (((i - hashes[other]!) & mask) >= ((i - hole) & mask)) {
        table[hole] = other;
        hole = i;
      }
    }
    table[hole] = 0;
  }

  function unlink(slot: number): void {
    const before = prev[slot]!;
    const after = next[slot]!;
    next[before] = after;
    prev[after] = before;
  }

  function linkNewest(slot: number): void {
    const newest = prev[0]!;
    prev[slot] = newest;
    next[slot] = 0;
    next[newest] = slot;
    prev[0] = slot;
  }

  /** Allocates room for `slots` slots, keeping the current contents. */
  function allocate(slots: number): void {
    capacity = slots;
    const wider = (from: Uint32Array) => {
      const to = new Uint32Array(slots + 1);
      to.set(from);
      return to;
    };
    [hashes, prev, next] = [wider(hashes), wider(prev), wider(next)];
    keys = keys.concat(new Array(slots + 1 - keys.length).fill(undefined)); // exact length, no slack
    const length = 2 ** Math.ceil(Math.log2(slots * 2)); // at most half full
    if (length === table.length) return;
    mask = length - 1;
    table = new Uint32Array(length);
    for (let slot = next[0]!; slot !== 0; slot = next[slot]!) place(slot);
  }

  function clear(): void {
    table = new Uint32Array(0);
    [hashes, prev, next, keys] = [table, table, table, []];
    [top, free, size, lastKey] = [0, 0, 0, undefined];
    allocate(Math.min(maxKeys, INITIAL_SLOTS));
  }

  clear();
  return {
    get size() {
      return size;
    },
    find(key) {
      const h = hashOf(key);
      for (let i = h & mask; ; i = (i + 1) & mask) {
        const slot = table[i]!;
        if (slot === 0 || (hashes[slot] === h && keys[slot] === key)) return slot;
      }
    },
    add(key) {
      let slot = free;
      if (slot !== 0) {
        free = next[slot]!;
      } else if (top < maxKeys) {
        if (top === capacity) allocate(Math.min(maxKeys, capacity * 2));
        slot = ++top;
      } else {
        slot = next[0]!; // full: evict the least recently used key and reuse its slot
        unplace(slot);
        unlink(slot);
        size--;
      }
      hashes[slot] = hashOf(key);
      keys[slot] = key;
      place(slot);
      linkNewest(slot);
      size++;
      return slot;
    },
    touch(slot) {
      if (prev[0] === slot) return;
      unlink(slot);
      linkNewest(slot);
    },
    remove(slot) {
      unplace(slot);
      unlink(slot);
      keys[slot] = undefined; // let the string be collected
      next[slot] = free;
      free = slot;
      size--;
    },
    oldest: () => next[0]!,
    newer: (slot) => next[slot]!,
    clear,
  };
}
