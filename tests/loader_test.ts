import "./_builtins.ts";
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadPlugin, pickPlugin } from "../lib/plugins/load.ts";
import { normalizeId } from "../lib/plugins/specifier.ts";
import { PluginError } from "../kit/errors.ts";
import { pathOfThisRun } from "./_plugin_package.ts";

const FIXTURES = join(import.meta.dirname!, "fixtures");

async function pluginError(fn: () => Promise<unknown>): Promise<PluginError> {
  try {
    await fn();
  } catch (err) {
    assert.ok(err instanceof PluginError, `expected PluginError, got ${err}`);
    return err;
  }
  assert.fail("expected a PluginError");
}

/** A plugin module without imports, as a package or a served file would hold it. */
function plainTaskset(id: string): string {
  return `export default { kind: "taskset", abi: 1, id: ${
    JSON.stringify(id)
  }, description: "plain", ` +
    `config: null, load() { return []; } };\n`;
}

describe("normalizeId()", () => {
  it("keeps the name after the last slash, cuts the version, lowercases, folds _ and -", () => {
    assert.equal(normalizeId("acme/Reverse_Text@1.2"), "reverse-text");
    assert.equal(normalizeId("Reverse-Text"), "reverse-text");
    assert.equal(normalizeId("reverse_text"), "reverse-text");
  });
});

describe("loadPlugin() built-ins", () => {
  it("resolves owner/My-Name@1.2, My-Name and my_name to one built-in", async () => {
    const a = await loadPlugin("taskset", "acme/Reverse_Text@1.2");
    const b = await loadPlugin("taskset", "Reverse-Text");
    const c = await loadPlugin("taskset", "reverse_text");
    assert.equal(a.id, "reverse-text");
    assert.equal(a, b);
    assert.equal(b, c);
  });

  it("prefers a built-in over an installed package of the same normalized name", async () => {
    const root = mkdtempSync(join(tmpdir(), "vf-pkg-"));
    for (
      const [name, id] of <[string, string][]> [["echo", "impostor-echo"], ["ext-set", "ext-set"]]
    ) {
      mkdirSync(join(root, "node_modules", name), { recursive: true });
      writeFileSync(
        join(root, "node_modules", name, "package.json"),
        JSON.stringify({ name, main: "index.js" }),
      );
      writeFileSync(join(root, "node_modules", name, "index.js"), plainTaskset(id));
    }
    const shadowed = await loadPlugin("taskset", "echo", { cwd: root });
    assert.equal(shadowed.id, "echo");
    assert.equal(shadowed.description.includes("plain"), false);
    const ext = await loadPlugin("taskset", "ext-set", { cwd: root });
    assert.equal(ext.id, "ext-set");
  });

  it("says not found and lists the built-ins of the kind for a missing candidate", async () => {
    const e = await pluginError(() => loadPlugin("harness", "no-such-harness"));
    assert.equal(e.code, "plugin_not_found");
    assert.match(e.message, /Cannot find harness "no-such-harness"/);
    assert.match(e.hint ?? "", /bash, claude-code, codex, command, null, opencode, pi/);
    const p = await pluginError(() => loadPlugin("taskset", "./nowhere/plugin.ts"));
    assert.equal(p.code, "plugin_not_found");
    assert.match(p.hint ?? "", /echo/);
  });
});

describe("loadPlugin() export rule", () => {
  it("loads the one plugin of the kind a local file exports", async () => {
    const p = await loadPlugin("taskset", join(FIXTURES, "plugins", "knob_taskset.ts"));
    assert.equal(p.id, "knob-set");
  });

  it("names what a module exports when it exports no plugin", async () => {
    const e = await pluginError(() =>
      loadPlugin("taskset", join(FIXTURES, "plugins", "no_plugins.ts"))
    );
    assert.equal(e.code, "plugin_no_exports");
    assert.match(e.message, /exports no plugin \(it exports: answer, helper\)/);
  });

  it("names the kinds a module has when none is of the asked kind", async () => {
    const e = await pluginError(() =>
      loadPlugin("taskset", join(FIXTURES, "plugins", "only_harness.ts"))
    );
    assert.equal(e.code, "plugin_wrong_kind");
    assert.match(
      e.message,
      /exports no taskset plugin; it has harness "only-harness" \(onlyHarness\)/,
    );
  });

  it("names every plugin when several of the kind are exported (never swallowed)", async () => {
    const e = await pluginError(() =>
      loadPlugin("taskset", join(FIXTURES, "plugins", "two_tasksets.ts"))
    );
    assert.equal(e.code, "plugin_ambiguous");
    assert.match(
      e.message,
      /exports 2 taskset plugins: "first" \(default, first\), "second" \(second\)/,
    );
  });

  it("counts one object exported under two names once", () => {
    const p = { kind: "judge", abi: 1, id: "j", description: "", config: null };
    assert.equal(pickPlugin("judge", "j", { default: p, j: p }), p);
  });
});

describe("loadPlugin() import failures", () => {
  const broken = join(FIXTURES, "broken_plugins");

  it("surfaces a missing dependency of a found plugin, not 'not found'", async () => {
    const e = await pluginError(() => loadPlugin("taskset", join(broken, "missing_dep.ts")));
    assert.equal(e.code, "plugin_import_failed");
    assert.match(e.message, /no_such_dependency/);
    const pkg = await pluginError(() => loadPlugin("taskset", join(broken, "missing_pkg_dep.ts")));
    assert.equal(pkg.code, "plugin_import_failed");
    assert.match(pkg.message, /vf-no-such-package-anywhere/);
  });

  it("surfaces a throw at top level and a syntax error, naming the plugin", async () => {
    const t = await pluginError(() => loadPlugin("judge", join(broken, "throws.ts")));
    assert.equal(t.code, "plugin_import_failed");
    assert.match(t.message, /Cannot load judge ".*throws\.ts".*plugin exploded at top level/);
    const s = await pluginError(() => loadPlugin("taskset", join(broken, "syntax_error.ts")));
    assert.equal(s.code, "plugin_import_failed");
    assert.match(s.message, /syntax_error\.ts/);
  });
});

describe("loadPlugin() URL plugins", () => {
  let server: Server;
  let base = "";
  const hits: string[] = [];
  const remotePath = pathOfThisRun("remote.js");
  before(async () => {
    server = createServer((req, res) => {
      hits.push(req.url ?? "");
      if (req.url === remotePath) {
        res.writeHead(200, { "content-type": "application/javascript" });
        res.end(plainTaskset("remote-set"));
      } else {
        res.writeHead(404, { "content-type": "text/plain" });
        res.end("not found");
      }
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  // close the module loader's kept-alive connections too, or close() waits for their timeout
  after(() =>
    new Promise<void>((r) => {
      server.close(() => r());
      server.closeAllConnections();
    })
  );

  it("loads a plugin served over loopback HTTP (native under deno run, fetched elsewhere)", async () => {
    const fetch = { cacheDir: mkdtempSync(join(tmpdir(), "vf-url-cache-")) };
    const p = await loadPlugin("taskset", `${base}${remotePath}`, { fetch });
    assert.equal(p.id, "remote-set");
    assert.ok(hits.includes(remotePath));
    const missing = await pluginError(() => loadPlugin("taskset", `${base}/missing.js`, { fetch }));
    assert.equal(missing.code, "plugin_not_found");
  });
});
