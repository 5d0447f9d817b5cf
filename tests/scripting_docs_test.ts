/**
 * The examples of docs/scripting.md, run as users run them: each `ts` block saved as a
 * script in a directory that holds no `node_modules`, then run by `vf run` under Deno,
 * under Bun and with the single-file binary (`bun build --compile`), where
 * `@verifiers/verifiers-ts` and `zod` resolve to the running vf's own copies.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CLI } from "./_cli.ts";
import { BUILD_BINARY, ROOT, runProgram, type RunResult, TOOL_BIN } from "./_plugin_package.ts";
import { at } from "./_assert.ts";

const LONG = { timeout: 240_000 };
type Host = "deno" | "bun" | "binary";
const HOSTS: Host[] = ["deno", "bun", "binary"];

/** The `ts` code blocks of the document, in order. */
function examples(): string[] {
  const text = readFileSync(join(ROOT, "docs", "scripting.md"), "utf8");
  return [...text.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1]!);
}

/** What each example prints, in document order. */
const EXPECT: ((r: RunResult, dir: string) => void)[] = [
  (r) => {
    const lines = r.stdout.split("\n").filter((l) => l.startsWith("episode echo:"));
    assert.equal(lines.length, 6, r.stdout);
    assert.ok(lines.every((l) => l.endsWith(" ok=true")), r.stdout);
    const m = /^reward 1 over 6 episodes in (.+)$/m.exec(r.stdout);
    assert.ok(m, r.stdout);
    const traces = readFileSync(join(m[1]!, "traces.jsonl"), "utf8").trim().split("\n");
    assert.equal(traces.length, 6, "the run directory is written as vf eval writes it");
    for (const f of ["configs/eval.json", "summary.json", "logs/latest/eval.log"]) {
      assert.ok(existsSync(join(m[1]!, f)), `${f} written`);
    }
  },
  (r) => assert.match(r.stdout, /^in memory: 4\/4 clean, reward 1$/m),
  (r) => {
    const m = /^cancelled=true after (\d+) of 1000$/m.exec(r.stdout);
    assert.ok(m, r.stdout + r.stderr);
    assert.ok(Number(m[1]) >= 3 && Number(m[1]) < 1000, m[0]);
  },
  (r) => assert.match(r.stdout, /unknown key "colour"/),
  (r) => assert.match(r.stdout, /^\{"episodes":5,"reward":1\}$/m),
];

