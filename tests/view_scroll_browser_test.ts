/**
 * `vf view` of a large run in a real browser (headless Chromium driven by playwright-core),
 * used as a user uses it: every virtualized table — a run's 2,500 tasks, the episodes of one
 * error type, a task's 301 rollouts, the comparison of two 2,500-task runs — is scrolled with
 * the mouse wheel to its last row, every row is seen on the way, and the last task and its
 * last episode are opened and read, in the served page and in the `--out` report file. Any console error, uncaught error or
 * Content-Security-Policy violation in the page fails the test.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import type { ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { browserMissing, launchBrowser, type TestBrowser } from "./_browser.ts";
import { fakeEpisode, mixedEpisodes, writeRunDir } from "./_view_runs.ts";
import { runCli } from "./_cli.ts";
import { startViewer } from "./_viewer.ts";

const TASKS = 2_500;
const ROLLOUTS = 4;
const missing = browserMissing();
if (missing) console.warn(`view_scroll_browser_test: ${missing}`);

/** A table's scrolling region (the element the wheel scrolls). */
const scrollerOf = (page: Page, tableId: string) =>
  page.locator(".scroller", { has: page.locator(`#${tableId}`) });

/**
 * Wheels the table's scroller by `screens` of its own height at a time (down, or up when
 * negative) until it moves no further, and returns every row that was in the DOM on the way,
 * by aria-rowindex (2 = first body row). At one screen a step the overscan rows above and
 * below the view make the steps overlap, so every row is seen.
 */
async function wheelThrough(
  page: Page,
  tableId: string,
  screens = 1,
): Promise<Map<number, string>> {
  const scroller = scrollerOf(page, tableId);
  await scroller.scrollIntoViewIfNeeded();
  const box = await scroller.boundingBox();
  assert.ok(box, `#${tableId}'s scroller is on screen`);
  await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
  const look = () =>
    scroller.evaluate((el) => ({
      top: el.scrollTop,
      rows: [...el.querySelectorAll("tbody tr:not(.spacer)")].map((tr) =>
        [
          Number(tr.getAttribute("aria-rowindex")),
          [...tr.children].map((cell) => cell.textContent?.trim()).join("\t"),
        ] as const
      ),
    }));
  const seen = new Map<number, string>();
  let still = 0;
  for (let last = -1; still < 3;) {
    const { top, rows } = await look();
    for (const [i, text] of rows) seen.set(i, text);
    still = top === last ? still + 1 : 0;
    last = top;
    await page.mouse.wheel(0, Math.floor(screens * box.height));
    await page.waitForTimeout(20);
  }
  return seen;
}

/**
 * Wheels the table to its end, one screen a step, and checks that rows 2..count+1 were all
 * seen (with `fast`, ten screens a step, and only the last row is looked at); returns the last
 * row's text and the rows seen.
 */
async function scrollAll(
  page: Page,
  problems: string[],
  tableId: string,
  count: number,
  fast = false,
): Promise<{ last: string; seen: Map<number, string> }> {
  const table = page.locator(`#${tableId}`);
  assert.equal(await table.getAttribute("aria-rowcount"), String(count + 1));
  const top = await gapAt(page, tableId, "first", count);
  assert.ok(top !== null && Math.abs(top) <= 1.5, `first row ${top} px below the header`);
  const seen = await wheelThrough(page, tableId, fast ? 10 : 1);
  assert.deepEqual(problems, [], "no console error or CSP violation while scrolling");
  const unseen = Array.from({ length: count }, (_, i) => i + 2).filter((i) => !seen.has(i));
  assert.deepEqual(
    fast ? unseen.filter((i) => i === count + 1) : unseen.slice(0, 5),
    [],
    `${unseen.length} of ${count} rows of #${tableId} never came into the DOM while scrolling`,
  );
  // Still virtual: a window of rows in the DOM, not all of them.
  const inDom = await page.locator(`#${tableId} tbody tr:not(.spacer)`).count();
  assert.ok(inDom > 5 && inDom < 120, `${inDom} rows of #${tableId} in the DOM`);
  // The last row is in view, on the bottom edge: no blank space after it.
  const bottom = await gapAt(page, tableId, "last", count);
  assert.ok(bottom !== null && Math.abs(bottom) <= 1.5, `${bottom} px below the last row`);
  const lastRow = page.locator(`#${tableId} tbody tr[aria-rowindex="${count + 1}"]`);
  return { last: await lastRow.innerText(), seen };
}

