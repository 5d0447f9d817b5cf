/**
 * The package as users get it from JSR: `deno publish` (the real publisher, with its
 * checks and its import rewriting) uploads this repository to a loopback JSR, and
 * `deno run -A jsr:@verifiers/verifiers-ts/cli` runs the published version from an empty
 * directory with an empty Deno cache. npm dependencies come from a loopback npm registry
 * serving the installed packages; nothing else is reachable through the environment.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { copyFileSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomUUID } from "node:crypto";
import { ROOT, runProgram, type RunResult, TOOL_BIN } from "./_plugin_package.ts";
import { publishDependencies, runtimeDependencies } from "./_jsr.ts";
import { type JsrRegistry, startJsrRegistry } from "./fakes/jsr_registry.ts";
import { type NpmRegistry, packTarball, startNpmRegistry } from "./fakes/npm_registry.ts";
import { at } from "./_assert.ts";

const LONG = { timeout: 300_000 };
const PKG = "@verifiers/verifiers-ts";
const DENO = join(TOOL_BIN, "deno");
/** Published two days ago: past Deno's default minimum dependency age (24 h). */
const AGE_MS = 2 * 24 * 3600 * 1000;

/**
 * A taskset plugin published to npm, bundled into one self-contained ESM file with its
 * zod (the plugin format of docs/plugins.md).
 */
const GREETINGS = `import { z } from "zod";
const config = z.object({ count: z.number().int().min(1).default(3) });
export default {
  kind: "taskset",
  abi: 1,
  id: "greetings",
  description: "Greet people by number",
  config,
  defaultHarness: "null",
  load(raw) {
    const { count } = config.parse(raw);
    return Array.from({ length: count }, (_, i) => ({
      idx: i,
      prompt: "Greet person " + i + " with exactly: hello " + i,
      answer: "hello " + i,
    }));
  },
  solution: (task) => ({ text: task.answer }),
};
`;

/** A scripted evaluation: `argv[2]` echo tasks in memory, then one summary line. */
const SCRIPT = `import { startEval } from "@verifiers/verifiers-ts";
import { defineTaskset } from "@verifiers/verifiers-ts/kit";
console.log("kit " + typeof defineTaskset);
const run = await startEval({
  config: { env: { taskset: { id: "echo" }, agent: { harness: { id: "null" } } }, model: "oracle" },
  args: ["-n", process.argv[2]],
  runDir: null,
});
let n = 0;
for await (const _ of run) n++;
const { summary } = await run.done;
console.log("episodes " + n + " reward " + summary.reward.mean);
`;

function onlyRun(outDir: string): string {
  const runs = readdirSync(outDir);
  assert.equal(runs.length, 1, `one run directory in ${outDir}: ${runs.join(", ")}`);
  return join(outDir, at(runs, 0));
}

function traceCount(runDir: string): number {
  return readFileSync(join(runDir, "traces.jsonl"), "utf8").split("\n").filter(Boolean).length;
}

