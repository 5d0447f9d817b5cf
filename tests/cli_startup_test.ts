import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, normalize } from "node:path";
import { cliArgv, runProcess } from "./_cli.ts";

const ROOT = join(import.meta.dirname!, "..");

/** A module's static value imports (`import type`, `export type` and `import()` left out). */
function staticImports(code: string): string[] {
  const body = code.split("\n").filter((line) => !/^\s*(\/\/|\*|\/\*)/.test(line)).join("\n");
  const out: string[] = [];
  const FROM = /^\s*(?:import|export)\s+(?!type\b)[^;'"]*?\bfrom\s*["']([^"']+)["']/gm;
  const BARE = /^\s*import\s*["']([^"']+)["']/gm;
  for (const m of body.matchAll(FROM)) out.push(m[1]!);
  for (const m of body.matchAll(BARE)) out.push(m[1]!);
  return out;
}

/** For each `node:` module `entry` loads before it runs: the import path that reaches it. */
function nodeModulesAtStart(entry: string): Map<string, string[]> {
  const found = new Map<string, string[]>();
  const seen = new Set<string>();
  const walk = (file: string, path: string[]) => {
    if (seen.has(file)) return;
    seen.add(file);
    const code = readFileSync(join(ROOT, file), "utf8");
    for (const spec of staticImports(code)) {
      if (spec.startsWith("node:")) {
        if (!found.has(spec)) found.set(spec, [...path, file]);
      } else if (spec.startsWith(".") && spec.endsWith(".ts")) {
        const target = normalize(join(dirname(file), spec));
        assert.ok(existsSync(join(ROOT, target)), `${file} imports ${spec}, which does not exist`);
        walk(target, [...path, file]);
      }
    }
  };
  walk(entry, []);
  assert.ok(seen.size > 5, `only ${seen.size} modules found from ${entry}`);
  return found;
}

describe("CLI start-up", () => {
  it("the parser sees value imports and skips type-only and dynamic ones", () => {
    const code = [
      'import { a } from "node:fs";',
      'import type { B } from "node:http";',
      'export { c } from "./c.ts";',
      'export type { D } from "./d.ts";',
      'import "node:process";',
      'const e = await import("node:net");',
      '// import { f } from "node:os";',
      "import {",
      "  type G,",
      "  h,",
      '} from "./h.ts";',
    ].join("\n");
    assert.deepEqual(staticImports(code), ["node:fs", "./c.ts", "./h.ts", "node:process"]);
  });

  // On Deno the first `node:` module loads Node's compatibility layer (20-45 ms here): the
  // modules every command loads before it runs reach the process through kit/_runtime/host.ts
  it("the modules every command loads first import no node: module", () => {
    const found = nodeModulesAtStart("cli.ts");
    const lines = [...found].map(([spec, path]) => `${spec} via ${path.join(" -> ")}`);
    assert.deepEqual(lines, []);
  });

  it("a closed stdout ends the CLI with its own exit code and no stack trace", async () => {
    const quote = (s: string) => `'${s.replaceAll("'", "'\\''")}'`;
    const vf = cliArgv(["--help"]).map(quote).join(" ");
    const evalHelp = cliArgv(["eval", "addition", "--help"]).map(quote).join(" ");
    // `true` exits at once: each vf writes into a pipe nobody reads (EPIPE)
    const script =
      `${vf} | true; a=\${PIPESTATUS[0]}; ${evalHelp} | true; echo "$a \${PIPESTATUS[0]}"`;
    const r = await runProcess("bash", ["-c", script], { timeoutMs: 60_000 });
    assert.equal(r.stdout.trim(), "0 0", r.stderr);
    assert.doesNotMatch(r.stderr, /\bat .*:\d+:\d+|Error/, r.stderr);
  });
});
