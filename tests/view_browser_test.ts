/**
 * `vf view` in a real browser (headless Chromium driven by playwright-core): the page of a
 * real demo run and of a real run whose every episode errored, a click into a trace and
 * along its links, the task table filtered and sorted, a virtualized 2,000-task table, a
 * run in Python's record shape, the comparison of two runs, a run that grows while the page
 * is open, and the self-contained `--out` report. Screenshots go to docs/images/. Every
 * request the page makes must stay on 127.0.0.1 (or the file itself), and no page may log a
 * console error or violate its Content-Security-Policy. Scrolling large tables to their end:
 * view_scroll_browser_test.ts.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import type { ChildProcess } from "node:child_process";
import { appendFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import type { Page } from "playwright-core";
import { runCli } from "./_cli.ts";
import { rowTexts, startViewer } from "./_viewer.ts";
import { browserMissing, launchBrowser, type TestBrowser } from "./_browser.ts";
import { fakeEpisode, pythonEpisode, writeRunDir } from "./_view_runs.ts";
import { at } from "./_assert.ts";

const ROOT = join(import.meta.dirname!, "..");
/** Screenshots go to docs/images/ with VF_UPDATE_SCREENSHOTS=1 (they are committed), else to a temp dir. */
const UPDATE_IMAGES = process.env.VF_UPDATE_SCREENSHOTS === "1";
const missing = browserMissing();
if (missing) console.warn(`view_browser_test: ${missing}`);

function runDirOf(outputDir: string): string {
  const name = at(readdirSync(outputDir), 0);
  return join(outputDir, name);
}

/** axe-core's engine, injected into pages to check their accessibility. */
const AXE = readFileSync(join(ROOT, "node_modules", "axe-core", "axe.min.js"), "utf8");

/** axe-core's violations on the page as it is, as "rule (impact): help × nodes". */
async function axeViolations(page: Page): Promise<string[]> {
  await page.evaluate(AXE);
  return await page.evaluate<string[]>(
    `axe.run(document, { resultTypes: ["violations"] }).then((r) => r.violations.map((v) =>
      v.id + " (" + v.impact + "): " + v.help + " × " + v.nodes.length + " e.g. " + v.nodes[0].target.join(" ")))`,
  );
}

