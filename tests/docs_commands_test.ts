/**
 * Every command the documentation shows runs as written and exits 0: each `sh` block of
 * README.md and docs/*.md (the convention is in `_doc_commands.ts`), and each example line
 * of every command's `--help`. `vf` on the PATH is the single-file binary as it ships, built
 * once; the model provider, Prime and Modal are loopback fakes the environment points at
 * (`OPENAI_BASE_URL`, `PRIME_API_BASE_URL`, `MODAL_SERVER_URL`), and one cache folder is
 * shared by every command.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { GROUPS } from "../lib/cli/usage.ts";
import { VERSION } from "../kit/version.ts";
import { BUILD_BINARY, ROOT, runProgram } from "./_plugin_package.ts";
import {
  type DocBlock,
  docBlocks,
  docPages,
  helpExamples,
  missingFileRefs,
  repoView,
} from "./_doc_commands.ts";
import { type FakeOpenAI, startFakeOpenAI } from "./fakes/openai_server.ts";
import { type PrimeFake, startPrimeFake } from "./fakes/prime_server.ts";
import { isolationSupported } from "./fakes/prime_sandbox_fs.ts";
import { type ModalFake, startModalFake } from "./fakes/modal_server.ts";

const LONG = { timeout: 240_000 };
const BLOCK_TIMEOUT_MS = 120_000;

/** What a command returned. */
interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs a shell text with bash in its own process group; the group is killed at the timeout
 * or, with `until`, once stdout matches it (a server that printed its address).
 */
