import "./_builtins.ts";
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { spawn } from "node:child_process";
import process from "node:process";
import { cliArgv, type CliResult, runCli } from "./_cli.ts";
import { FAST, tmp, traceLines, waitFor } from "./_run.ts";
import { missingKeyWarning } from "../lib/config/key_warning.ts";
import type { EvalConfig } from "../lib/config/eval_config.ts";
import { type FakeOpenAI, startFakeOpenAI } from "./fakes/openai_server.ts";
import { at } from "./_assert.ts";

/** A loopback port nothing listens on (taken from the OS, then released). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** `vf eval` of `count` generated tasks through a harness against a model at `baseUrl`. */
function evalArgs(baseUrl: string, count: number, extra: string[] = [], harness = "null") {
  return [
    "eval",
    FAST,
    "--env.taskset.count",
    String(count),
    "--env.agent.harness.id",
    harness,
    "-m",
    "m",
    "--client.base-url",
    baseUrl,
    "--client.api-key-var",
    "VF_REPORT_KEY",
    "-c",
    "2",
    ...extra,
  ];
}

/** Runs the same eval in plain and json display modes, each in its own output dir. */
async function bothModes(
  args: string[],
  env: Record<string, string>,
): Promise<{ plain: CliResult; json: CliResult; dirs: [string, string] }> {
  const dirs: [string, string] = [tmp("vf-report-"), tmp("vf-report-")];
  const run = (mode: string, dir: string) =>
    runCli([...args, "--display", mode, "-o", dir], { env, cwd: dir });
  const [plain, json] = await Promise.all([run("plain", dirs[0]), run("json", dirs[1])]);
  return { plain, json, dirs };
}

