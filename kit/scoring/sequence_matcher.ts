/**
 * A port of CPython's `difflib.SequenceMatcher(None, a, b)` matching algorithm (no junk
 * function; `autojunk` on): `ratio()` gives the same float as Python for the same strings.
 * Strings are compared by Unicode code point, as Python iterates them.
 *
 * @module
 */

/** A matching block: `a[a..a+size] == b[b..b+size]`. */
export interface Match {
  a: number;
  b: number;
  size: number;
}

/** Options of {@link SequenceMatcher}. */
export interface SequenceMatcherOptions {
  /**
   * Treat elements of `b` occurring more than `floor(len(b) / 100) + 1` times as junk when
   * `len(b) >= 200` ("popular" elements), as Python does.
   * @default true
   */
  autojunk?: boolean;
}

/** Python's `SequenceMatcher(None, a, b, autojunk)` over two strings or arrays. */
export class SequenceMatcher<T = string> {
  readonly a: readonly T[];
  readonly b: readonly T[];
  #b2j: Map<T, number[]>;
  #blocks: Match[] | null = null;

  constructor(
    a: string | readonly T[],
    b: string | readonly T[],
    options: SequenceMatcherOptions = {},
  ) {
    this.a = (typeof a === "string" ? Array.from(a) : a) as readonly T[];
    this.b = (typeof b === "string" ? Array.from(b) : b) as readonly T[];
    const b2j = new Map<T, number[]>();
    this.b.forEach((elt, i) => {
      const list = b2j.get(elt);
      if (list) list.push(i);
      else b2j.set(elt, [i]);
    });
    const n = this.b.length;
    if ((options.autojunk ?? true) && n >= 200) {
      const ntest = Math.floor(n / 100) + 1;
      for (const [elt, idxs] of [...b2j]) if (idxs.length > ntest) b2j.delete(elt);
    }
    this.#b2j = b2j;
  }

  /**
   * Longest matching block in `a[alo:ahi]` and `b[blo:bhi]`, earliest in `a`, then in `b`
   * (`size` 0 at `(alo, blo)` when nothing matches).
   */
  findLongestMatch(alo: number, ahi: number, blo: number, bhi: number): Match {
    const { a, b } = this;
    let besti = alo;
    let bestj = blo;
    let bestsize = 0;
    let j2len = new Map<number, number>();
    for (let i = alo; i < ahi; i++) {
      const newj2len = new Map<number, number>();
      // i < ahi <= a.length: a[i] exists
      for (const j of this.#b2j.get(a[i] as T) ?? []) {
        if (j < blo) continue;
        if (j >= bhi) break;
        const k = (j2len.get(j - 1) ?? 0) + 1;
        newj2len.set(j, k);
        if (k > bestsize) {
          besti = i - k + 1;
          bestj = j - k + 1;
          bestsize = k;
        }
      }
      j2len = newj2len;
    }
    // No junk function: only "popular" elements were removed, and they extend the block.
    while (besti > alo && bestj > blo && a[besti - 1] === b[bestj - 1]) {
      besti--;
      bestj--;
      bestsize++;
    }
    while (
      besti + bestsize < ahi && bestj + bestsize < bhi &&
      a[besti + bestsize] === b[bestj + bestsize]
    ) {
      bestsize++;
    }
    return { a: besti, b: bestj, size: bestsize };
  }

  /** The non-overlapping matching blocks in order (without Python's final sentinel). */
  getMatchingBlocks(): Match[] {
    if (this.#blocks) return this.#blocks;
    const queue: [number, number, number, number][] = [[0, this.a.length, 0, this.b.length]];
    const found: Match[] = [];
    while (queue.length > 0) {
      const [alo, ahi, blo, bhi] = queue.pop()!;
      const m = this.findLongestMatch(alo, ahi, blo, bhi);
      if (m.size === 0) continue;
      found.push(m);
      if (alo < m.a && blo < m.b) queue.push([alo, m.a, blo, m.b]);
      if (m.a + m.size < ahi && m.b + m.size < bhi) {
        queue.push([m.a + m.size, ahi, m.b + m.size, bhi]);
      }
    }
    found.sort((x, y) => x.a - y.a || x.b - y.b);
    const merged: Match[] = [];
    for (const m of found) {
      const last = merged[merged.length - 1];
      if (last && last.a + last.size === m.a && last.b + last.size === m.b) last.size += m.size;
      else merged.push({ ...m });
    }
    this.#blocks = merged;
    return merged;
  }

  /** `2 × matches / (len(a) + len(b))`, 1 when both are empty. */
  ratio(): number {
    const total = this.a.length + this.b.length;
    if (total === 0) return 1;
    const matches = this.getMatchingBlocks().reduce((sum, m) => sum + m.size, 0);
    return (2 * matches) / total;
  }
}

/** `difflib.SequenceMatcher(None, a, b).ratio()`. */
export function sequenceRatio(a: string, b: string): number {
  return new SequenceMatcher(a, b).ratio();
}