describe("published to JSR, run with deno run jsr:", () => {
  let root = "";
  let jsr: JsrRegistry;
  let npm: NpmRegistry;
  let published: RunResult;
  const token = randomUUID();

  /** The environment of a user's shell: the registries, a fresh cache, nothing else set. */
  const userEnv = (denoDir: string): Record<string, string> => ({
    JSR_URL: jsr.url,
    NPM_CONFIG_REGISTRY: npm.url,
    DENO_DIR: denoDir,
    VF_CACHE_DIR: join(root, "vf-cache"),
    HTTP_PROXY: "",
    HTTPS_PROXY: "",
    OPENAI_API_KEY: "",
  });

  before(async () => {
    root = mkdtempSync(join(tmpdir(), "vf-jsr-"));
    const old = new Date(Date.now() - AGE_MS);
    npm = await startNpmRegistry();
    publishDependencies(npm, old);
    const src = join(root, "greetings");
    mkdirSync(join(src, "node_modules"), { recursive: true });
    symlinkSync(join(ROOT, "node_modules", "zod"), join(src, "node_modules", "zod"));
    writeFileSync(join(src, "plugin.js"), GREETINGS);
    const bundled = await runProgram(join(TOOL_BIN, "bun"), [
      "build",
      "plugin.js",
      "--format",
      "esm",
      "--outfile",
      "dist/plugin.js",
    ], { cwd: src });
    assert.equal(bundled.code, 0, bundled.stderr);
    npm.publish(
      "@acme/vf-greetings",
      "1.0.0",
      packTarball({
        "package.json": JSON.stringify({
          name: "@acme/vf-greetings",
          version: "1.0.0",
          type: "module",
          exports: "./dist/plugin.js",
        }),
        "dist/plugin.js": readFileSync(join(src, "dist", "plugin.js")),
      }),
      { time: old },
    );
    jsr = await startJsrRegistry({ token, packages: [PKG], backdateMs: AGE_MS });
    published = await runProgram(DENO, ["publish", "--token", token, "--allow-dirty"], {
      cwd: ROOT,
      env: { ...userEnv(join(root, "publish-deno-dir")), DENO_DIR: join(root, "publish-cache") },
      timeoutMs: 240_000,
    });
  }, LONG);

  after(async () => {
    await jsr?.close();
    await npm?.close();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  it("deno publish uploads the package", () => {
    assert.equal(published.code, 0, published.stderr + published.stdout);
    assert.match(published.stderr + published.stdout, /Successfully published @verifiers/);
  });

  it("publishes the include list only, bare imports rewritten to npm: specifiers", () => {
    const files = jsr.files(PKG, "0.1.0");
    assert.ok(files, "version 0.1.0 published");
    const paths = [...files.keys()];
    for (const p of ["/mod.ts", "/cli.ts", "/LICENSE", "/README.md", "/deno.json"]) {
      assert.ok(paths.includes(p), `${p} published`);
    }
    assert.ok(paths.some((p) => p.startsWith("/plugins/runtimes/local/")), "built-in plugins");
    assert.deepEqual(
      paths.filter((p) => !/^\/(lib|kit|plugins)\/.*\.ts$|^\/docs\/[^/]+\.md$/.test(p)).sort(),
      ["/LICENSE", "/README.md", "/cli.ts", "/deno.json", "/mod.ts"],
      "nothing outside the include list (no tests, benchmarks or fixtures)",
    );
    const deps = runtimeDependencies();
    let npmImports = 0;
    for (const [path, bytes] of files) {
      // init_templates.ts and init_plugin_templates.ts hold the scaffold's sources as text,
      // imports included
      if (!path.endsWith(".ts") || /^\/lib\/cli\/init(_plugin)?_templates\.ts$/.test(path)) {
        continue;
      }
      const text = new TextDecoder().decode(bytes);
      for (const m of text.matchAll(/^(?:import|export)\b[^;]*?\bfrom "([^"]+)"/gms)) {
        const spec = m[1]!; // the regex's required group
        if (/^(\.\.?\/|node:)/.test(spec)) continue;
        const npmSpec = /^npm:\/?((?:@[^/]+\/)?[^/@]+)@([^/]+)/.exec(spec);
        assert.ok(npmSpec, `${path}: import "${spec}" is neither relative, node: nor npm:`);
        assert.equal(
          at(npmSpec, 2),
          deps[at(npmSpec, 1)],
          `${path}: ${spec} pins package.json's version`,
        );
        npmImports++;
      }
    }
    assert.ok(npmImports > 10, `npm imports rewritten (${npmImports})`);
  });

  it(
    "runs the demo (built-in plugins, oracle) from an empty directory and an empty cache",
    LONG,
    async () => {
      const cwd = join(root, "empty");
      mkdirSync(cwd);
      copyFileSync(join(ROOT, "examples", "quickstart.toml"), join(cwd, "quickstart.toml"));
      const denoDir = join(root, "deno-dir");
      mkdirSync(denoDir);
      const r = await runProgram(DENO, [
        "run",
        "-A",
        `jsr:${PKG}/cli`,
        "eval",
        "@",
        "quickstart.toml",
        "--model",
        "oracle",
        "-o",
        "out",
        "--display",
        "plain",
      ], { cwd, env: userEnv(denoDir), timeoutMs: 240_000 });
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /^reward +1\.000$/m, r.stdout);
      const runDir = onlyRun(join(cwd, "out"));
      assert.equal(traceCount(runDir), 10);
      for (const f of ["configs/eval.json", "summary.json", "logs/latest/eval.log"]) {
        assert.ok(existsSync(join(runDir, f)), `${f} written`);
      }
      assert.deepEqual(readdirSync(cwd).sort(), ["out", "quickstart.toml"], "no node_modules");
      assert.ok(jsr.requests.includes(`GET /${PKG}/meta.json`), "resolved through meta.json");
      assert.ok(jsr.requests.includes(`GET /${PKG}/0.1.0_meta.json`), "and the version manifest");
      assert.ok(jsr.requests.includes(`GET /${PKG}/0.1.0/cli.ts`), "cli.ts came from the registry");
      assert.ok(
        npm.requests.some((q) => q.startsWith("GET /zod/-/zod-")),
        `zod came from the npm registry: ${npm.requests.join(", ")}`,
      );
    },
  );

  it("loads a plugin by npm: specifier", LONG, async () => {
    const cwd = join(root, "npm-plugin");
    mkdirSync(cwd);
    const r = await runProgram(DENO, [
      "run",
      "-A",
      `jsr:${PKG}/cli`,
      "eval",
      "npm:@acme/vf-greetings@^1",
      "--env.taskset.count",
      "2",
      "--env.taskset.task.judges",
      '[{"id": "match"}]',
      "--model",
      "oracle",
      "-o",
      "out",
      "--display",
      "plain",
    ], { cwd, env: userEnv(join(root, "deno-dir")), timeoutMs: 240_000 });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^reward +1\.000$/m, r.stdout + r.stderr);
    assert.equal(traceCount(onlyRun(join(cwd, "out"))), 2);
    assert.ok(npm.requests.some((q) => q.includes("vf-greetings-1.0.0.tgz")), "from the registry");
  });

  it("runs a script importing the package from JSR (deno.json imports)", LONG, async () => {
    const cwd = join(root, "script-project");
    mkdirSync(cwd);
    writeFileSync(
      join(cwd, "deno.json"),
      JSON.stringify({ imports: { [PKG]: `jsr:${PKG}@^0.1` } }),
    );
    writeFileSync(join(cwd, "eval.ts"), SCRIPT);
    const r = await runProgram(DENO, ["run", "-A", "eval.ts", "3"], {
      cwd,
      env: userEnv(join(root, "deno-dir")),
      timeoutMs: 240_000,
    });
    assert.equal(r.code, 0, r.stderr);
    assert.match(
      r.stdout,
      /^kit function$/m,
      "the plugin kit resolves as @verifiers/verifiers-ts/kit",
    );
    assert.match(r.stdout, /^episodes 3 reward 1$/m);
  });

  it("vf run from JSR resolves the package to the same published version", LONG, async () => {
    const cwd = join(root, "vf-run");
    mkdirSync(cwd);
    writeFileSync(join(cwd, "eval.ts"), SCRIPT);
    const r = await runProgram(DENO, ["run", "-A", `jsr:${PKG}/cli`, "run", "eval.ts", "2"], {
      cwd,
      env: userEnv(join(root, "deno-dir")),
      timeoutMs: 240_000,
    });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^kit function$/m, "vf run maps @verifiers/verifiers-ts/kit too");
    assert.match(r.stdout, /^episodes 2 reward 1$/m);
    assert.deepEqual(readdirSync(cwd), ["eval.ts"], "in memory: nothing written");
  });

  it("answers --version and plugins list", LONG, async () => {
    const env = userEnv(join(root, "deno-dir"));
    const v = await runProgram(DENO, ["run", "-A", `jsr:${PKG}/cli`, "--version"], { env });
    assert.equal(v.code, 0, v.stderr);
    const version = JSON.parse(readFileSync(join(ROOT, "deno.json"), "utf8")).version;
    assert.equal(v.stdout.trim(), `vf ${version}`);
    const list = await runProgram(DENO, ["run", "-A", `jsr:${PKG}/cli`, "plugins", "list"], {
      env,
    });
    assert.equal(list.code, 0, list.stderr);
    assert.match(list.stdout, /^taskset +shell-basics/m);
    // the Prime and Modal runtimes load @bufbuild/protobuf (a subpath import)
    for (const runtime of ["prime", "modal"]) {
      const show = await runProgram(DENO, [
        "run",
        "-A",
        `jsr:${PKG}/cli`,
        "plugins",
        "show",
        "runtime",
        runtime,
      ], { env });
      assert.equal(show.code, 0, show.stderr);
      assert.match(show.stdout, new RegExp(runtime));
    }
    assert.ok(
      npm.requests.some((q) => q.startsWith("GET /@bufbuild/protobuf/-/protobuf-")),
      `@bufbuild/protobuf came from the npm registry: ${npm.requests.join(", ")}`,
    );
  });
});
