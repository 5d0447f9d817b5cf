import "./_builtins.ts";
import { before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { InputError } from "../kit/errors.ts";
import { initParams } from "../lib/cli/init_command.ts";
import { BUNDLE_BANNER } from "../lib/cli/init_templates.ts";
import { INIT_KINDS } from "../lib/cli/init_plugin_templates.ts";
import { runtimeName } from "../kit/_runtime/runtime_name.ts";
import { runCli } from "./_cli.ts";
import {
  installPluginDeps,
  runProgram,
  type RunResult,
  TOOL_BIN,
  toolchainEnv,
  type VfHost,
  vfWrapper,
} from "./_plugin_package.ts";

function inputError(fn: () => unknown): InputError {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof InputError, `expected InputError, got ${err}`);
    return err;
  }
  assert.fail("expected an InputError");
}

describe("vf init: names and refusals", () => {
  it("derives the plugin id and the JSR name from the package name", () => {
    assert.deepEqual(initParams("taskset", "@acme/vf-mathsets"), {
      kind: "taskset",
      name: "@acme/vf-mathsets",
      jsrName: "@acme/vf-mathsets",
      id: "vf-mathsets",
    });
    const bare = initParams("judge", "my_judge.v2");
    assert.equal(bare.id, "my-judge.v2");
    assert.equal(bare.jsrName, "@your-scope/my-judge-v2");
  });

  it("refuses an unknown kind and an invalid package name", () => {
    assert.match(inputError(() => initParams("scorer", "x")).message, /unknown plugin kind/);
    assert.match(inputError(() => initParams("taskset", "Bad Name")).message, /not a valid/);
    assert.equal(inputError(() => initParams("taskset", "@acme")).exitCode, 2);
  });

  it(
    "writes the package once and refuses a non-empty directory (exit 2)",
    { timeout: 60_000 },
    async () => {
      const cwd = mkdtempSync(join(tmpdir(), "vf-init-cli-"));
      const first = await runCli(["init", "taskset", "@acme/vf-counting"], {
        cwd,
        env: { VF_CACHE_DIR: join(cwd, "cache") },
      });
      assert.equal(first.code, 0, first.stderr);
      const dir = join(cwd, "vf-counting");
      assert.equal(first.stdout.trim(), dir);
      for (const f of ["package.json", "deno.json", "mod.ts", "mod_test.ts", "plugin.d.ts"]) {
        assert.ok(existsSync(join(dir, f)), f);
      }
      const pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
      assert.equal(pkg.name, "@acme/vf-counting");
      assert.deepEqual(pkg.verifiers, { abi: 1, kind: "taskset", id: "vf-counting" });
      assert.equal(pkg.exports["./plugin"].default, "./dist/plugin.js");
      assert.match(pkg.scripts.bundle, /--format=esm/);
      const deno = JSON.parse(readFileSync(join(dir, "deno.json"), "utf8"));
      assert.equal(deno.name, "@acme/vf-counting");
      assert.equal(deno.exports["./plugin"], "./dist/plugin.js");
      const again = await runCli(["init", "taskset", "@acme/vf-counting"], {
        cwd,
        env: { VF_CACHE_DIR: join(cwd, "cache") },
      });
      assert.equal(again.code, 2);
      assert.match(again.stderr, /is not empty/);
      const other = await runCli(["init", "judge", "j", "--dir", "custom/place"], {
        cwd,
        env: { VF_CACHE_DIR: join(cwd, "cache") },
      });
      assert.equal(other.code, 0, other.stderr);
      assert.ok(existsSync(join(cwd, "custom", "place", "mod.ts")));
    },
  );
});

describe("vf init: every kind bundles, lints and passes its own test through vf", () => {
  const host: VfHost = runtimeName() === "deno" ? "deno" : "bun";
  const outcomes = new Map<string, Promise<Record<string, RunResult | string>>>();

  /** Scaffolds, "installs", bundles, lints and tests one kind's package. */
  async function pipeline(root: string, vfBin: string, kind: string) {
    const out: Record<string, RunResult | string> = {};
    const made = await runCli(["init", kind, `@acme/vf-demo-${kind}`], {
      cwd: root,
      env: { VF_CACHE_DIR: join(root, "cache") },
    });
    out.init = { code: made.code, stdout: made.stdout, stderr: made.stderr };
    if (made.code !== 0) return out;
    const dir = join(root, `vf-demo-${kind}`);
    installPluginDeps(dir);
    const env = toolchainEnv({ VF_BIN: vfBin, VF_CACHE_DIR: join(root, "cache") });
    out.bundle = await runProgram("npm", ["run", "bundle"], { cwd: dir, env });
    if (out.bundle.code !== 0) return out;
    out.bundled = readFileSync(join(dir, "dist", "plugin.js"), "utf8");
    // the deno.json names a JSR package; point its library import at this checkout
    const deno = JSON.parse(readFileSync(join(dir, "deno.json"), "utf8"));
    deno.imports["@verifiers/verifiers-ts"] = join(import.meta.dirname!, "..", "mod.ts");
    writeFileSync(join(dir, "deno.local.json"), JSON.stringify(deno));
    const denoBin = join(TOOL_BIN, "deno");
    out.fmt = await runProgram(denoBin, ["fmt", "--check", "mod.ts", "mod_test.ts"], {
      cwd: dir,
      env,
    });
    out.lint = await runProgram(denoBin, ["lint", "--config", "deno.local.json"], {
      cwd: dir,
      env,
    });
    out.test = host === "deno"
      ? await runProgram(denoBin, ["test", "-A", "--no-check", "mod_test.ts"], { cwd: dir, env })
      : await runProgram(join(TOOL_BIN, "bun"), ["test", "mod_test.ts"], { cwd: dir, env });
    return out;
  }

  before(() => {
    const root = mkdtempSync(join(tmpdir(), "vf-init-"));
    const vfBin = vfWrapper(join(root, "bin"), host);
    for (const kind of INIT_KINDS) outcomes.set(kind, pipeline(root, vfBin, kind));
  });

  for (const kind of INIT_KINDS) {
    it(`${kind}: bundle, deno fmt/lint clean, scaffolded test green on ${host}`, {
      timeout: 120_000,
    }, async () => {
      const o = await outcomes.get(kind)!;
      const step = (name: string) => {
        const r = o[name] as RunResult | undefined;
        assert.ok(r, `${name} did not run: ${JSON.stringify(o)}`);
        assert.equal(r.code, 0, `${name}: ${r.stdout}${r.stderr}`);
        return r;
      };
      step("init");
      step("bundle");
      const bundled = o.bundled as string;
      assert.ok(bundled.startsWith(BUNDLE_BANNER));
      assert.doesNotMatch(bundled, /^import .* from "(?!node:)/m, "bundle imports a package");
      step("fmt");
      step("lint");
      const test = step("test");
      assert.match(test.stdout + test.stderr, /dist\/plugin\.js/);
    });
  }
});