describe("vf view in a browser", { skip: missing ?? false }, () => {
  let tmp: string;
  let demo: string;
  let broken: string;
  let python: string;
  let big: string;
  let live: string;
  let viewer: { url: string; child: ChildProcess };
  let browser: TestBrowser;
  let page: Page;
  let IMAGES: string;
  const requests: string[] = [];

  before(async () => {
    tmp = mkdtempSync(join(tmpdir(), "vf-view-browser-"));
    IMAGES = UPDATE_IMAGES ? join(ROOT, "docs", "images") : join(tmp, "images");
    mkdirSync(IMAGES, { recursive: true });
    const ok = await runCli([
      "eval",
      "@",
      "examples/quickstart.toml",
      "--model",
      "oracle",
      "-o",
      join(tmp, "demo"),
      "--display",
      "none",
    ], { cwd: ROOT, timeoutMs: 120_000 });
    assert.equal(ok.code, 0, ok.stderr);
    demo = runDirOf(join(tmp, "demo"));
    // The same tasks with a model endpoint that refuses connections: every episode errors
    // (--fail-on-error 100: exit 0 although all of them did).
    const bad = await runCli([
      "eval",
      "@",
      "examples/quickstart.toml",
      "--model",
      "broken-model",
      "--client.base-url",
      "http://127.0.0.1:1/v1",
      "-o",
      join(tmp, "broken"),
      "--display",
      "none",
      "--fail-on-error",
      "100",
    ], { cwd: ROOT, timeoutMs: 120_000 });
    assert.equal(bad.code, 0, bad.stderr);
    broken = runDirOf(join(tmp, "broken"));
    python = writeRunDir(join(tmp, "python-run"), [pythonEpisode(1, 1), pythonEpisode(2, 0)], {
      config: {
        model: "py-model",
        env: {
          taskset: { id: "py-set" },
          agent: { harness: { id: "null" }, runtime: { type: "subprocess" } },
        },
      },
    });
    big = writeRunDir(
      join(tmp, "big-run"),
      Array.from({ length: 2000 }, (_, i) => fakeEpisode({ task: i, reward: i % 2 })),
    );
    live = writeRunDir(
      join(tmp, "live-run"),
      [0, 1, 2].map((t) => fakeEpisode({ task: t, reward: 1 })),
    );
    const golden = join(ROOT, "tests", "fixtures", "python_v1", "golden", "reverse-text");
    // Markup in a run's text must show as text and never run.
    const hostileEpisode = fakeEpisode({ task: 0, reward: 1 });
    const payload = `<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script>`;
    hostileEpisode.task.key = `"><svg onload="window.__pwned=3">`;
    hostileEpisode.task.data.name = payload;
    at(hostileEpisode.traces, 0).task = hostileEpisode.task;
    at(at(hostileEpisode.traces, 0).nodes, 1).message = { role: "user", content: payload };
    const hostile = writeRunDir(join(tmp, "hostile-run"), [hostileEpisode]);
    viewer = await startViewer([demo, broken, python, big, live, golden, hostile]);
    browser = await launchBrowser();
    page = await browser.context.newPage();
    page.on("request", (r) => requests.push(r.url()));
  });

  after(async () => {
    await browser?.close();
    viewer?.child.kill("SIGTERM");
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  });

  it("shows the demo run: header, reward with its interval, histogram, tasks", async () => {
    await page.goto(viewer.url);
    await page.locator("#tasks-0 tbody tr").first().waitFor();
    const header = await page.locator(".run-header").innerText();
    for (const word of ["shell-basics", "oracle", "bash", "subprocess", "completed"]) {
      assert.match(header, new RegExp(word));
    }
    assert.match(header, /Episodes\s*10/);
    assert.equal(await page.getByTestId("reward-mean").innerText(), "1");
    assert.match(
      await page.locator(".card").first().innerText(),
      /95% CI 0\.722 – 1 \(Wilson, n = 10\)/,
    );
    assert.match(await page.locator(".histogram svg").getAttribute("aria-label") ?? "", /1: 10/);
    assert.equal((await rowTexts(page, "tasks-0")).length, 10);
    assert.match(await page.locator(".errors").innerText(), /No errors/);
    await page.screenshot({ path: join(IMAGES, "view-run.png"), fullPage: true });
  });

  it("filters and sorts the task table", async () => {
    await page.fill("#tasks-0-filter", "csv");
    let rows = await rowTexts(page, "tasks-0");
    assert.equal(rows.length, 1);
    assert.match(at(rows, 0), /count-csv-rows/);
    assert.match(await page.locator(".count").first().innerText(), /1 of 10 tasks/);
    await page.fill("#tasks-0-filter", "");
    await page.getByRole("button", { name: "Task", exact: true }).click();
    rows = await rowTexts(page, "tasks-0");
    const names = rows.map((r) => at(r.split("\t"), 0).trim());
    assert.deepEqual(names, [...names].sort((a, b) => a.localeCompare(b)));
    assert.equal(await page.locator("#tasks-0 th[aria-sort=ascending]").innerText(), "Task ▲");
  });

  it("opens a trace from the task table and follows its links", async () => {
    await page.getByRole("link", { name: "count-csv-rows" }).click();
    const episodeLink = page.getByRole("link", { name: /^#\d+$/ });
    await episodeLink.waitFor();
    assert.match(await page.locator("h2").innerText(), /Task count-csv-rows/);
    assert.equal(await page.locator("#task-0 tbody tr").count(), 1);
    await episodeLink.click();
    await page.locator(".conversation").waitFor();
    const body = await page.locator("main").innerText();
    assert.match(body, /Episode #\d+/);
    assert.match(body, /Stop condition\s*agent_completed/);
    assert.match(body, /→ bash/);
    assert.match(body, /model call 1: oracle/);
    const rewards = await page.locator("table", {
      has: page.locator("caption", { hasText: "Rewards" }),
    }).innerText();
    assert.match(rewards, /passed\s+1\s+1/);
    assert.match(rewards, /match\s+1/);
    assert.ok((await page.locator(".msg.role-tool").count()) >= 1);
    await page.screenshot({ path: join(IMAGES, "view-trace.png"), fullPage: true });
    // from a tool call to its result and back
    await page.locator(".tool-call a", { hasText: "result" }).first().click();
    const focused = await page.evaluate<string>("document.activeElement?.className ?? ''");
    assert.match(focused, /role-tool/);
    await page.locator(".crumbs a").first().click();
    await page.locator("#tasks-0").waitFor();
  });

  it("groups the errors of the failing run by type, each with its message, down to a trace", async () => {
    await page.goto(`${viewer.url}#run=1`);
    await page.locator(".error-groups").waitFor();
    const errors = await page.locator(".errors").innerText();
    assert.match(errors, /ProviderError × 10/);
    assert.match(
      errors,
      /could not reach http:\/\/127\.0\.0\.1:1\/v1\/chat\/completions: connect ECONNREFUSED/,
    );
    assert.match(await page.locator(".run-header").innerText(), /Errored\s*10/);
    await page.screenshot({ path: join(IMAGES, "view-errors.png"), fullPage: true });
    await page.getByRole("link", { name: "ProviderError" }).click();
    await page.locator("#error-1 tbody tr").first().waitFor();
    assert.equal((await rowTexts(page, "error-1")).length, 10);
    await page.locator("#error-1 tbody a", { hasText: /^#/ }).first().click();
    await page.locator(".trace .error-list").waitFor();
    assert.match(
      await page.locator(".trace .error-list").innerText(),
      /ProviderError \(HTTP 503\)\s*could not reach http:\/\/127\.0\.0\.1:1/,
    );
    assert.match(await page.locator("main h2").innerText(), /Episode #\d+\s*error/);
  });

  it("compares two runs task by task", async () => {
    await page.goto(`${viewer.url}#compare=0,1`);
    await page.getByTestId("compare-counts").waitFor();
    assert.equal(
      await page.getByTestId("compare-counts").innerText(),
      "0 improved, 10 regressed, 0 same",
    );
    await page.selectOption("#compare-0-1-choice", "regressed");
    assert.equal((await rowTexts(page, "compare-0-1")).length, 10);
    assert.match(at(await rowTexts(page, "compare-0-1"), 0), /1\s+0\s+-1\s+regressed/);
    await page.screenshot({ path: join(IMAGES, "view-compare.png"), fullPage: true });
    await page.selectOption("#compare-pick-B", "4");
    await page.waitForURL(/#compare=0,4$/);
    await page.getByTestId("compare-counts").filter({ hasText: "only in B" }).waitFor();
    assert.equal(
      await page.getByTestId("compare-counts").innerText(),
      "0 improved, 0 regressed, 0 same, 10 only in A, 3 only in B",
    );
  });

  it("reads the golden run written by Python verifiers v1", async () => {
    await page.goto(`${viewer.url}#run=5`);
    await page.locator("#tasks-5 tbody tr").first().waitFor();
    const header = await page.locator(".run-header").innerText();
    for (const word of ["reverse-text--test-model--null--python0", "test-model", "subprocess"]) {
      assert.match(header, new RegExp(word));
    }
    await page.getByRole("link", { name: /The quick brown fox/ }).click();
    await page.getByRole("link", { name: /^#\d+$/ }).click();
    await page.locator(".conversation").waitFor();
    const body = await page.locator("main").innerText();
    assert.match(body, /Stop condition\s*single_turn/);
    assert.match(body, /model call 1: test-model, stop/);
    assert.match(body, /lcs\s+1\s+1/);
  });

  it("reads a run in Python's record shape, model call errors included", async () => {
    await page.goto(`${viewer.url}#run=2`);
    await page.locator("#tasks-2 tbody tr").first().waitFor();
    assert.match(await page.locator(".run-header").innerText(), /py-set[\s\S]*py-model/);
    assert.equal(await page.getByTestId("reward-mean").innerText(), "0.5");
    await page.goto(`${viewer.url}#run=2&episode=0`);
    await page.locator(".conversation").waitFor();
    const body = await page.locator("main").innerText();
    assert.match(body, /py question 1/);
    assert.match(body, /ProviderError: upstream 502 then retried/);
    assert.match(body, /no_tool_calls/);
  });

  it("shows the judge's calls and their usage in a trace", async () => {
    await page.goto(`${viewer.url}#run=3&episode=1`);
    await page.locator(".judges").waitFor();
    const judges = await page.locator(".judges").innerText();
    assert.match(judges, /Judge\s*reference/);
    assert.match(judges, /Model\s*judge-model/);
    assert.match(judges, /Parsed\s*true/);
    assert.match(judges, /50 prompt · 1 completion/);
    const usage = await page.locator("table", {
      has: page.locator("caption", { hasText: "Out-of-band usage" }),
    }).innerText();
    assert.match(usage, /judge:reference\s+judge-model\s+50 prompt/);
    assert.match(await page.locator("main").innerText(), /Reward\s*1/);
  });

  it("shows markup from a run as text and runs none of it", async () => {
    await page.goto(`${viewer.url}#run=6`);
    await page.locator("#tasks-6 tbody tr").first().waitFor();
    assert.match(await page.locator("#tasks-6 tbody").innerText(), /<img src=x onerror=/);
    await page.locator("#tasks-6 tbody a").first().click();
    await page.getByRole("link", { name: /^#\d+$/ }).click();
    await page.locator(".conversation").waitFor();
    assert.match(
      await page.locator(".msg.role-user").innerText(),
      /<script>window.__pwned=2<\/script>/,
    );
    assert.match(await page.locator(".crumbs").innerText(), /"><svg onload=/);
    assert.equal(await page.evaluate<unknown>("window.__pwned"), undefined);
    assert.equal(await page.locator("main img, main script, main svg[onload]").count(), 0);
  });

  it("virtualizes a 2,000-task table and still filters all of it", async () => {
    await page.goto(`${viewer.url}#run=3`);
    await page.locator("#tasks-3 tbody tr:not(.spacer)").first().waitFor();
    assert.equal(await page.locator("#tasks-3").getAttribute("aria-rowcount"), "2001");
    const inDom = await page.locator("#tasks-3 tbody tr:not(.spacer)").count();
    assert.ok(inDom > 5 && inDom < 120, `${inDom} rows in the DOM`);
    await page.fill("#tasks-3-filter", "task-1999");
    const rows = await rowTexts(page, "tasks-3");
    assert.equal(rows.length, 1);
    assert.match(at(rows, 0), /task-1999/);
  });

  it("updates a run that is still being written", async () => {
    await page.goto(`${viewer.url}#run=4`);
    await page.locator("#tasks-4 tbody tr").first().waitFor();
    assert.match(await page.locator(".run-header").innerText(), /Episodes\s*3/);
    assert.match(await page.locator(".run-header").innerText(), /running or unfinished/);
    appendFileSync(
      join(live, "traces.jsonl"),
      [3, 4].map((t) => JSON.stringify(fakeEpisode({ task: t, reward: 0 })) + "\n").join(""),
    );
    await page.locator(".run-header", { hasText: /Episodes\s*5/ }).waitFor({ timeout: 30_000 });
    assert.equal((await rowTexts(page, "tasks-4")).length, 5);
    assert.match(await page.locator("#live").innerText(), /2 new episode/);
  });

  it("has no accessibility violations (axe-core) on any kind of page", async () => {
    const pages = [
      "#run=0",
      "#run=1",
      "#run=0&task=shell-basics:fix-script",
      "#run=1&error=ProviderError",
      "#run=0&episode=0",
      "#run=2&episode=0",
      "#compare=0,1",
      "#run=3",
    ];
    const found: string[] = [];
    for (const hash of pages) {
      await page.goto(`${viewer.url}${hash}`);
      await page.locator("main[aria-busy=false]").waitFor();
      for (const v of await axeViolations(page)) found.push(`${hash}: ${v}`);
    }
    assert.deepEqual(found, []);
  });

  it("took its screenshots", () => {
    for (const name of ["view-run", "view-trace", "view-errors", "view-compare"]) {
      const png = readFileSync(join(IMAGES, `${name}.png`));
      assert.deepEqual([...png.subarray(1, 4)], [0x50, 0x4e, 0x47], `${name}.png is a PNG`);
      assert.ok(png.length > 20_000, `${name}.png has content (${png.length} bytes)`);
    }
  });

  it("made no request beyond the viewer on 127.0.0.1", () => {
    assert.ok(requests.length > 5);
    const origin = new URL(viewer.url).origin;
    assert.deepEqual(requests.filter((u) => !u.startsWith(origin + "/")), []);
  });

  it("logged no console error, uncaught error or CSP violation on any page", () => {
    assert.deepEqual(browser.problems, []);
  });

  it("writes a self-contained report that opens from disk, traces included", async () => {
    const out = join(tmp, "report.html");
    const res = await runCli(["view", "--out", out, demo, broken], { cwd: ROOT });
    assert.equal(res.code, 0, res.stderr);
    const html = readFileSync(out, "utf8");
    assert.doesNotMatch(
      html,
      /<script[^>]+src=|<link[^>]+href=|https?:\/\/(?!www\.w3\.org\/2000\/svg)[a-z]/i,
    );
    const filePage = await browser.context.newPage();
    const seen: string[] = [];
    filePage.on("request", (r) => seen.push(r.url()));
    await filePage.goto(`file://${out}`);
    await filePage.locator("#tasks-0 tbody tr").first().waitFor();
    assert.equal(await filePage.getByTestId("reward-mean").innerText(), "1");
    await filePage.getByRole("link", { name: "fix-script" }).click();
    await filePage.getByRole("link", { name: /^#\d+$/ }).click();
    await filePage.locator(".conversation").waitFor();
    assert.match(await filePage.locator("main").innerText(), /→ bash/);
    await filePage.goto(`file://${out}#compare=0,1`);
    await filePage.getByTestId("compare-counts").waitFor();
    assert.match(await filePage.getByTestId("compare-counts").innerText(), /10 regressed/);
    assert.deepEqual(seen.filter((u) => !u.startsWith("file://")), []);
    assert.deepEqual(browser.problems, []);
    await filePage.close();
  });
});