/**
 * Pixels between a row and where it belongs: the first row just under the sticky header
 * (at the top), the last one on the scroller's bottom edge (at the end). Null: not in the DOM.
 */
function gapAt(page: Page, tableId: string, row: "first" | "last", count: number) {
  return scrollerOf(page, tableId).evaluate((el, [row, count]) => {
    const index = row === "first" ? 2 : count + 1;
    const tr = el.querySelector(`tbody tr[aria-rowindex="${index}"]`);
    const head = el.querySelector("thead");
    if (!tr || !head) return null;
    const r = tr.getBoundingClientRect();
    return row === "first"
      ? r.top - head.getBoundingClientRect().bottom
      : el.getBoundingClientRect().top + el.clientTop + el.clientHeight - r.bottom;
  }, [row, count] as const);
}

/** The task name in a row's text. */
const firstCell = (row: string) => row.split("\t")[0];
/** Every task name of the large runs. */
const allTasks = () => new Set(Array.from({ length: TASKS }, (_, t) => `task-${t}`));

describe("vf view of a large run in a browser", { skip: missing ?? false }, () => {
  let tmp: string;
  let viewer: { url: string; child: ChildProcess };
  let browser: TestBrowser;
  let page: Page;
  let errorCount: number;
  let runA: string;

  before(async () => {
    tmp = mkdtempSync(join(tmpdir(), "vf-view-scroll-"));
    const a = mixedEpisodes(TASKS * ROLLOUTS, TASKS);
    errorCount = a.filter((e) => e.errors[0]?.type === "ProviderError").length;
    runA = writeRunDir(join(tmp, "large-a"), a);
    // B: one rollout of each task, and 300 more of task 7 (a task list long enough to virtualize).
    const runB = writeRunDir(join(tmp, "large-b"), [
      ...Array.from({ length: TASKS }, (_, t) => fakeEpisode({ task: t, reward: t % 2 })),
      ...Array.from({ length: 300 }, (_, i) => fakeEpisode({ task: 7, reward: i % 2 })),
    ]);
    viewer = await startViewer([runA, runB]);
    browser = await launchBrowser();
    page = await browser.context.newPage();
  });

  after(async () => {
    await browser?.close();
    viewer?.child.kill("SIGTERM");
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  });

  it("scrolls the 2,500-task table to its end, every row on the way", async () => {
    await page.goto(`${viewer.url}#run=0`);
    await page.locator("#tasks-0 tbody tr:not(.spacer)").first().waitFor();
    const { seen } = await scrollAll(page, browser.problems, "tasks-0", TASKS);
    assert.deepEqual(new Set([...seen.values()].map(firstCell)), allTasks());
    assert.deepEqual(browser.problems, []);
  });

  it("sorts the 2,500 tasks by name, scrolls to the last and opens its last episode", async () => {
    // Back up, sort by name: the last row is the last task.
    await wheelThrough(page, "tasks-0", -10);
    await page.getByRole("button", { name: "Task", exact: true }).click();
    const { last } = await scrollAll(page, browser.problems, "tasks-0", TASKS, true);
    assert.match(last, new RegExp(`^task-${TASKS - 1}\\t${ROLLOUTS}\\t`));
    await page.locator(`#tasks-0 tbody tr[aria-rowindex="${TASKS + 1}"] a`).click();
    await page.locator("h2", { hasText: `Task task-${TASKS - 1}` }).waitFor();
    const episodes = page.locator("#task-0 tbody a", { hasText: /^#\d+$/ });
    assert.equal(await episodes.count(), ROLLOUTS);
    const lastEpisode = await episodes.last().innerText();
    // mixedEpisodes puts episode i on task i % TASKS: the last rollout of the last task is last.
    assert.equal(lastEpisode, `#${TASKS * ROLLOUTS}`);
    await episodes.last().click();
    await page.locator(".conversation").waitFor();
    const body = await page.locator("main").innerText();
    assert.match(body, new RegExp(`Episode ${lastEpisode}`));
    const n = TASKS - 1;
    assert.match(body, new RegExp(`Task ${n}: print the number ${n} squared\\.`));
    assert.match(body, new RegExp(`The answer is ${n * n}\\.`));
    assert.deepEqual(browser.problems, []);
  });

  it("scrolls the episodes of one error type to the last and opens it", async () => {
    await page.goto(`${viewer.url}#run=0`);
    await page.getByRole("link", { name: "ProviderError" }).click();
    await page.locator("#error-0 tbody tr:not(.spacer)").first().waitFor();
    assert.ok(errorCount > 200, `${errorCount} episodes are enough to virtualize`);
    const { last } = await scrollAll(page, browser.problems, "error-0", errorCount);
    assert.match(last, /ProviderError/);
    const link = page.locator(`#error-0 tbody tr[aria-rowindex="${errorCount + 1}"] a`).first();
    const name = await link.innerText();
    await link.click();
    await page.locator(".trace .error-list").waitFor();
    assert.match(await page.locator("main h2").innerText(), new RegExp(`Episode ${name}\\s*error`));
    assert.match(await page.locator(".trace .error-list").innerText(), /ProviderError in episode/);
    assert.deepEqual(browser.problems, []);
  });

  it("scrolls a task's 301 rollouts to the last and opens it", async () => {
    await page.goto(`${viewer.url}#run=1`);
    // The most rollouts first: task 7 leads.
    await page.getByRole("button", { name: "Rollouts", exact: true }).click();
    await page.locator("#tasks-1 tbody tr:not(.spacer) a").first().click();
    await page.locator("#task-1 tbody tr:not(.spacer)").first().waitFor();
    const { last } = await scrollAll(page, browser.problems, "task-1", 301);
    // Episodes are listed in run order; task 7's last one is the run's last line.
    assert.match(last, new RegExp(`^#${TASKS + 300}\\ttask-7\\t`));
    await page.locator(`#task-1 tbody tr[aria-rowindex="302"] a`).first().click();
    await page.locator(".conversation").waitFor();
    const body = await page.locator("main").innerText();
    assert.match(body, new RegExp(`Episode #${TASKS + 300}`));
    assert.match(body, /The answer is 49\./);
    assert.deepEqual(browser.problems, []);
  });

  it("scrolls the comparison of two 2,500-task runs to its end", async () => {
    await page.goto(`${viewer.url}#compare=0,1`);
    await page.locator("#compare-0-1 tbody tr:not(.spacer)").first().waitFor();
    const { last, seen } = await scrollAll(page, browser.problems, "compare-0-1", TASKS);
    assert.match(last, /\t(improved|regressed|same)$/);
    assert.deepEqual(new Set([...seen.values()].map(firstCell)), allTasks());
    assert.deepEqual(browser.problems, []);
  });

  it("scrolls the self-contained report of the large run to its last task and episode", async () => {
    const out = join(tmp, "report.html");
    const res = await runCli(["view", "--out", out, runA], { timeoutMs: 120_000 });
    assert.equal(res.code, 0, res.stderr);
    const filePage = await browser.context.newPage();
    await filePage.goto(`file://${out}`);
    await filePage.locator("#tasks-0 tbody tr:not(.spacer)").first().waitFor();
    await filePage.getByRole("button", { name: "Task", exact: true }).click();
    const { last } = await scrollAll(filePage, browser.problems, "tasks-0", TASKS, true);
    assert.match(last, new RegExp(`^task-${TASKS - 1}\\t`));
    await filePage.locator(`#tasks-0 tbody tr[aria-rowindex="${TASKS + 1}"] a`).click();
    await filePage.locator("#task-0 tbody a", { hasText: /^#\d+$/ }).last().click();
    await filePage.locator(".conversation").waitFor();
    assert.match(
      await filePage.locator("main").innerText(),
      new RegExp(`The answer is ${(TASKS - 1) ** 2}\\.`),
    );
    assert.deepEqual(browser.problems, []);
    await filePage.close();
  });
});