function sh(
  text: string,
  cwd: string,
  env: Record<string, string>,
  until?: (stdout: string) => Promise<void>,
): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = spawn("bash", ["-e", "-o", "pipefail", "-c", text], {
      cwd,
      env,
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    let waiting = until !== undefined;
    const stop = (signal: NodeJS.Signals) => {
      try {
        process.kill(-child.pid!, signal);
      } catch { /* already gone */ }
    };
    child.stdout.setEncoding("utf8").on("data", (d: string) => {
      stdout += d;
      if (waiting && /^http:\/\/127\.0\.0\.1:\d+\/$/m.test(stdout)) {
        waiting = false;
        until!(stdout).then(() => stop("SIGINT"), (e) => {
          stop("SIGKILL");
          reject(e);
        });
      }
    });
    child.stderr.setEncoding("utf8").on("data", (d: string) => stderr += d);
    const timer = setTimeout(() => stop("SIGKILL"), BLOCK_TIMEOUT_MS);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** The end of a command's output, for a failure message. */
function tail(r: Ran): string {
  return `stdout:\n${r.stdout.slice(-2000)}\nstderr:\n${r.stderr.slice(-3000)}`;
}

/** The command paths whose help holds examples: eval and init first (later examples use what they make). */
const COMMANDS: string[][] = [
  ["eval"],
  ["init"],
  ["validate-config"],
  ["validate"],
  ["replay"],
  ["debug"],
  ...Object.entries(GROUPS).flatMap(([group, subs]) => Object.keys(subs).map((s) => [group, s])),
  ["merge"],
  ["view"],
  ["run"],
];

describe("the documentation's commands, run as written", () => {
  let root = "";
  let env: Record<string, string> = {};
  let provider: FakeOpenAI | undefined;
  let prime: PrimeFake | undefined;
  let modal: ModalFake | undefined;
  /** The folder each page's blocks run in (made on the page's first block). */
  const pageDirs = new Map<string, string>();
  const views: string[] = [];

  before(async () => {
    root = mkdtempSync(join(tmpdir(), "vf-docs-"));
    mkdirSync(join(root, "bin"));
    const built = await runProgram("bash", [BUILD_BINARY, join(root, "bin", "vf")], { cwd: ROOT });
    assert.equal(built.code, 0, built.stderr);
    provider = await startFakeOpenAI({ script: () => "<reversed_text>done</reversed_text>" });
    prime = await startPrimeFake();
    modal = await startModalFake();
    const inherited = Object.fromEntries(
      Object.entries(process.env).filter(([k, v]) =>
        v !== undefined && !/^(OPENAI|PRIME|MODAL)_/.test(k)
      ),
    ) as Record<string, string>;
    env = {
      ...inherited,
      PATH: `${join(root, "bin")}:${process.env.PATH ?? "/usr/bin:/bin"}`,
      VF_CACHE_DIR: join(root, "cache"),
      OPENAI_BASE_URL: provider.url,
      OPENAI_API_KEY: "sk-docs-test-0123456789",
      ...prime.env(),
      ...modal.env,
      MODAL_CONFIG_PATH: join(root, "no-modal.toml"),
      NO_COLOR: "1",
      CI: "1",
    };
  }, LONG);

  after(async () => {
    await provider?.close();
    await prime?.close();
    await modal?.close();
    for (const dir of [root, ...pageDirs.values(), ...views]) {
      if (dir) rmSync(dir, { recursive: true, force: true });
    }
  });

  /** The folder a block of `page` runs in. */
  function dirFor(page: string, mode: "temp" | "repo"): string {
    const key = `${mode} ${page}`;
    let dir = pageDirs.get(key);
    if (!dir) {
      dir = mode === "repo" ? repoView(ROOT) : mkdtempSync(join(tmpdir(), "vf-docs-page-"));
      pageDirs.set(key, dir);
    }
    return dir;
  }

  for (const page of docPages(ROOT)) {
    let blocks: DocBlock[] = [];
    let broken: unknown = null;
    try {
      blocks = docBlocks(ROOT, page).filter((b) => b.lang === "sh");
    } catch (e) {
      broken = e;
    }
    it(`${page} marks its blocks by the convention`, () => {
      if (broken) throw broken;
      for (const b of blocks) {
        // a skipped block's reason names the test that covers it: that test must exist
        for (const m of (b.reason ?? "").matchAll(/\btests\/\w+\.ts\b/g)) {
          assert.ok(existsSync(join(ROOT, m[0])), `${page}:${b.line}: ${m[0]} does not exist`);
        }
      }
    });
    it(`${page} names only files that exist`, () => {
      assert.deepEqual(missingFileRefs(ROOT, page), [], `${page}: files it names are not here`);
    });
    for (const block of blocks) {
      const where = `${page}:${block.line}`;
      const mode = block.mode;
      if (mode === "skip") {
        it(`${where}`, { skip: `not run: ${block.reason}` }, () => {});
        continue;
      }
      it(
        `${where} runs ${block.mode === "repo" ? "from the repository root" : "as written"}`,
        LONG,
        async () => {
          const r = await sh(block.body, dirFor(page, mode), env);
          assert.equal(r.code, 0, `${where} exited ${r.code}:\n${block.body}\n${tail(r)}`);
        },
      );
    }
  }

  describe("every --help example", () => {
    let work = "";
    /** The run directories the examples made, in order (`outputs/<name>`). */
    const runs: string[] = [];

    before(() => {
      work = mkdtempSync(join(tmpdir(), "vf-docs-help-"));
      views.push(work);
      // the examples name the checkout's examples/ folder, as a reader in it would
      mkdirSync(join(work, "examples"));
      for (const f of readdirSync(join(ROOT, "examples"))) {
        copyFileSync(join(ROOT, "examples", f), join(work, "examples", f));
      }
    });

    /** An example as run here: placeholders and a fixed port become what this test has. */
    function substitute(line: string): string {
      return line
        .replaceAll("outputs/<run-a>", runs[0] ?? "outputs/<run-a>")
        .replaceAll("outputs/<run-b>", runs[1] ?? "outputs/<run-b>")
        .replaceAll("outputs/<run>", runs[0] ?? "outputs/<run>")
        .replaceAll("http://localhost:8000/v1", provider!.url)
        .replace(/--port \d+/, "--port 0"); // the OS picks a free one
    }

    /** Records the run directories an example added under outputs/. */
    function noteRuns() {
      let names: string[] = [];
      try {
        names = readdirSync(join(work, "outputs")).sort();
      } catch { /* no run yet */ }
      for (const n of names) if (!runs.includes(`outputs/${n}`)) runs.push(`outputs/${n}`);
    }

    for (const path of COMMANDS) {
      it(`vf ${path.join(" ")} --help: each example exits 0`, LONG, async () => {
        const help = await sh(`vf ${path.join(" ")} --help`, work, env);
        assert.equal(help.code, 0, tail(help));
        const examples = helpExamples(help.stdout);
        assert.ok(examples.length > 0, `vf ${path.join(" ")} --help shows no example`);
        for (const example of examples) {
          if (/--runtime prime/.test(example) && !isolationSupported()) {
            console.log(`not run (the Prime fake needs unshare): ${example}`);
            continue;
          }
          const line = substitute(example);
          assert.doesNotMatch(line, /<[a-z-]+>/, `a placeholder this test cannot fill: ${example}`);
          const serves = /^vf view /.test(line) && !/--out /.test(line);
          const r = await sh(
            line,
            work,
            env,
            serves
              ? async (stdout) => {
                const url = /^(http:\/\/127\.0\.0\.1:\d+\/)$/m.exec(stdout)![1]!;
                const page = await fetch(url);
                await page.body?.cancel();
                assert.equal(page.status, 200, `${example}: GET ${url}`);
              }
              : undefined,
          );
          const ok = serves ? r.code === 0 || r.code === 130 : r.code === 0;
          assert.ok(ok, `${example}\n(run as: ${line}) exited ${r.code}\n${tail(r)}`);
          noteRuns();
        }
      });
    }
  });

  it(
    "npm run demo (the README's set-up, npm install done) scores the ten tasks",
    LONG,
    async () => {
      const view = repoView(ROOT);
      views.push(view);
      const r = await sh("npm run demo -- --display plain", view, env);
      assert.equal(r.code, 0, tail(r));
      assert.match(r.stdout, /^done +10\/10 episodes/m, tail(r));
      assert.match(r.stdout, /^reward +1\.000$/m, tail(r));
    },
  );

  it(
    "a link to bin/vf.js on the PATH is vf (the README's way to type vf in a checkout)",
    LONG,
    async () => {
      const dir = mkdtempSync(join(tmpdir(), "vf-docs-link-"));
      views.push(dir);
      mkdirSync(join(dir, "bin"));
      symlinkSync(join(ROOT, "bin", "vf.js"), join(dir, "bin", "vf"));
      const r = await sh("vf --version && vf eval echo --model oracle --display none", dir, {
        ...env,
        PATH: `${join(dir, "bin")}:${process.env.PATH ?? "/usr/bin:/bin"}`,
      });
      assert.equal(r.code, 0, tail(r));
      assert.equal(r.stdout.trim(), `vf ${VERSION}`);
    },
  );

  const hasScript = spawnSync("script", ["--version"]).status === 0;
  it(
    "colours only on a terminal, and none with NO_COLOR or --no-color",
    { ...LONG, skip: hasScript ? false : "no script(1) to make a terminal" },
    async () => {
      const dir = mkdtempSync(join(tmpdir(), "vf-docs-colour-"));
      views.push(dir);
      const { NO_COLOR: _n, CI: _c, ...coloured } = env; // with CI set the display is plain
      const run = (extra: string, e: Record<string, string>) =>
        sh(`script -qec "vf eval echo --model oracle -o runs ${extra}" /dev/null`, dir, e);
      const SGR = new RegExp(`${String.fromCharCode(27)}\\[3\\dm`); // a colour's escape
      const on = await run("--run.name a", coloured);
      assert.equal(on.code, 0, tail(on));
      assert.match(on.stdout, SGR, "a terminal gets colours");
      const off = await run("--run.name b", { ...coloured, NO_COLOR: "1" });
      assert.equal(off.code, 0, tail(off));
      assert.doesNotMatch(off.stdout, SGR, "NO_COLOR");
      const flag = await run("--run.name c --no-color", coloured);
      assert.equal(flag.code, 0, tail(flag));
      assert.doesNotMatch(flag.stdout, SGR, "--no-color");
    },
  );

  it("exit code 1 is an internal error: a plugin that throws where it must not", LONG, async () => {
    const dir = mkdtempSync(join(tmpdir(), "vf-docs-exit1-"));
    views.push(dir);
    writeFileSync(
      join(dir, "boom.ts"),
      'import { z } from "zod";\n' +
        'export default { kind: "taskset", abi: 1, id: "boom", description: "throws",\n' +
        '  config: z.object({}), load() { return [{ prompt: "x" }]; },\n' +
        '  key() { throw new Error("boom from key"); } };\n',
    );
    const r = await sh("vf eval ./boom.ts --model oracle --env.agent.harness.id null", dir, env);
    assert.equal(r.code, 1, tail(r));
    assert.match(r.stderr, /^internal error: Error: boom from key$/m);
  });

  it("vf validate-config without a taskset names itself, not vf eval", LONG, async () => {
    const dir = mkdtempSync(join(tmpdir(), "vf-docs-noarg-"));
    views.push(dir);
    const r = await sh("vf validate-config", dir, env);
    assert.equal(r.code, 2, tail(r));
    assert.match(r.stderr, /^error: no taskset: give one as `vf validate-config <taskset-id>`/m);
    assert.match(r.stderr, /^hint: run `vf validate-config \[<taskset>\] --help`/m);
    assert.doesNotMatch(r.stderr, /vf eval/);
  });
});
