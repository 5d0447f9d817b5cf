/**
 * "Did you mean": the closest of a set of known names to a misspelt one (config keys,
 * flags, plugin ids, commands).
 *
 * @module
 */

/** Edit distance between two strings (Levenshtein, unit costs). */
export function editDistance(a: string, b: string): number {
  const prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let diag = i - 1; // prev[0] of the row before
    prev[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const up = prev[j] ?? Infinity;
      const left = prev[j - 1] ?? Infinity;
      prev[j] = Math.min(up + 1, left + 1, diag + (a[i - 1] === b[j - 1] ? 0 : 1));
      diag = up;
    }
  }
  return prev[b.length] ?? a.length;
}

/** The closest candidate to `word`, or null when none is close enough to be a typo. */
export function closest(word: string, candidates: Iterable<string>): string | null {
  let best: string | null = null;
  let bestScore = Infinity;
  const w = word.toLowerCase();
  for (const c of candidates) {
    const lc = c.toLowerCase();
    const d = editDistance(w, lc);
    if (d < bestScore) {
      best = c;
      bestScore = d;
    }
  }
  if (best === null) return null;
  const limit = Math.max(2, Math.floor(Math.max(word.length, 4) / 3));
  return bestScore <= limit ? best : null;
}
