/**
 * `vf view` of the runs `vf validate` and `vf replay` write, in a real browser (headless
 * Chromium): a validate run of a broken taskset, told apart from an eval run, where a user
 * filters the failing tasks, opens one and reads why its gold check failed (the error its
 * hook raised, with the runtime's output in it); and a `-r 5` replay of the Python golden
 * run with a judge that varies, opened beside its source, showing the score change and the
 * judge's spread per task, then compared with the source. No console error, uncaught error
 * or CSP violation, and no accessibility violation on these pages.
 *
 * @module
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import type { ChildProcess } from "node:child_process";
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import type { Page } from "playwright-core";
import { runCli } from "./_cli.ts";
import { rowTexts, startViewer } from "./_viewer.ts";
import { browserMissing, launchBrowser, type TestBrowser } from "./_browser.ts";
import { PYTHON_GOLDEN_RUN } from "./_python_v1.ts";
import { type FakeOpenAI, startFakeOpenAI } from "./fakes/openai_server.ts";

const ROOT = join(import.meta.dirname!, "..");
const KIT = pathToFileURL(join(ROOT, "mod.ts")).href;
const RUBRIC = join(ROOT, "tests", "fixtures", "judges", "quickstart_rubric.json");
const AXE = readFileSync(join(ROOT, "node_modules", "axe-core", "axe.min.js"), "utf8");
const KEY = "k-view-judge";
const missing = browserMissing();
if (missing) console.warn(`view_checks_browser_test: ${missing}`);

/** Four tasks: one valid, one whose hook throws with the runtime's stderr, one false, one hung. */
const BROKEN = `
import { defineTaskset, TaskError } from "${KIT}";
import { z } from "zod";
export default defineTaskset({
  id: "broken",
  description: "tasks with broken gold checks",
  config: z.object({}),
  load: () => ["fine", "throws", "false", "hangs"].map((name, idx) => ({ idx, name, prompt: "p" })),
  async validate(ctx) {
    const r = await ctx.runtime.run(["sh", "-c", "echo 3 tests failed: test_sum >&2; exit 1"], {});
    if (ctx.task.name === "throws") throw new TaskError("gold solution failed: " + r.stderr.trim());
    if (ctx.task.name === "false") return false;
    if (ctx.task.name === "hangs") return await new Promise(() => {});
    return true;
  },
});
`;

async function axeViolations(page: Page): Promise<string[]> {
  await page.evaluate(AXE);
  return await page.evaluate<string[]>(
    `axe.run(document, { resultTypes: ["violations"] }).then((r) => r.violations.map((v) =>
      v.id + " (" + v.impact + "): " + v.help + " e.g. " + v.nodes[0].target.join(" ")))`,
  );
}

