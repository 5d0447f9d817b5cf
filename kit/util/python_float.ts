/**
 * Python's float `repr`, which task hashes and trace JSON both write.
 *
 * @module
 */

/** Python `repr(float)` for a finite number (shortest round-trip digits). */
export function pythonFloatRepr(x: number): string {
  if (Number.isNaN(x)) return "NaN";
  if (x === Infinity) return "Infinity";
  if (x === -Infinity) return "-Infinity";
  if (x === 0) return Object.is(x, -0) ? "-0.0" : "0.0";
  const sign = x < 0 ? "-" : "";
  // toExponential() without an argument gives the shortest digits that round-trip.
  const [mantissa = "", exp] = Math.abs(x).toExponential().split("e");

  const digits = mantissa.replace(".", "");
  const decpt = Number(exp) + 1; // value = 0.<digits> × 10^decpt
  if (decpt <= -4 || decpt > 16) {
    const e = decpt - 1;
    const m = digits.length === 1 ? digits : digits[0] + "." + digits.slice(1);
    const ed = String(Math.abs(e)).padStart(2, "0");
    return `${sign}${m}e${e < 0 ? "-" : "+"}${ed}`;
  }
  if (decpt <= 0) return `${sign}0.${"0".repeat(-decpt)}${digits}`;
  if (decpt >= digits.length) return `${sign}${digits}${"0".repeat(decpt - digits.length)}.0`;
  return `${sign}${digits.slice(0, decpt)}.${digits.slice(decpt)}`;
}
