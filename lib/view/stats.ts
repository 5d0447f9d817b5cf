/**
 * Statistics of a run's rewards: mean with a 95% confidence interval (Wilson's interval
 * when every reward is 0 or 1, Student's t otherwise), histogram bins and the unbiased
 * pass@k estimator (`1 - C(n-c, k) / C(n, k)`, as in Chen et al. 2021).
 *
 * @module
 */

/** A mean and its 95% confidence interval. */
export interface MeanCi {
  n: number;
  mean: number | null;
  low: number | null;
  high: number | null;
  /** `wilson` for 0/1 rewards, `t` otherwise, null when n = 0. */
  method: "wilson" | "t" | null;
}

/** Two-sided 97.5% quantiles of Student's t for 1..30 degrees of freedom. */
const T975 = [
  12.706,
  4.303,
  3.182,
  2.776,
  2.571,
  2.447,
  2.365,
  2.306,
  2.262,
  2.228,
  2.201,
  2.179,
  2.16,
  2.145,
  2.131,
  2.12,
  2.11,
  2.101,
  2.093,
  2.086,
  2.08,
  2.074,
  2.069,
  2.064,
  2.06,
  2.056,
  2.052,
  2.048,
  2.045,
  2.042,
];
const Z975 = 1.959964;

/** True when every value is exactly 0 or 1 (and there is at least one). */
export function isBinary(values: readonly number[]): boolean {
  return values.length > 0 && values.every((v) => v === 0 || v === 1);
}

/** Mean of `values` with its 95% confidence interval. */
export function meanCi(values: readonly number[]): MeanCi {
  const n = values.length;
  if (n === 0) return { n, mean: null, low: null, high: null, method: null };
  let sum = 0;
  for (const v of values) sum += v;
  const mean = sum / n;
  if (isBinary(values)) {
    const z2 = Z975 * Z975;
    const center = (mean + z2 / (2 * n)) / (1 + z2 / n);
    const half = (Z975 / (1 + z2 / n)) * Math.sqrt((mean * (1 - mean)) / n + z2 / (4 * n * n));
    return {
      n,
      mean,
      low: Math.max(0, center - half),
      high: Math.min(1, center + half),
      method: "wilson",
    };
  }
  if (n === 1) return { n, mean, low: null, high: null, method: "t" };
  let ss = 0;
  for (const v of values) ss += (v - mean) ** 2;
  const se = Math.sqrt(ss / (n - 1) / n);
  const t = T975[n - 2] ?? Z975; // the table covers 1..T975.length degrees of freedom
  return { n, mean, low: mean - t * se, high: mean + t * se, method: "t" };
}

/** One histogram bin: `[lo, hi)` (the last bin includes `hi`). */
export interface Bin {
  lo: number;
  hi: number;
  count: number;
}

/**
 * Histogram of `values`: one bin per distinct value when there are at most `maxBins`
 * of them (0/1 rewards give two bars), else `maxBins` equal-width bins over the range.
 */
export function histogram(values: readonly number[], maxBins = 10): Bin[] {
  if (values.length === 0) return [];
  const counts = new Map<number, number>();
  for (const v of values) {
    counts.set(v, (counts.get(v) ?? 0) + 1);
    if (counts.size > maxBins) break;
  }
  if (counts.size <= maxBins) {
    return [...counts.entries()].sort((a, b) => a[0] - b[0]).map(([v, count]) => ({
      lo: v,
      hi: v,
      count,
    }));
  }
  let min = Infinity;
  let max = -Infinity;
  for (const v of values) {
    if (v < min) min = v;
    if (v > max) max = v;
  }
  const width = (max - min) / maxBins;
  const bins: Bin[] = Array.from({ length: maxBins }, (_, i) => ({
    lo: min + i * width,
    hi: i === maxBins - 1 ? max : min + (i + 1) * width,
    count: 0,
  }));
  for (const v of values) {
    const bin = bins[Math.min(maxBins - 1, Math.floor((v - min) / width))];
    if (bin) bin.count++;
  }
  return bins;
}

/** Unbiased pass@k for `n` samples of which `c` passed (null when k > n). */
export function passAtK(n: number, c: number, k: number): number | null {
  if (k > n || k < 1) return null;
  if (n - c < k) return 1;
  let fail = 1;
  for (let i = n - c + 1; i <= n; i++) fail *= 1 - k / i;
  return 1 - fail;
}
