/**
 * Plugins from a real npm registry server: Verdaccio on 127.0.0.1 with no uplink, packages
 * published to it with `npm publish`, then used by `vf` under `deno run`, under Bun and as
 * the `bun build --compile` binary. What is checked on every host:
 * - a plugin's own dependency is never installed behind our back (Bun included): the run
 *   is refused and the registry never sees a request for it;
 * - plugged scoring functions (`npm:pkg@^1:fn`) are written to vf.lock by `--lock`, and
 *   `--frozen` runs the locked version after a newer one is published;
 * - `plugins show` resolves through the same vf.lock as `eval`;
 * - an edited file in the package cache is repaired from the verified tarball; with the
 *   registry gone and the tarball corrupt too, the run is refused naming the entries;
 * - `npm:pkg` and `npm:pkg@*` follow a prerelease `latest` tag as npm's own picker does;
 * - scoped private packages with the `.npmrc` token, JSR's npm-compatible layout,
 *   lock-mismatch labels, stale-metadata notes, not-found and broken-package messages,
 *   run names of scoped and unscoped packages;
 * - 8 parallel cold-cache loads of one plugin (mixing the three hosts), 10 times.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { Buffer } from "node:buffer";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import {
  BUILD_BINARY,
  ROOT,
  runProgram,
  type RunResult,
  runVf,
  toolchainEnv,
  type VfHost,
} from "./_plugin_package.ts";
import { startVerdaccio, type Verdaccio } from "./_verdaccio.ts";
import { at } from "./_assert.ts";

const HOSTS: VfHost[] = ["deno", "bun", "binary"];
const LONG = { timeout: 300_000 };

function pkgJson(name: string, version: string, extra: Record<string, unknown> = {}): string {
  return JSON.stringify({ name, version, type: "module", main: "index.js", ...extra });
}

/** A taskset module with no imports: one task whose prompt names the version. */
function taskset(id: string, prompt: string): string {
  return `export default {
  kind: "taskset", abi: 1, id: ${JSON.stringify(id)}, description: "from the registry",
  config: null, defaultHarness: "null",
  load() { return [{ idx: 0, prompt: ${JSON.stringify(prompt)}, answer: "4" }]; },
  solution: () => ({ text: "4" }),
  rewards: { correct: { fn: () => 1 } },
};
`;
}