describe("docs/scripting.md examples through vf run", () => {
  let root = "";
  let binary = "";
  const blocks = examples();

  before(async () => {
    root = mkdtempSync(join(tmpdir(), "vf-scripting-"));
    binary = join(root, "vf");
    const built = await runProgram("bash", [BUILD_BINARY, binary], { cwd: ROOT }); // as it ships
    assert.equal(built.code, 0, built.stderr);
  }, LONG);

  after(() => {
    if (root) rmSync(root, { recursive: true, force: true });
  });

  it("has one expectation per example", () => {
    assert.equal(blocks.length, EXPECT.length);
  });

  it("runs the vf init scaffold's tests with only the binary", LONG, async () => {
    const dir = join(root, "scaffold");
    mkdirSync(dir);
    const init = await runProgram(binary, ["init", "taskset", "greet"], { cwd: dir });
    assert.equal(init.code, 0, init.stderr);
    const pkg = join(dir, "greet");
    const r = await runProgram(binary, ["run", "mod_test.ts"], {
      cwd: pkg,
      env: { VF_BIN: binary, PATH: "/usr/bin:/bin" },
    });
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /^ok - .*scores 1 with the oracle model/m);
    assert.match(r.stdout, /^2 passed, 0 failed, 0 skipped$/m);
    assert.ok(!existsSync(join(pkg, "node_modules")), "nothing installed");
    writeFileSync(
      join(pkg, "fail_test.ts"),
      `import { describe, it } from "node:test";\nimport assert from "node:assert/strict";\n` +
        `describe("s", () => {\n  it("passes", () => assert.equal(1, 1));\n` +
        `  it("fails", async () => assert.equal(await Promise.resolve(1), 2));\n` +
        `  it("skipped", { skip: true }, () => {});\n});\n`,
    );
    const f = await runProgram(binary, ["run", "fail_test.ts"], { cwd: pkg });
    assert.equal(f.code, 1, f.stdout + f.stderr);
    assert.match(f.stdout, /^ok - s > passes$/m);
    assert.match(f.stdout, /^not ok - s > fails$/m);
    assert.match(f.stdout, /^ok - s > skipped # skip$/m);
    assert.match(f.stdout, /^1 passed, 1 failed, 1 skipped$/m);
  });

  for (const host of HOSTS) {
    it(`runs every example under ${host}`, LONG, async () => {
      for (const [i, code] of blocks.entries()) {
        const dir = join(root, `${host}-${i}`);
        mkdirSync(dir);
        writeFileSync(join(dir, "example.ts"), code);
        copyFileSync(join(ROOT, "examples", "quickstart.toml"), join(dir, "quickstart.toml"));
        const argv = host === "binary"
          ? [binary, "run", "example.ts"]
          : host === "deno"
          ? [join(TOOL_BIN, "deno"), "run", "-A", CLI, "run", "example.ts"]
          : [join(TOOL_BIN, "bun"), CLI, "run", "example.ts"];
        const r = await runProgram(at(argv, 0), argv.slice(1), { cwd: dir });
        assert.equal(r.code, 0, `example ${i + 1} under ${host}: ${r.stderr}`);
        at(EXPECT, i)(r, dir);
        assert.ok(!existsSync(join(dir, "node_modules")), "no node_modules");
      }
    });
  }
});

describe("vf run", () => {
  it("passes arguments and the exit code through, and reports a throwing script", async () => {
    const dir = mkdtempSync(join(tmpdir(), "vf-run-"));
    try {
      writeFileSync(
        join(dir, "args.ts"),
        `import { VERSION } from "@verifiers/verifiers-ts";\n` +
          `import { PLUGIN_ABI } from "@verifiers/verifiers-ts/kit";\n` +
          `console.log(VERSION, JSON.stringify(process.argv.slice(2)));\n` +
          `console.log("kit abi " + PLUGIN_ABI);\n` +
          `process.exitCode = 7;\n`,
      );
      writeFileSync(join(dir, "boom.ts"), `throw new Error("kaput");\n`);
      const deno = [join(TOOL_BIN, "deno"), "run", "-A", CLI, "run"];
      const bun = [join(TOOL_BIN, "bun"), CLI, "run"];
      for (const argv of [deno, bun]) {
        const ok = await runProgram(at(argv, 0), [...argv.slice(1), "args.ts", "a b", "--x"], {
          cwd: dir,
        });
        assert.equal(ok.code, 7, ok.stderr);
        assert.match(ok.stdout, /^0\.\d+\.\d+ \["a b","--x"\]$/m);
        assert.match(ok.stdout, /^kit abi 1$/m, "the plugin kit resolves to this vf's");
        const boom = await runProgram(at(argv, 0), [...argv.slice(1), "boom.ts"], { cwd: dir });
        assert.equal(boom.code, 1);
        assert.match(boom.stderr, /kaput/);
        const missing = await runProgram(at(argv, 0), [...argv.slice(1), "nope.ts"], { cwd: dir });
        assert.equal(missing.code, 2);
        assert.match(missing.stderr, /Cannot run "nope\.ts": no such file/);
        assert.doesNotMatch(missing.stderr, /at .*\.ts:\d+/, "no stack trace");
        const help = await runProgram(at(argv, 0), [...argv.slice(1), "--help"], { cwd: dir });
        assert.equal(help.code, 0);
        assert.match(help.stdout, /^Usage: vf run <script\.ts> \[args\.\.\.\]/);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
