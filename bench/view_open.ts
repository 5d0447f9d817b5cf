/**
 * How fast `vf view` opens a big run: a 10,000-episode run (episodes of our trace format,
 * 2,500 tasks × 4 rollouts, 0/1 rewards, every 7th episode errored, tool output padded to
 * realistic line sizes) written to a temp dir, then
 *
 * 1. indexing in this process (`RunIndex` + `runView`): the server's work before it answers;
 * 2. `vf view <run>` as a child: spawn → URL printed, and — when /usr/bin/chromium is there —
 *    spawn → the page's task table visible in headless Chromium (the "opens in" figure),
 *    then one trace opened by a click;
 * 3. `vf view --out`: report size and write time, and file → table visible in Chromium.
 *
 * `deno run -A bench/view_open.ts [--n 10000] [--padding 1500]`. Prints figures, asserts
 * nothing. Each figure is the median of 3.
 *
 * @module
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { performance } from "node:perf_hooks";
import { RunIndex } from "../lib/view/run_index.ts";
import { runView } from "../lib/view/run_view.ts";
import { browserMissing, launchBrowser } from "../tests/_browser.ts";
import { mixedEpisodes, writeRunDir } from "../tests/_view_runs.ts";
import { BENCH, scriptArgv } from "./common.ts";
import { flag } from "./throughput.ts";

const CLI = join(BENCH, "..", "cli.ts");

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;

/** Spawns `vf view`; resolves with the URL and the ms from spawn to the URL line. */
function startViewer(dir: string): Promise<{ url: string; ms: number; stop(): void }> {
  const t0 = performance.now();
  const [cmd, ...args] = scriptArgv(CLI, ["view", dir]);
  const child = spawn(cmd, args, { stdio: ["ignore", "pipe", "inherit"] });
  return new Promise((resolve, reject) => {
    let out = "";
    child.stdout!.setEncoding("utf8").on("data", (d: string) => {
      out += d;
      const m = /^(http:\S+)\n/m.exec(out);
      if (m) {
        resolve({
          url: m[1]!, // the regex's required group
          ms: performance.now() - t0,
          stop: () => process.kill(child.pid!, "SIGTERM"),
        });
      }
    });
    child.on("exit", (code) => reject(new Error(`vf view exited ${code}`)));
  });
}

const n = flag("n", 10_000);
const padding = flag("padding", 1500);
const tmp = mkdtempSync(join(tmpdir(), "vf-bench-view-"));
try {
  const dir = writeRunDir(
    join(tmp, "run"),
    mixedEpisodes(n, Math.max(1, Math.floor(n / 4)), padding),
  );
  const size = statSync(join(dir, "traces.jsonl")).size;
  console.log(`run: ${n} episodes, traces.jsonl ${(size / 1e6).toFixed(1)} MB`);

  const indexMs: number[] = [];
  for (let i = 0; i < 3; i++) {
    const t0 = performance.now();
    const view = runView(new RunIndex(dir));
    indexMs.push(performance.now() - t0);
    if (view.header.episodes !== n) throw new Error(`indexed ${view.header.episodes} of ${n}`);
  }
  console.log(`index + view in process: ${median(indexMs).toFixed(0)} ms`);

  const missing = browserMissing();
  const browser = missing ? null : await launchBrowser();
  const urlMs: number[] = [];
  const openMs: number[] = [];
  const traceMs: number[] = [];
  for (let i = 0; i < 3; i++) {
    const t0 = performance.now();
    const viewer = await startViewer(dir);
    urlMs.push(viewer.ms);
    try {
      if (browser) {
        const page = await browser.context.newPage();
        await page.goto(viewer.url);
        await page.locator("#tasks-0 tbody tr:not(.spacer)").first().waitFor();
        openMs.push(performance.now() - t0);
        const t1 = performance.now();
        await page.locator("#tasks-0 tbody a").first().click();
        await page.locator("#task-0 tbody a").first().click();
        await page.locator(".conversation").waitFor();
        traceMs.push(performance.now() - t1);
        await page.close();
      }
    } finally {
      viewer.stop();
    }
  }
  console.log(`vf view: spawn → URL printed ${median(urlMs).toFixed(0)} ms`);
  if (browser) {
    console.log(
      `vf view: spawn → task table visible in Chromium ${
        median(openMs).toFixed(0)
      } ms (target < 2000 ms); ` +
        `task → trace by two clicks ${median(traceMs).toFixed(0)} ms`,
    );
  } else console.log(`browser figures ${missing}`);

  const out = join(tmp, "report.html");
  const t0 = performance.now();
  await new Promise<void>((resolve, reject) => {
    const [cmd, ...args] = scriptArgv(CLI, ["view", "--out", out, dir]);
    spawn(cmd, args, { stdio: "ignore" }).on(
      "exit",
      (code) => code === 0 ? resolve() : reject(new Error(`exit ${code}`)),
    );
  });
  console.log(
    `vf view --out: ${(performance.now() - t0).toFixed(0)} ms, report ${
      (statSync(out).size / 1e6).toFixed(1)
    } MB`,
  );
  if (browser) {
    const fileMs: number[] = [];
    for (let i = 0; i < 3; i++) {
      const page = await browser.context.newPage();
      const t1 = performance.now();
      await page.goto(`file://${out}`);
      await page.locator("#tasks-0 tbody tr:not(.spacer)").first().waitFor();
      fileMs.push(performance.now() - t1);
      await page.close();
    }
    console.log(`report file → task table visible in Chromium ${median(fileMs).toFixed(0)} ms`);
    await browser.close();
  }
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
