import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { rmSync } from "node:fs";
import { layerViolations } from "../scripts/check_layers.ts";
import { sourceTree } from "./_source_tree.ts";

describe("scripts/check_layers.ts", () => {
  it("finds no wrong-way import in this checkout", () => {
    assert.deepEqual(layerViolations(), []);
  });

  it("names each import that crosses a layer the wrong way, and only those", () => {
    const root = sourceTree({
      "kit/mod.ts": `export * from "./errors.ts";\n`,
      "kit/errors.ts": `import "../lib/run/plan.ts";\n`,
      "lib/run/plan.ts": `import "../../kit/mod.ts";\nimport "../cli/output.ts";\n`,
      "lib/run/root.ts": `const m = await import("../../mod.ts");\n`,
      "lib/plugins/load.ts": `import "../../plugins/tasksets/a/mod.ts";\n`,
      "lib/cli/output.ts": `import "../../plugins/builtins.ts";\n`,
      "plugins/builtins.ts": `import "./tasksets/a/mod.ts";\n`,
      "plugins/tasksets/a/mod.ts": `import "../../../kit/mod.ts";\nimport "./rows.ts";\n` +
        `import "../../../kit/errors.ts";\n// import "../../../lib/run/plan.ts";\n`,
      "plugins/tasksets/a/rows.ts": `import "../b/mod.ts";\n`,
      "plugins/tasksets/b/mod.ts": `import "../../../mod.ts";\n`,
    }, "vf-layers-");
    try {
      const found = layerViolations(root).map((v) => `${v.file} -> ${v.target}`).sort();
      assert.deepEqual(found, [
        "kit/errors.ts -> lib/run/plan.ts",
        "lib/plugins/load.ts -> plugins/tasksets/a/mod.ts",
        "lib/run/plan.ts -> lib/cli/output.ts",
        "lib/run/root.ts -> mod.ts",
        "plugins/tasksets/a/mod.ts -> kit/errors.ts",
        "plugins/tasksets/a/rows.ts -> plugins/tasksets/b/mod.ts",
      ]);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
