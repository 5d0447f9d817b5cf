/**
 * A real external distribution: a taskset package made by `vf init`, bundled and packed
 * by `npm pack`, served by a loopback registry speaking the npm protocol (and by a
 * JSR-npm-compatible endpoint and a plain URL), then loaded by specifier through full
 * config narrowing and a complete `vf eval` — under `deno run`, under Bun and with the
 * `bun build --compile` binary. Then the failure modes on every host, and offline reuse.
 */
import "./_builtins.ts";
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCli } from "./_cli.ts";
import {
  BUILD_BINARY,
  installPluginDeps,
  pathOfThisRun,
  runProgram,
  type RunResult,
  runVf,
  TOOL_BIN,
  toolchainEnv,
  type VfHost,
} from "./_plugin_package.ts";
import { type NpmRegistry, packTarball, startNpmRegistry } from "./fakes/npm_registry.ts";
import { gunzip, readTar } from "../lib/plugins/fetch/tar.ts";
import { at } from "./_assert.ts";

const HOSTS: VfHost[] = ["deno", "bun", "binary"];
const LONG = { timeout: 180_000 };
const NPM_SPEC = "npm:@acme/vf-mathsets@^0.1";
const JSR_SPEC = "jsr:@acme/vf-mathsets@^0.1";

function onlyRun(outDir: string): string {
  const runs = readdirSync(outDir);
  assert.equal(runs.length, 1, `expected one run directory in ${outDir}: ${runs.join(", ")}`);
  return join(outDir, at(runs, 0));
}