describe("vf view of validate and replay runs", { skip: missing ?? false }, () => {
  let tmp: string;
  let judge: FakeOpenAI;
  let viewer: { url: string; child: ChildProcess };
  let browser: TestBrowser;
  let page: Page;
  const a11y: string[] = [];

  before(async () => {
    tmp = mkdtempSync(join(tmpdir(), "vf-view-checks-"));
    writeFileSync(join(tmp, "broken.ts"), BROKEN);
    const v = await runCli(
      [
        "validate",
        "./broken.ts",
        "--timeout.total",
        "1",
        "--run.name",
        "checked",
        "--display",
        "none",
      ],
      { cwd: tmp, timeoutMs: 120_000 },
    );
    assert.equal(v.code, 3, v.stderr);
    // the judge says "yes" to `always_yes` on every other call: rescores of a trace differ
    judge = await startFakeOpenAI({
      apiKey: KEY,
      script: (_body, i) =>
        JSON.stringify({
          verdicts: [
            { name: "always_yes", reason: "scripted", verdict: i % 2 ? "no" : "yes" },
            { name: "effort", reason: "scripted", verdict: "some" },
          ],
        }),
    });
    writeFileSync(
      join(tmp, "judge.toml"),
      `[[taskset.task.judges]]
id = "rubric"
path = ${JSON.stringify(RUBRIC)}
base_url = ${JSON.stringify(judge.url)}
api_key_var = "VF_VIEW_JUDGE_KEY"
model = "judge-model"
`,
    );
    const source = join(tmp, "golden");
    cpSync(PYTHON_GOLDEN_RUN, source, { recursive: true });
    const r = await runCli(
      ["replay", source, "@", "judge.toml", "-r", "5", "-c", "1", "-o", join(tmp, "rescored")],
      { cwd: tmp, env: { VF_VIEW_JUDGE_KEY: KEY }, timeoutMs: 120_000 },
    );
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(readdirSync(join(tmp, "rescored")).sort(), [
      "configs",
      "logs",
      "summary.json",
      "traces.jsonl",
    ]);
    // the source is not named: `vf view` opens it beside its replay
    viewer = await startViewer([join(tmp, "outputs", "checked"), join(tmp, "rescored")]);
    browser = await launchBrowser();
    page = await browser.context.newPage();
  });

  after(async () => {
    await browser?.close();
    viewer?.child.kill("SIGTERM");
    await judge?.close();
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  });

  it("shows a validate run as one, with its counts and failing tasks", async () => {
    await page.goto(viewer.url);
    await page.getByTestId("validate-counts").waitFor();
    assert.match(await page.getByTestId("run-kind").innerText(), /^validate run/);
    assert.equal(
      await page.getByTestId("validate-counts").innerText(),
      "1/4 valid · 1 invalid · 1 error · 1 timeout",
    );
    assert.match(await page.locator("nav#runs").innerText(), /A: checked \(validate\)/);
    await page.selectOption("#checks-0-choice", "failing");
    const failing = await rowTexts(page, "checks-0");
    assert.equal(failing.length, 3, failing.join("\n"));
    assert.ok(failing.every((t) => !/^\s*0: fine/.test(t)), failing.join("\n"));
    a11y.push(...(await axeViolations(page)).map((x) => `validate run: ${x}`));
  });

  it("opens a failing task and reads why its gold check failed", async () => {
    await page.getByRole("link", { name: "1: throws" }).click();
    await page.waitForURL(/#run=0&task=/);
    const gold = page.getByRole("region", { name: /^Gold check/ });
    assert.equal(
      await gold.getByTestId("check-why").innerText(),
      "validate: gold solution failed: 3 tests failed: test_sum",
    );
    assert.match(await gold.innerText(), /TaskError/);
    const setup = page.getByRole("region", { name: "Setup alone" });
    assert.match(await setup.innerText(), /valid/);
    a11y.push(...(await axeViolations(page)).map((x) => `check page: ${x}`));
    await page.locator(".crumbs a").first().click();
    await page.getByRole("link", { name: "3: hangs" }).click();
    assert.equal(
      await page.getByRole("region", { name: /^Gold check/ }).getByTestId("check-why").innerText(),
      "validate timed out after 1s",
    );
    await page.locator(".crumbs a").first().click();
    await page.getByRole("link", { name: "2: false" }).click();
    assert.equal(
      await page.getByRole("region", { name: /^Gold check/ }).getByTestId("check-why").innerText(),
      "The validate hook returned false.",
    );
  });

  it("shows the replay beside its source: score change and judge spread per task", async () => {
    await page.getByRole("link", { name: /^B: .* \(replay\)$/ }).click();
    await page.getByTestId("replay-counts").waitFor();
    assert.match(await page.getByTestId("run-kind").innerText(), /^replay run/);
    assert.match(
      await page.getByTestId("replay-counts").innerText(),
      /judge varies on 2 of 2 task\(s\)/,
    );
    const summary = JSON.parse(readFileSync(join(tmp, "rescored", "summary.json"), "utf8"));
    const rows = await rowTexts(page, "replay-1");
    assert.equal(rows.length, 2);
    const near = (cell: string | undefined, want: number) => Math.abs(Number(cell) - want) < 1e-3;
    for (const t of summary.tasks) {
      // the row whose "Rescores" cell lists this task's rescores, to 3 decimals
      const row = rows.map((r) => r.split("\t").map((c) => c.trim())).find((cells) => {
        const shown = (cells[5] ?? "").split(", ");
        return shown.length === t.rewards.length &&
          t.rewards.every((x: number, i: number) => near(shown[i], x));
      });
      assert.ok(row, `a row for ${t.key}: ${rows.join("\n")}`);
      assert.ok(near(row[1], t.source_rewards[0]), row.join(" | "));
      assert.ok(near(row[2], t.mean), row.join(" | "));
      assert.ok(near(row[3], t.mean - t.source_rewards[0]), row.join(" | "));
      assert.ok(t.std > 0 && near(row[4], t.std), row.join(" | "));
    }
    a11y.push(...(await axeViolations(page)).map((x) => `replay run: ${x}`));
    await page.getByRole("link", { name: "Compare with the source run" }).click();
    await page.waitForURL(/#compare=2,1$/);
    await page.getByTestId("compare-counts").waitFor();
    const compared = await rowTexts(page, "compare-2-1");
    assert.equal(compared.length, 2, compared.join("\n"));
  });

  it("a source run opened by its replay is an eval run", async () => {
    await page.getByRole("link", { name: "3: reverse-text--test-model--null--python0" }).click();
    await page.getByTestId("run-kind").waitFor();
    assert.equal(await page.getByTestId("run-kind").innerText(), "eval run");
  });

  it("no accessibility violation, console error, uncaught error or CSP violation", () => {
    assert.deepEqual(a11y, []);
    assert.deepEqual(browser.problems, []);
  });
});
