/**
 * `vf view` as a command: help, bad input (exit 2, no stack, nothing written), the
 * `--out` report, and the server — its page's Content-Security-Policy, its JSON API,
 * refusal of foreign Host headers, and a clean stop on SIGTERM. Also: the page assets
 * embedded in lib/view/assets.gen.ts are what lib/view/client/ builds to, and load
 * nothing from outside.
 */
import "./_builtins.ts";
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import http from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { gunzipSync } from "node:zlib";
import { Buffer } from "node:buffer";
import { cliArgv, runCli } from "./_cli.ts";
import { mixedEpisodes, pythonEpisode, writeRunDir } from "./_view_runs.ts";
import { PAGE_CSS, PAGE_JS } from "../lib/view/assets.gen.ts";

const ROOT = join(import.meta.dirname!, "..");

/** GET with an explicit Host header (fetch would not let us set it). */
function get(
  url: string,
  host?: string,
): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    const u = new URL(url);
    const req = http.get({
      host: u.hostname,
      port: u.port,
      path: u.pathname + u.search,
      headers: host ? { host } : {},
    }, (res) => {
      let body = "";
      res.setEncoding("utf8").on("data", (d: string) => body += d).on(
        "end",
        () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }),
      );
    });
    req.on("error", reject);
  });
}

describe("vf view command", () => {
  let tmp: string;
  let run: string;
  let py: string;

  before(() => {
    tmp = mkdtempSync(join(tmpdir(), "vf-view-cli-"));
    run = writeRunDir(join(tmp, "run-a"), mixedEpisodes(40, 8), {
      summary: {
        run: { name: "run-a" },
        model: "m",
        taskset: "bench",
        harness: "null",
        runtime: "local",
        status: "completed",
      },
    });
    py = writeRunDir(join(tmp, "py-run"), [pythonEpisode(1, 1)]);
  });
  after(() => rmSync(tmp, { recursive: true, force: true }));

  it("prints its help with --help and is listed in vf --help", async () => {
    const res = await runCli(["view", "--help"]);
    assert.equal(res.code, 0);
    assert.match(res.stdout, /vf view <run-dir> \[<run-dir> \.\.\.\] \[--port <n>\]/);
    assert.match(res.stdout, /--out <file>/);
    const top = await runCli(["--help"]);
    assert.match(top.stdout, /vf view <run-dir>/);
  });

  it("refuses bad input with exit code 2, a reason and no stack", async () => {
    const cases: [string[], RegExp][] = [
      [["view"], /needs at least one run directory/],
      [["view", join(tmp, "missing")], /No such run directory/],
      [["view", tmp], /Not a run directory/],
      [["view", "--port", "http", run], /--port must be a number/],
      [["view", "--port", "70000", run], /--port must be a number/],
      [["view", "--bogus", run], /Unknown option --bogus/],
      [["view", "--out", join(tmp, "no", "dir", "r.html"), run], /no directory/],
      [["view", "--out", tmp, run], /it is a directory/],
    ];
    for (const [args, message] of cases) {
      const res = await runCli(args);
      assert.equal(res.code, 2, `${args.join(" ")}: ${res.stderr}`);
      assert.match(res.stderr, message);
      assert.doesNotMatch(res.stderr, /\n\s+at /);
      assert.equal(res.stdout, "");
    }
    assert.equal(existsSync(join(tmp, "no")), false);
  });

  it("writes one self-contained report with every episode, compressed", async () => {
    const out = join(tmp, "report.html");
    const res = await runCli(["view", "--out", out, run, py]);
    assert.equal(res.code, 0, res.stderr);
    assert.match(res.stderr, /2 run\(s\), 41 episodes/);
    assert.deepEqual(readdirSync(tmp).filter((f) => f.includes(".tmp")), []);
    const html = readFileSync(out, "utf8");
    assert.match(
      html,
      /<meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src 'sha256-/,
    );
    assert.match(html, /connect-src 'none'/);
    const boot = JSON.parse(
      /<script id="vf-boot" type="application\/json">(.*?)<\/script>/s.exec(html)![1]!,
    );
    assert.equal(boot.mode, "file");
    assert.equal(boot.data.runs[0].view.header.title, "run-a");
    assert.equal(boot.data.runs[0].items.length, 40);
    const chunks = JSON.parse(
      /<script id="vf-episodes" type="application\/json">(.*?)<\/script>/s.exec(html)![1]!,
    );
    const lines = chunks[0].flatMap((c: string) =>
      gunzipSync(Buffer.from(c, "base64")).toString("utf8").split("\n")
    );
    assert.deepEqual(lines, readFileSync(join(run, "traces.jsonl"), "utf8").trimEnd().split("\n"));
  });

  it("serves the page and its API on 127.0.0.1 and stops on SIGTERM", async () => {
    const [cmd, ...args] = cliArgv(["view", run, py]);
    const child = spawn(cmd, args, {
      env: { ...process.env, NO_COLOR: "1" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let out = "";
        child.stdout!.setEncoding("utf8").on("data", (d: string) => {
          out += d;
          const m = /^(http:\/\/127\.0\.0\.1:\d+\/)\n/m.exec(out);
          if (m) resolve(m[1]!);
        });
        child.on("exit", (code) => reject(new Error(`exited ${code}`)));
      });
      const page = await get(url);
      assert.equal(page.status, 200);
      assert.match(String(page.headers["content-type"]), /text\/html/);
      assert.match(page.body, /connect-src 'self'/);
      assert.match(page.body, /"mode":"server","runCount":2/);
      const state = JSON.parse((await get(`${url}api/state`)).body);
      assert.deepEqual(state.versions.length, 2);
      const view = JSON.parse((await get(`${url}api/runs/0`)).body);
      assert.equal(view.header.episodes, 40);
      assert.equal(view.tasks.length, 8);
      const items = JSON.parse((await get(`${url}api/runs/0/episodes?task=bench:task-3`)).body);
      assert.deepEqual(items.map((x: { i: number }) => x.i), [3, 11, 19, 27, 35]);
      const episode = await get(`${url}api/runs/1/episodes/0`);
      assert.equal(episode.body, JSON.stringify(pythonEpisode(1, 1)));
      assert.equal((await get(`${url}api/runs/1/episodes/5`)).status, 404);
      assert.equal((await get(`${url}api/runs/9`)).status, 404);
      assert.equal((await get(`${url}api/state`, "attacker.example:80")).status, 421);
      const exit = new Promise<number | null>((resolve) =>
        child.on("exit", (code) => resolve(code))
      );
      // process.kill: under Deno, ChildProcess.kill reports a handled signal as a death by it
      process.kill(child.pid!, "SIGTERM");
      assert.equal(await exit, 0);
    } finally {
      if (child.exitCode === null) child.kill("SIGKILL");
    }
  });
});

describe("view page assets", () => {
  it("are what lib/view/client/ builds to", () => {
    execFileSync(join(ROOT, "node_modules", ".bin", "deno"), [
      "run",
      "-A",
      join(ROOT, "scripts", "build_view_assets.ts"),
      "--check",
    ], { stdio: "pipe" });
  });

  it("reference nothing outside the page", () => {
    for (const text of [PAGE_JS, PAGE_CSS]) {
      assert.doesNotMatch(text, /https?:\/\/(?!www\.w3\.org\/2000\/svg)/);
      assert.doesNotMatch(text, /@import|url\(/);
      assert.doesNotMatch(text, /<\/script/i);
    }
    assert.match(PAGE_JS, /@tanstack\/virtual-core/);
  });
});