describe("external plugins: vf init -> npm pack -> registry -> vf eval", () => {
  let root = "";
  let work = "";
  let binary = "";
  let reg: NpmRegistry;
  let jsr: NpmRegistry;
  let server: Server;
  let urlSpec = "";
  let bundle = "";
  let tgz = new Uint8Array();

  const env = (host: VfHost): Record<string, string> => ({
    NPM_CONFIG_REGISTRY: reg.url, // the user's npm setting, honoured
    NPM_CONFIG_USERCONFIG: join(root, "no-user-npmrc"),
    VF_NPM_REGISTRY: "",
    VF_JSR_REGISTRY: jsr.url,
    VF_CACHE_DIR: join(root, `cache-${host}`),
  });
  const vf = (host: VfHost, args: string[], cwd = work): Promise<RunResult> =>
    runVf(host, args, { cwd, env: env(host), binary });

  /** A complete oracle run of `spec` with a narrowed plugin flag; checks the results. */
  async function fullRun(host: VfHost, spec: string, tag: string) {
    const out = join(root, `out-${tag}-${host}`);
    const r = await vf(host, [
      "eval",
      spec,
      "-m",
      "oracle",
      "--env.taskset.count",
      "4",
      "-o",
      out,
      "--display",
      "plain",
    ]);
    assert.equal(r.code, 0, `${host} ${spec}\n${r.stdout}\n${r.stderr}`);
    assert.match(r.stdout, /^reward +1\.000$/m);
    const run = onlyRun(out);
    const lines = readFileSync(join(run, "traces.jsonl"), "utf8").trim().split("\n");
    assert.equal(lines.length, 4);
    const saved = JSON.parse(readFileSync(join(run, "configs", "eval.json"), "utf8"));
    assert.equal(saved.env.taskset.id, spec);
    assert.equal(saved.env.taskset.count, 4);
    assert.equal(saved.env.taskset.max_operand, 99, "the plugin's own default was applied");
    assert.equal(saved.env.agent.harness.id, "null", "the plugin's default harness was used");
    return { out, run };
  }

  /** Builds the package, the binary and the servers (started in before(), awaited per test). */
  async function setup(): Promise<void> {
    root = mkdtempSync(join(tmpdir(), "vf-ext-"));
    work = join(root, "work");
    mkdirSync(work);
    binary = join(root, "bin", "vf");
    const built = runProgram(
      "bash",
      [BUILD_BINARY, binary], // the binary as it ships
      { cwd: root }, // an interrupted build leaves its temp file here, not in the checkout
    );
    // the package, as its author makes it
    const made = await runCli(["init", "taskset", "@acme/vf-mathsets"], {
      cwd: root,
      env: { VF_CACHE_DIR: join(root, "cache-init") },
    });
    assert.equal(made.code, 0, made.stderr);
    const pkg = join(root, "vf-mathsets");
    installPluginDeps(pkg);
    const packed = await runProgram("npm", ["pack", "--pack-destination", root], {
      cwd: pkg,
      env: toolchainEnv(),
    });
    assert.equal(packed.code, 0, packed.stderr);
    tgz = new Uint8Array(readFileSync(join(root, "acme-vf-mathsets-0.1.0.tgz")));
    bundle = readFileSync(join(pkg, "dist", "plugin.js"), "utf8");
    // the npm registry: the packed package, a tampered one, one missing a dependency
    reg = await startNpmRegistry();
    reg.publish("@acme/vf-mathsets", "0.1.0", tgz);
    const plain = (name: string, body: string) =>
      packTarball({
        "package.json": JSON.stringify({
          name,
          version: "1.0.0",
          type: "module",
          main: "plugin.js",
        }),
        "plugin.js": body,
      });
    reg.publish("@acme/vf-tampered", "1.0.0", plain("@acme/vf-tampered", bundle));
    reg.tamper("@acme/vf-tampered", "1.0.0", plain("@acme/vf-tampered", bundle + "\n// evil"));
    reg.publish(
      "@acme/vf-needs-dep",
      "1.0.0",
      plain("@acme/vf-needs-dep", `import helper from "vf-missing-helper";\n${bundle}`),
      { dependencies: { "vf-missing-helper": "^1.0.0" } },
    );
    // JSR's npm-compatible endpoint: its tarball holds the transpiled source (whose
    // imports are not installed) and the ./plugin export (the bundle)
    const transpiled = await runProgram(join(TOOL_BIN, "bun"), [
      "build",
      "--no-bundle",
      join(pkg, "mod.ts"),
      "--outfile",
      join(root, "jsr-mod.js"),
    ]);
    assert.equal(transpiled.code, 0, transpiled.stderr);
    jsr = await startNpmRegistry({ mode: "jsr" });
    jsr.publish(
      "@jsr/acme__vf-mathsets",
      "0.1.0",
      packTarball({
        "package.json": JSON.stringify({
          name: "@jsr/acme__vf-mathsets",
          version: "0.1.0",
          type: "module",
          dependencies: { "@jsr/verifiers__verifiers-ts": "^0.1.0", zod: "^4" },
          exports: {
            ".": { types: "./_dist/mod.d.ts", default: "./mod.js" },
            "./plugin": { types: "./plugin.d.ts", default: "./dist/plugin.js" },
          },
        }),
        "mod.js": readFileSync(join(root, "jsr-mod.js"), "utf8"),
        "plugin.d.ts": readFileSync(join(pkg, "plugin.d.ts"), "utf8"),
        "dist/plugin.js": bundle,
      }),
    );
    // a plain URL
    const bundlePath = pathOfThisRun("vf-mathsets.js");
    server = createServer((req, res) => {
      if (req.url === bundlePath) {
        res.writeHead(200, { "content-type": "text/javascript" });
        res.end(bundle);
      } else {
        res.writeHead(404, { "content-type": "text/plain" });
        res.end("not found");
      }
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    urlSpec = `http://127.0.0.1:${(server.address() as AddressInfo).port}${bundlePath}`;
    const b = await built;
    assert.equal(b.code, 0, b.stderr);
  }

  let ready: Promise<void>;
  before(() => {
    ready = setup();
    ready.catch(() => {}); // reported by the first test that awaits it
  });

  after(async () => {
    await reg?.close();
    await jsr?.close();
    if (server?.listening) {
      server.closeAllConnections?.();
      await new Promise<void>((r) => server.close(() => r()));
    }
    if (root) rmSync(root, { recursive: true, force: true }); // the package, binary and caches: ~115 MB
  });

  it("packs what vf init scaffolded: the self-contained bundle is the entry", LONG, async () => {
    await ready;
    const files = readTar(gunzip(tgz)).map((e) => e.path).sort();
    assert.deepEqual(files, [
      "package/README.md",
      "package/abi.ts",
      "package/dist/plugin.js",
      "package/mod.ts",
      "package/package.json",
      "package/plugin.d.ts",
    ]);
    assert.doesNotMatch(bundle, /^import .* from "(?!node:)/m);
  });

  for (const host of HOSTS) {
    it(`${host}: npm: specifier -> narrowed config -> complete run`, LONG, async () => {
      await ready;
      await fullRun(host, NPM_SPEC, "npm");
      if (host !== "binary") return;
      const bad = await vf(host, ["eval", NPM_SPEC, "-m", "oracle", "--env.taskset.count", "0"]);
      assert.equal(bad.code, 2);
      assert.match(bad.stderr, /--env\.taskset\.count: Too small/);
    });

    it(`${host}: jsr: specifier through the npm-compatible endpoint`, LONG, async () => {
      await ready;
      await fullRun(host, JSR_SPEC, "jsr");
    });

    it(`${host}: plain URL`, LONG, async () => {
      await ready;
      await fullRun(host, urlSpec, "url");
    });

    it(`${host}: tampered tarball, missing own dependency, absent package`, LONG, async () => {
      await ready;
      // one launch, three plugins, three distinct errors (all reported at once)
      const r = await vf(host, [
        "eval",
        "npm:@acme/vf-tampered@1",
        "--env.agent.harness.id",
        "npm:@acme/vf-nothing@1",
        "--env.taskset.task.judges",
        JSON.stringify([{ id: "npm:@acme/vf-needs-dep@1" }]),
        "-m",
        "oracle",
      ]);
      assert.equal(r.code, 2, r.stderr);
      assert.match(
        r.stderr,
        /Cannot load taskset "npm:@acme\/vf-tampered@1": integrity check failed/,
      );
      assert.match(r.stderr, /Cannot find harness "npm:@acme\/vf-nothing@1"/);
      assert.match(
        r.stderr,
        /Cannot load judge "npm:@acme\/vf-needs-dep@1": its own dependency "vf-missing-helper" is missing/,
      );
    });

    it(`${host}: --lock, then --frozen refuses a changed range`, LONG, async () => {
      await ready;
      const dir = join(root, `frozen-${host}`);
      mkdirSync(dir);
      const cfg = (spec: string) =>
        writeFileSync(join(dir, "eval.toml"), `model = "oracle"\n[env.taskset]\nid = "${spec}"\n`);
      cfg(NPM_SPEC);
      const locked = await vf(
        host,
        ["eval", "@", "eval.toml", "--lock", "--dry-run", "-o", "o"],
        dir,
      );
      assert.equal(locked.code, 0, locked.stderr);
      const lock = JSON.parse(readFileSync(join(dir, "vf.lock"), "utf8"));
      assert.equal(lock.plugins[NPM_SPEC].version, "0.1.0");
      cfg("npm:@acme/vf-mathsets@~0.1.0");
      const frozen = await vf(
        host,
        ["eval", "@", "eval.toml", "--frozen", "--dry-run", "-o", "o"],
        dir,
      );
      assert.equal(frozen.code, 2);
      assert.match(
        frozen.stderr,
        /--frozen: .*vf\.lock has no entry for "npm:@acme\/vf-mathsets@~0\.1\.0"/,
      );
    });
  }

  it(
    "offline: with the registries and the URL server gone, every host loads from its cache",
    LONG,
    async () => {
      await ready;
      await reg.close();
      await jsr.close();
      server.closeAllConnections?.();
      await new Promise<void>((r) => server.close(() => r()));
      for (const host of HOSTS) {
        const specs: [string, string][] = [[NPM_SPEC, "npm"], [JSR_SPEC, "jsr"], [urlSpec, "url"]];
        for (const [spec, tag] of specs) {
          const out = join(root, `offline-${tag}-${host}`);
          const r = await vf(host, [
            "eval",
            spec,
            "-m",
            "oracle",
            "-n",
            "2",
            "-o",
            out,
            "--display",
            "plain",
          ]);
          assert.equal(r.code, 0, `${host} ${spec}\n${r.stderr}`);
          assert.match(r.stdout, /^reward +1\.000$/m);
          assert.ok(existsSync(join(onlyRun(out), "traces.jsonl")));
        }
      }
    },
  );
});
