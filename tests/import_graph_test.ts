/**
 * scripts/import_graph.ts on small checkouts whose figures are known by hand: levels of the
 * condensed folder graph, the fewest folder edges that leave no cycle, and lines per layer.
 */
import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { rmSync } from "node:fs";
import { importGraph, nodeOf } from "../scripts/import_graph.ts";
import { sourceTree } from "./_source_tree.ts";

const roots: string[] = [];
after(() => {
  for (const r of roots) rmSync(r, { recursive: true, force: true });
});

/** A checkout made of `files` (path → source). */
function checkout(files: Record<string, string>): string {
  const root = sourceTree(files, "vf-import-graph-");
  roots.push(root);
  return root;
}

describe("import_graph", () => {
  it("names the folder node of a file", () => {
    assert.equal(nodeOf("kit/errors.ts"), "kit/errors.ts");
    assert.equal(nodeOf("kit/util/sleep.ts"), "kit/util");
    assert.equal(nodeOf("lib/plugins/fetch/tar.ts"), "lib/plugins");
    assert.equal(nodeOf("plugins/builtins.ts"), "plugins/builtins.ts");
    assert.equal(nodeOf("plugins/runtimes/prime/http.ts"), "plugins/runtimes/prime");
    assert.equal(nodeOf("mod.ts"), "mod.ts");
  });

  it("counts levels along the longest chain, and no back edge without a cycle", () => {
    const g = importGraph(checkout({
      "mod.ts": 'export * from "./lib/run/a.ts";\n',
      "lib/run/a.ts": 'import "../config/b.ts";\nimport "../../kit/util/c.ts";\n',
      "lib/config/b.ts": 'import { c } from "../../kit/util/c.ts";\n',
      "kit/util/c.ts": "export const c = 1;\n",
    }));
    assert.equal(g.levels, 4); // mod.ts → lib/run → lib/config → kit/util
    assert.deepEqual(g.backArcs, []);
    assert.equal(g.levelsWithout, 4);
    assert.equal(g.edges, 4);
  });

  it("condenses a cycle to one level and names the fewest edges that break it", () => {
    const g = importGraph(checkout({
      // lib/a ⇄ lib/b: one import back up (b → a) against two down (a → b)
      "lib/a/x.ts": 'import "../b/y.ts";\nimport "../b/z.ts";\n',
      "lib/b/y.ts": 'import "../a/x.ts";\n',
      "lib/b/z.ts": 'import "../../kit/util/w.ts";\n',
      "kit/util/w.ts": '// a comment: import "../../lib/a/x.ts" is not an import\n',
    }));
    assert.deepEqual(g.cycles, [["lib/a", "lib/b"]]);
    assert.equal(g.levels, 2); // {lib/a, lib/b} → kit/util
    assert.deepEqual(g.backArcs.map((a) => a.edge), ["lib/b -> lib/a"]);
    assert.deepEqual(g.backArcs[0]!.imports, ["lib/b/y.ts -> lib/a/x.ts"]);
    assert.equal(g.levelsWithout, 3);
  });

  it("counts lines per layer", () => {
    const g = importGraph(checkout({
      "kit/a.ts": "1\n2\n",
      "lib/run/b.ts": "1\n",
      "lib/cli/c.ts": "1\n2\n3\n",
      "plugins/tasksets/d/mod.ts": "1\n2\n3\n4\n",
      "cli.ts": "1\n",
    }));
    assert.deepEqual(g.lines, {
      "kit": 2,
      "lib engine": 1,
      "lib/cli": 3,
      "plugins": 4,
      "roots (cli.ts, mod.ts)": 1,
    });
  });
});