describe("plugins from a real npm registry (Verdaccio), on every host", () => {
  let reg: Verdaccio;
  let root = "";
  let binary = "";
  const env = (host: VfHost): Record<string, string> => ({
    NPM_CONFIG_REGISTRY: reg.url,
    NPM_CONFIG_USERCONFIG: join(root, "no-user-npmrc"),
    VF_NPM_REGISTRY: "",
    VF_JSR_REGISTRY: reg.url,
    VF_CACHE_DIR: join(root, `cache-${host}`),
  });
  const work = (host: VfHost, name: string): string => {
    const dir = join(root, host, name);
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, ".npmrc"), reg.npmrc); // the token of the private scope
    return dir;
  };
  const vf = (host: VfHost, args: string[], cwd: string, extra = {}): Promise<RunResult> =>
    runVf(host, args, { cwd, env: { ...env(host), ...extra }, binary });
  const show = (host: VfHost, spec: string, cwd: string, extra: string[] = []) =>
    vf(host, ["plugins", "show", "taskset", spec, ...extra], cwd);

  let ready: Promise<void>;
  async function setup() {
    root = mkdtempSync(join(tmpdir(), "vf-verdaccio-e2e-"));
    binary = join(root, "bin", "vf");
    const built = runProgram("bash", [BUILD_BINARY, binary], { cwd: root }); // as it ships
    reg = await startVerdaccio();
    await Promise.all([
      reg.publish({
        "package.json": pkgJson("acme-tasks", "1.0.0"),
        "index.js": taskset("acme-tasks", "PROMPT-1.0.0"),
      }),
      reg.publish({
        "package.json": pkgJson("@private/acme-tasks", "1.0.0"),
        "index.js": taskset("acme-tasks", "PRIVATE"),
      }),
      reg.publish({
        "package.json": pkgJson("@jsr/acme__jsr-tasks", "1.0.0", {
          exports: { ".": "./mod.js", "./plugin": "./dist/plugin.js" },
        }),
        "mod.js": 'export * from "@jsr/verifiers__verifiers-ts";\n',
        "dist/plugin.js": taskset("jsr-tasks", "JSR"),
      }),
      reg.publish({
        "package.json": pkgJson("acme-rewards", "1.0.0"),
        "index.js": "export const bonus = () => 2;\n",
      }),
      reg.publish({
        "package.json": pkgJson("acme-helper", "1.0.0"),
        "index.js": "export default 1;\n",
      }),
      reg.publish({
        "package.json": pkgJson("acme-needs-helper", "1.0.0", {
          dependencies: { "acme-helper": "^1.0.0" },
        }),
        "index.js": `import helper from "acme-helper";\n${taskset("needs-helper", "H")}`,
      }),
      reg.publish({
        "package.json": pkgJson("acme-broken", "1.0.0", { main: "dist/plugin.js" }),
        "README.md": "built output not included\n",
      }),
      (async () => {
        await reg.publish({
          "package.json": pkgJson("acme-pre", "1.0.0"),
          "index.js": taskset("pre-1.0.0", "P"),
        });
        await reg.publish({
          "package.json": pkgJson("acme-pre", "2.0.0-beta.1"),
          "index.js": taskset("pre-2.0.0-beta.1", "P"),
        }, { tag: "latest" });
      })(),
    ]);
    const b = await built;
    assert.equal(b.code, 0, b.stderr);
  }
  before(() => {
    ready = setup();
    ready.catch(() => {});
  });
  after(async () => {
    await reg?.close();
  });

  it("npm's own picker takes the prerelease latest for pkg and pkg@*", LONG, async () => {
    await ready;
    for (const spec of ["acme-pre", "acme-pre@*", "acme-pre@^1"]) {
      const r = await runProgram("npm", [
        "pack",
        "--dry-run",
        "--json",
        "--registry",
        reg.url,
        "--userconfig",
        join(root, "no-user-npmrc"),
        spec,
      ], { cwd: root, env: { PATH: process.env.PATH ?? "", NPM_CONFIG_UPDATE_NOTIFIER: "false" } });
      assert.equal(r.code, 0, r.stderr);
      const want = spec === "acme-pre@^1" ? "1.0.0" : "2.0.0-beta.1";
      assert.equal(JSON.parse(r.stdout)[0].version, want, spec);
    }
  });

  for (const host of HOSTS) {
    it(
      `${host}: resolution policy, version picking, messages, scopes, and --lock`,
      LONG,
      async () => {
        await ready;
        const dir = work(host, "plain");
        // 1. a dependency that is not bundled is refused, never installed
        const seen = reg.requests().length; // npm publish asked for every package before
        const needs = await show(host, "npm:acme-needs-helper@^1", dir);
        assert.equal(needs.code, 2, needs.stdout);
        assert.match(needs.stderr, /its own dependency "acme-helper" is missing/);
        assert.ok(
          !reg.requests().slice(seen).some((r) => /\/acme-helper\b/.test(r)),
          `the registry was asked for the dependency: ${reg.requests().slice(seen).join(", ")}`,
        );
        // 2. a prerelease latest, as npm picks it
        for (const spec of ["npm:acme-pre", "npm:acme-pre@*"]) {
          const r = await show(host, spec, dir);
          assert.equal(r.code, 0, r.stderr);
          assert.match(r.stdout, /^from npm:acme-pre@2\.0\.0-beta\.1$/m, spec);
        }
        // 3. broken and absent packages
        const broken = await show(host, "npm:acme-broken@1", dir);
        assert.equal(broken.code, 2);
        assert.match(
          broken.stderr,
          /is broken: its "main" is dist\/plugin\.js, which is not in the package/,
        );
        assert.doesNotMatch(broken.stderr, /Cannot find/);
        const absent = await show(host, "npm:@acme/absent@1", dir);
        assert.equal(absent.code, 2);
        assert.match(
          absent.stderr,
          /Cannot find taskset "npm:@acme\/absent@1": no built-in has that id and there is no npm package @acme\/absent at http:\/\/127\.0\.0\.1:\d+\//,
        );
        // 4. a private scope with the .npmrc token, JSR's layout, run names alike
        for (const spec of ["npm:@private/acme-tasks@^1", "npm:acme-tasks@^1"]) {
          const out = join(dir, `out-${spec.includes("private") ? "scoped" : "plain"}`);
          const r = await vf(host, ["eval", spec, "-m", "oracle", "--dry-run", "-o", out], dir);
          assert.equal(r.code, 0, r.stderr);
          assert.match(at(readdirSync(out), 0), /^acme-tasks--oracle--null--[0-9a-f]{8}$/);
          assert.doesNotMatch(r.stdout + r.stderr, new RegExp(reg.token));
        }
        const jsr = await show(host, "jsr:@acme/jsr-tasks@^1", dir);
        assert.equal(jsr.code, 0, jsr.stderr);
        assert.match(jsr.stdout, /^taskset "jsr-tasks" \(abi 1\)$/m);
        // 5. --lock writes the taskset and the plugged scoring function's module
        const locked = work(host, "locked");
        writeFileSync(
          join(locked, "eval.toml"),
          `model = "oracle"\n[env.taskset]\nid = "npm:acme-tasks@^1"\n` +
            `[env.taskset.task.rewards.bonus]\nfn = "npm:acme-rewards@^1:bonus"\n`,
        );
        const run = await vf(host, [
          "eval",
          "@",
          "eval.toml",
          "--lock",
          "-o",
          "out",
          "--display",
          "plain",
        ], locked);
        assert.equal(run.code, 0, run.stderr);
        assert.match(run.stdout, /bonus 2\.000/);
        const lock = JSON.parse(readFileSync(join(locked, "vf.lock"), "utf8"));
        assert.deepEqual(Object.keys(lock.plugins), ["npm:acme-rewards@^1", "npm:acme-tasks@^1"]);
        assert.equal(lock.plugins["npm:acme-rewards@^1"].version, "1.0.0");
      },
    );
  }

  it("newer versions are published", LONG, async () => {
    await ready;
    await Promise.all([
      reg.publish({
        "package.json": pkgJson("acme-rewards", "1.1.0"),
        "index.js": "export const bonus = () => 1.25;\n",
      }),
      reg.publish({
        "package.json": pkgJson("acme-tasks", "1.0.1"),
        "index.js": taskset("acme-tasks", "PROMPT-1.0.1"),
      }),
    ]);
  });

  for (const host of HOSTS) {
    it(
      `${host}: --frozen and plugins show follow vf.lock; an edited cache file is repaired`,
      LONG,
      async () => {
        await ready;
        const locked = join(root, host, "locked");
        // edit the cached plugin file the locked run imported
        const cache = join(root, `cache-${host}`, "plugins", "packages");
        const entry = readdirSync(cache).map((d) => join(cache, d, "index.js"))
          .find((f) => existsSync(f) && readFileSync(f, "utf8").includes("PROMPT-1.0.0"))!;
        writeFileSync(
          entry,
          readFileSync(entry, "utf8").replace("PROMPT-1.0.0", "TAMPERED-PROMPT"),
        );
        const frozen = await vf(host, [
          "eval",
          "@",
          "eval.toml",
          "--frozen",
          "-o",
          "out2",
          "--display",
          "plain",
        ], locked);
        assert.equal(frozen.code, 0, frozen.stderr);
        assert.match(frozen.stdout, /bonus 2\.000/, "the locked scoring function ran");
        assert.match(
          frozen.stderr,
          /failed verification \(index\.js was modified\); re-extracted acme-tasks/,
        );
        const runDir = join(locked, "out2", at(readdirSync(join(locked, "out2")), 0));
        const trace = readFileSync(join(runDir, "traces.jsonl"), "utf8");
        assert.match(trace, /PROMPT-1\.0\.0/);
        assert.doesNotMatch(trace, /TAMPERED/);
        const shown = await show(host, "npm:acme-tasks@^1", locked);
        assert.equal(shown.code, 0, shown.stderr);
        assert.match(shown.stdout, /^from npm:acme-tasks@1\.0\.0 \(pinned by .*vf\.lock\)$/m);
        // without the lock, the newer versions
        const fresh = work(host, "fresh");
        writeFileSync(join(fresh, "eval.toml"), readFileSync(join(locked, "eval.toml")));
        const newer = await vf(
          host,
          ["eval", "@", "eval.toml", "-o", "out", "--display", "plain"],
          fresh,
        );
        assert.equal(newer.code, 0, newer.stderr);
        assert.match(newer.stdout, /bonus 1\.250/);
        // a changed fn range is refused under --frozen
        writeFileSync(
          join(locked, "eval.toml"),
          readFileSync(join(locked, "eval.toml"), "utf8").replace(
            "acme-rewards@^1",
            "acme-rewards@~1.1",
          ),
        );
        const refused = await vf(host, [
          "eval",
          "@",
          "eval.toml",
          "--frozen",
          "--dry-run",
          "-o",
          "o",
        ], locked);
        assert.equal(refused.code, 2);
        assert.match(
          refused.stderr,
          /--frozen: .*vf\.lock has no entry for "npm:acme-rewards@~1\.1"/,
        );
        writeFileSync(
          join(locked, "eval.toml"),
          readFileSync(join(locked, "eval.toml"), "utf8").replace(
            "acme-rewards@~1.1",
            "acme-rewards@^1",
          ),
        );
        // a lock whose integrity differs from the registry's: both sides labelled
        const mismatch = work(host, "mismatch");
        const lock = JSON.parse(readFileSync(join(locked, "vf.lock"), "utf8"));
        lock.plugins["npm:acme-tasks@^1"].integrity = lock.plugins["npm:acme-rewards@^1"].integrity;
        writeFileSync(join(mismatch, "vf.lock"), JSON.stringify(lock));
        writeFileSync(join(mismatch, "eval.toml"), readFileSync(join(locked, "eval.toml")));
        const bad = await vf(host, ["eval", "@", "eval.toml", "--dry-run", "-o", "o"], mismatch);
        assert.equal(bad.code, 2);
        assert.match(bad.stderr, /vf\.lock has sha512-\S+, the registry has sha512-/);
      },
    );
  }

  it(
    "vf init's scaffold needs only npm packages; its own test passes with the binary as vf",
    LONG,
    async () => {
      await ready;
      const made = await runVf("binary", ["init", "taskset", "@acme/vf-scaf"], {
        cwd: root,
        binary,
      });
      assert.equal(made.code, 0, made.stderr);
      const dir = join(root, "vf-scaf");
      const pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
      assert.deepEqual(pkg.dependencies ?? {}, {}, "nothing at run time");
      assert.deepEqual(Object.keys(pkg.devDependencies).sort(), ["@types/node", "bun", "zod"]);
      // `npm install` without the network: the same npm packages, from this checkout
      mkdirSync(join(dir, "node_modules", "@types"), { recursive: true });
      symlinkSync(join(ROOT, "node_modules", "zod"), join(dir, "node_modules", "zod"));
      symlinkSync(
        join(ROOT, "node_modules", "@types", "node"),
        join(dir, "node_modules", "@types", "node"),
      );
      const env = toolchainEnv({ VF_BIN: binary, VF_CACHE_DIR: join(root, "cache-scaf") });
      const bundle = await runProgram("npm", ["run", "bundle"], { cwd: dir, env });
      assert.equal(bundle.code, 0, bundle.stderr);
      const test = await runProgram("npm", ["test"], { cwd: dir, env });
      assert.equal(test.code, 0, test.stdout + test.stderr);
      assert.match(test.stdout + test.stderr, /3 pass/);
      const npmrc = join(root, "scaf.npmrc");
      writeFileSync(npmrc, `registry=${reg.url}\n${reg.npmrc}`);
      const published = await runProgram(
        "npm",
        ["publish", "--registry", reg.url, "--userconfig", npmrc, "--ignore-scripts"],
        { cwd: dir, env: toolchainEnv({ NPM_CONFIG_UPDATE_NOTIFIER: "false" }) },
      );
      assert.equal(published.code, 0, published.stderr);
      const shown = await show("binary", "npm:@acme/vf-scaf@^0.1", work("binary", "scaf"));
      assert.equal(shown.code, 0, shown.stderr);
      assert.match(shown.stdout, /^taskset "vf-scaf" \(abi 1\)$/m);
      assert.match(shown.stdout, /^from npm:@acme\/vf-scaf@0\.1\.0$/m);
    },
  );

  it(
    "8 parallel cold-cache loads of one plugin, 10 times, across the three hosts",
    LONG,
    async () => {
      await ready;
      // Bun starts fastest; one deno run and two binaries take part in every trial
      const mix: VfHost[] = ["bun", "deno", "binary", "bun", "bun", "bun", "binary", "bun"];
      const dir = work("bun", "race");
      for (let trial = 0; trial < 10; trial++) {
        const cache = join(root, `race-cache-${trial}`);
        const results = await Promise.all(
          mix.map((host) =>
            vf(host, ["plugins", "show", "taskset", "npm:acme-tasks@1.0.0"], dir, {
              VF_CACHE_DIR: cache,
            })
          ),
        );
        results.forEach((r, i) => {
          assert.equal(r.code, 0, `trial ${trial}, ${mix[i]}: ${r.stderr}`);
          assert.match(r.stdout, /^taskset "acme-tasks" \(abi 1\)$/m);
        });
        assert.deepEqual(
          readdirSync(join(cache, "plugins", "packages")).filter((d) => d.includes(".tmp-")),
          [],
          "no temp directory is left behind",
        );
      }
    },
  );

  it(
    "offline: stale metadata is announced; a corrupt entry and tarball are named",
    LONG,
    async () => {
      await ready;
      await reg.close();
      for (const host of HOSTS) {
        const dir = join(root, host, "plain");
        const r = await show(host, "npm:acme-tasks@^1", dir);
        assert.equal(r.code, 0, r.stderr);
        assert.match(
          r.stderr,
          /is unreachable \(.*\); using the cached metadata of acme-tasks saved \S+Z, which may be stale \(it resolves \^1 to 1\.0\.1\)/,
        );
        // every extracted copy of the locked version and its tarball corrupted
        const locked = join(root, host, "locked");
        const cacheRoot = join(root, `cache-${host}`, "plugins");
        for (const d of readdirSync(join(cacheRoot, "packages"))) {
          const f = join(cacheRoot, "packages", d, "index.js");
          if (existsSync(f) && readFileSync(f, "utf8").includes("PROMPT-1.0.0")) {
            writeFileSync(f, "// corrupt\n");
          }
        }
        const lock = JSON.parse(readFileSync(join(locked, "vf.lock"), "utf8"));
        const hex = Buffer.from(lock.plugins["npm:acme-tasks@^1"].integrity.slice(7), "base64")
          .toString("hex");
        writeFileSync(join(cacheRoot, "tarballs", `${hex}.tgz`), "corrupt");
        const refused = await vf(host, [
          "eval",
          "@",
          "eval.toml",
          "--frozen",
          "--dry-run",
          "-o",
          "o",
        ], locked);
        assert.equal(refused.code, 2, refused.stdout);
        assert.match(refused.stderr, /packages\/[0-9a-f]{128} \(index\.js was modified\)/);
        assert.match(
          refused.stderr,
          /tarballs\/[0-9a-f]{128}\.tgz \(its bytes no longer match its hash\)/,
        );
        assert.match(refused.stderr, /rm -rf /);
      }
    },
  );
});