/** The end of the run names the cause, the log file and the resume command; exit 3. */
function assertReport(r: CliResult, dir: string, cause: RegExp, what: string) {
  assert.equal(r.code, 3, `${what}: exit ${r.code}\n${r.stderr}`);
  assert.match(r.stderr, /every episode errored \(exit 3/, what);
  assert.match(r.stderr, cause, `${what}: cause missing from:\n${r.stderr}`);
  const run = at(readdirSync(dir).filter((f) => f !== "cache" && !f.startsWith(".")), 0);
  // the run folder is shown relative to the working directory (the output dir here)
  const log = join(run, "logs", "latest", "eval.log");
  assert.ok(r.stderr.includes(`full log: ${log}`), `${what}: no log path in:\n${r.stderr}`);
  assert.ok(readFileSync(join(dir, log), "utf8").length > 0, `${what}: empty log`);
  assert.match(r.stderr, /resume with: vf eval --resume \S+/, what);
  assert.doesNotMatch(r.stderr, /sk-(right|wrong)/, `${what}: a secret leaked`);
}

describe("the end of a failed run says why", () => {
  let fake: FakeOpenAI;
  let slow: FakeOpenAI;
  before(async () => {
    fake = await startFakeOpenAI({ apiKey: "sk-right" });
    slow = await startFakeOpenAI({ latencyMs: 4000 });
  });
  after(async () => {
    await fake.close();
    await slow.close();
  });

  it("a 401: the HTTP status and the provider's message, in plain and json modes", async () => {
    const { plain, json, dirs } = await bothModes(evalArgs(fake.url, 2), {
      VF_REPORT_KEY: "sk-wrong",
    });
    for (const [r, dir, mode] of [[plain, dirs[0], "plain"], [json, dirs[1], "json"]] as const) {
      assertReport(r, dir, /ProviderError ×2 \[HTTP 401\]: provider returned HTTP 401: \S/, mode);
      assert.match(r.stderr, /hint: check the API key/);
    }
    // the header and table say "1 rollout" and "—" (no "1 rollouts", no "—s")
    assert.match(plain.stderr, /^run +2 tasks × 1 rollout · /m);
    assert.doesNotMatch(plain.stdout, /—s\b/);
    assert.doesNotMatch(plain.stdout, /nothing scored/, "errored traces are not 'unscored'");
    const summary = JSON.parse(json.stdout);
    assert.equal(summary.error_examples.ProviderError.status_code, 401);
    assert.match(summary.error_examples.ProviderError.message, /HTTP 401/);
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it("a refused connection names the endpoint", async () => {
    const url = `http://127.0.0.1:${await closedPort()}/v1`;
    const { plain, json, dirs } = await bothModes(evalArgs(url, 2), { VF_REPORT_KEY: "k" });
    for (const [r, dir, mode] of [[plain, dirs[0], "plain"], [json, dirs[1], "json"]] as const) {
      assertReport(r, dir, new RegExp(`ProviderError ×2[^\\n]*127\\.0\\.0\\.1:\\d+`), mode);
    }
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it("an agent command that cannot be found names the command", async () => {
    const args = evalArgs(fake.url, 1, [
      "--env.agent.harness.command",
      '["vf-no-such-agent-7f3a"]',
    ], "command");
    const { plain, json, dirs } = await bothModes(args, { VF_REPORT_KEY: "sk-right" });
    for (const [r, dir, mode] of [[plain, dirs[0], "plain"], [json, dirs[1], "json"]] as const) {
      assertReport(r, dir, /HarnessError ×1[^\n]*vf-no-such-agent-7f3a/, mode);
    }
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it("a missing API key: a warning before the first call, then the 401 it caused", async () => {
    const { plain, json, dirs } = await bothModes(evalArgs(fake.url, 1), {});
    for (const [r, dir, mode] of [[plain, dirs[0], "plain"], [json, dirs[1], "json"]] as const) {
      assert.match(
        r.stderr,
        /^warning: VF_REPORT_KEY is not set: calls to 127\.0\.0\.1 go without an API key/m,
      );
      assertReport(r, dir, /HTTP 401/, mode);
    }
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it("a missing API key for an endpoint known to need one: a warning that says so", () => {
    const config = {
      model: "gpt-x",
      client: { api_key_var: "VF_REPORT_UNSET_KEY", base_url: "https://api.openai.com/v1" },
    } as unknown as EvalConfig;
    assert.match(
      missingKeyWarning(config)!,
      /^VF_REPORT_UNSET_KEY is not set, and api\.openai\.com needs an API key: its calls will fail/,
    );
    assert.equal(missingKeyWarning({ ...config, model: "oracle" } as EvalConfig), null);
  });

  it("an episode timeout says it timed out", { timeout: 120_000 }, async () => {
    const { plain, json, dirs } = await bothModes(
      evalArgs(slow.url, 1, ["--env.timeout.episode", "1"]),
      { VF_REPORT_KEY: "k" },
    );
    for (const [r, dir, mode] of [[plain, dirs[0], "plain"], [json, dirs[1], "json"]] as const) {
      assertReport(r, dir, /Error ×1[^\n]*(timed out|timeout)/i, mode);
    }
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it("a clean run prints no report and exits 0; --fail-on-error keeps its meaning", async () => {
    const dir = tmp("vf-report-");
    const ok = await runCli(
      [...evalArgs(fake.url, 2), "--display", "plain", "-o", dir, "--run.name", "ok"],
      { env: { VF_REPORT_KEY: "sk-right" }, cwd: dir },
    );
    assert.equal(ok.code, 0, ok.stderr);
    assert.doesNotMatch(ok.stderr, /errored|full log|resume with/);
    const allowed = await runCli(
      [
        ...evalArgs(fake.url, 2),
        "--display",
        "plain",
        "--fail-on-error",
        "5",
        "-o",
        dir,
        "--run.name",
        "allowed",
      ],
      { env: { VF_REPORT_KEY: "sk-wrong" }, cwd: dir },
    );
    assert.equal(allowed.code, 0, allowed.stderr);
    assert.match(allowed.stderr, /2 of 2 episodes errored \(all of them\)/);
    assert.match(readFileSync(join(dir, "allowed", "summary.json"), "utf8"), /HTTP 401/);
    rmSync(dir, { recursive: true, force: true });
  });
});

/**
 * The screen a terminal shows after `text`: lines as written, `ESC[<n>F` moving up n lines
 * to their start and `ESC[J` clearing to the end of the screen (what the live view uses).
 */
function screenOf(text: string): string[] {
  const lines: string[] = [""];
  let row = 0;
  // deno-lint-ignore no-control-regex
  for (const part of text.split(/(\x1b\[\d*[A-Za-z]|\n)/)) {
    if (part === "\n") {
      row++;
      if (lines.length <= row) lines.push("");
    } else if (part.startsWith("\x1b[") && part.endsWith("F")) {
      row = Math.max(0, row - Number(part.slice(2, -1) || 1));
    } else if (part === "\x1b[J") {
      lines.length = row + 1;
      lines[row] = "";
    } else if (!part.startsWith("\x1b")) lines[row] += part;
  }
  return lines.filter((l, i) => l !== "" || i < lines.length - 1);
}

describe("Ctrl-C in the live view", () => {
  let slow: FakeOpenAI;
  before(async () => {
    slow = await startFakeOpenAI({ latencyMs: 150 });
  });
  after(() => slow.close());

  it("leaves a clean screen: the notice, one final frame, and how to resume", {
    timeout: 90_000,
  }, async () => {
    const cwd = tmp("vf-ctrlc-");
    const args = [
      ...evalArgs(slow.url, 40, ["-c", "2", "--display", "rich", "--run.name", "live"]),
    ];
    const [cmd, ...rest] = cliArgv(args);
    const child = spawn(cmd, rest, {
      cwd,
      env: { ...process.env, NO_COLOR: "1", VF_REPORT_KEY: "k" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stderr = "";
    child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    child.stdout.resume();
    const done = new Promise<number | null>((r) => child.on("close", (code) => r(code)));
    await waitFor(() => traceLines(join(cwd, "outputs", "live")).length >= 2, 60_000);
    process.kill(child.pid!, "SIGINT");
    assert.equal(await done, 130, stderr);
    const screen = screenOf(stderr);
    const notice = screen.findIndex((l) => l.startsWith("SIGINT: stopping"));
    assert.ok(notice >= 0, `the stopping notice was erased:\n${screen.join("\n")}`);
    const frames = screen.filter((l) => /^\S*[█░]+ \d+\/40 /.test(l));
    assert.equal(frames.length, 1, `stale progress lines:\n${screen.join("\n")}`);
    assert.ok(screen.indexOf(at(frames, 0)) > notice, "the final frame comes after the notice");
    assert.equal(screen.filter((l) => /^reward /.test(l)).length, 1, screen.join("\n"));
    assert.match(screen.join("\n"), /^stopped — resume with: vf eval --resume outputs\/live$/m);
    rmSync(cwd, { recursive: true, force: true });
  });
});

describe("a run that nothing scored", () => {
  it("says so next to its reward instead of a bare 0.000", async () => {
    const dir = tmp("vf-unscored-");
    writeFileSync(join(dir, "tasks.jsonl"), `{"prompt":"say hi","answer":"hi"}\n`);
    const args = ["eval", "jsonl", "--env.taskset.path", "tasks.jsonl", "-m", "oracle"];
    const bare = await runCli([...args, "--display", "plain", "-o", "a"], { cwd: dir });
    assert.equal(bare.code, 0, bare.stderr);
    assert.match(bare.stdout, /^reward +0\.000 {2}\(nothing scored these traces: [^\n]*judges/m);
    const judged = await runCli(
      [...args, "--env.taskset.task.judges", '[{"id":"match"}]', "--display", "plain", "-o", "b"],
      { cwd: dir },
    );
    assert.equal(judged.code, 0, judged.stderr);
    assert.match(judged.stdout, /^reward +1\.000$/m);
    rmSync(dir, { recursive: true, force: true });
  });
});
