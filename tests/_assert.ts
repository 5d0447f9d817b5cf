/**
 * Reading what a test expects to be there: an item of an array, a defined value. Each fails
 * the test with a message that says what was missing, instead of a TypeError further on.
 *
 * @module
 */
import assert from "node:assert/strict";

/** The item at `index` (negative counts from the end); fails the test when there is none. */
export function at<T>(items: readonly T[], index: number): T {
  const item = items.at(index);
  assert.ok(item !== undefined, `no item at index ${index}: the array has ${items.length}`);
  return item;
}

/** `value` when it is defined; fails the test, naming `what`, when it is undefined. */
export function defined<T>(value: T | undefined, what = "value"): T {
  assert.ok(value !== undefined, `${what} is undefined`);
  return value;
}
