/**
 * A small runner for test files written with `node:test` (`describe`, `it`/`test`,
 * `before`, `after`, `beforeEach`, `afterEach`; `{ skip, todo, timeout }` options), for
 * `vf run` where no test runner exists: inside the single-file binary. Tests are
 * collected while the file loads, then run in order, one at a time; each line of the
 * report is `ok` or `not ok` with the test's full name, failures with their error.
 *
 * @module
 */

/** Options a test or suite may take. */
export interface TestOptions {
  skip?: boolean | string;
  todo?: boolean | string;
  timeout?: number;
}

type Fn = () => unknown | Promise<unknown>;

interface Suite {
  name: string;
  children: (Suite | Case)[];
  before: Fn[];
  after: Fn[];
  beforeEach: Fn[];
  afterEach: Fn[];
  skip: boolean;
}

interface Case {
  name: string;
  fn: Fn;
  skip: boolean;
  timeout: number;
}

const root: Suite = newSuite("", false);
let current: Suite = root;

function newSuite(name: string, skip: boolean): Suite {
  return { name, children: [], before: [], after: [], beforeEach: [], afterEach: [], skip };
}

function split(a: unknown, b: unknown): { options: TestOptions; fn: Fn | undefined } {
  if (typeof a === "function") return { options: {}, fn: a as Fn };
  return { options: (a ?? {}) as TestOptions, fn: b as Fn | undefined };
}

/** Declares a suite; its body runs at once to collect the tests inside. */
export function describe(name: string, a?: unknown, b?: unknown): void {
  const { options, fn } = split(a, b);
  const suite = newSuite(name, Boolean(options.skip || options.todo) || current.skip);
  current.children.push(suite);
  const parent = current;
  current = suite;
  try {
    const r = fn?.();
    if (r && typeof (r as Promise<unknown>).then === "function") {
      throw new Error(`describe("${name}") must not be async`);
    }
  } finally {
    current = parent;
  }
}

/** Declares a test. */
export function it(name: string, a?: unknown, b?: unknown): void {
  const { options, fn } = split(a, b);
  current.children.push({
    name,
    fn: fn ?? (() => {}),
    skip: Boolean(options.skip || options.todo) || current.skip || !fn,
    timeout: options.timeout ?? 0,
  });
}

/** `test` is `it`. */
export const test: typeof it = it;
/** Runs once before the suite's tests. */
export const before = (fn: Fn): void => void current.before.push(fn);
/** Runs once after the suite's tests. */
export const after = (fn: Fn): void => void current.after.push(fn);
/** Runs before each test of the suite (and of nested suites). */
export const beforeEach = (fn: Fn): void => void current.beforeEach.push(fn);
/** Runs after each test of the suite (and of nested suites). */
export const afterEach = (fn: Fn): void => void current.afterEach.push(fn);

async function withTimeout(fn: Fn, ms: number): Promise<void> {
  if (!ms) return void await fn();
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    await Promise.race([
      fn(),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** Counts of a finished run. */
export interface TestReport {
  passed: number;
  failed: number;
  skipped: number;
}

/**
 * Runs every collected test, writing one line per test to `write`; returns the counts.
 * Collected tests are forgotten afterwards.
 */
export async function runCollected(write: (line: string) => void): Promise<TestReport> {
  const report: TestReport = { passed: 0, failed: 0, skipped: 0 };
  const describeError = (e: unknown) => e instanceof Error ? (e.stack ?? e.message) : String(e);
  async function run(suite: Suite, path: string[], eachBefore: Fn[], eachAfter: Fn[]) {
    const names = suite.name ? [...path, suite.name] : path;
    const bef = [...eachBefore, ...suite.beforeEach];
    const aft = [...suite.afterEach, ...eachAfter];
    try {
      if (!suite.skip) { for (const f of suite.before) await f(); }
    } catch (e) {
      report.failed++;
      write(`not ok - ${names.join(" > ")} (before): ${describeError(e)}`);
      return;
    }
    for (const child of suite.children) {
      if ("children" in child) {
        await run(child, names, bef, aft);
        continue;
      }
      const full = [...names, child.name].join(" > ");
      if (child.skip) {
        report.skipped++;
        write(`ok - ${full} # skip`);
        continue;
      }
      try {
        for (const f of bef) await f();
        await withTimeout(child.fn, child.timeout);
        for (const f of aft) await f();
        report.passed++;
        write(`ok - ${full}`);
      } catch (e) {
        report.failed++;
        write(`not ok - ${full}\n  ${describeError(e).replaceAll("\n", "\n  ")}`);
      }
    }
    if (!suite.skip) {
      for (const f of suite.after) {
        try {
          await f();
        } catch (e) {
          report.failed++;
          write(`not ok - ${names.join(" > ")} (after): ${describeError(e)}`);
        }
      }
    }
  }
  const collected = { ...root, children: [...root.children] };
  root.children.length = 0;
  root.before.length =
    root.after.length =
    root.beforeEach.length =
    root.afterEach.length =
      0;
  await run(collected, [], [], []);
  return report;
}

/** True when any test was collected (the script was a test file). */
export function hasCollected(): boolean {
  return root.children.length > 0;
}
