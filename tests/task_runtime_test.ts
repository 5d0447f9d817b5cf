/**
 * A task's image, workdir, resources and network policy applied to the run's runtime
 * config as Python's `resolve_runtime_config` does (`verifiers/v1/utils/compile.py@a60a606`),
 * against the real schemas of the built-in runtimes.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { TaskError } from "../kit/errors.ts";
import type { RuntimeConfig, RuntimePlugin } from "../kit/contract.ts";
import { taskRuntimeConfig } from "../lib/rollout/task_runtime.ts";
import docker from "../plugins/runtimes/docker/mod.ts";
import local from "../plugins/runtimes/local/mod.ts";
import modal from "../plugins/runtimes/modal/mod.ts";
import prime from "../plugins/runtimes/prime/mod.ts";

function resolved(plugin: RuntimePlugin, settings: Record<string, unknown> = {}): RuntimeConfig {
  return { ...plugin.config.parse(settings), type: plugin.id } as RuntimeConfig;
}

function apply(
  plugin: RuntimePlugin,
  config: RuntimeConfig,
  task: Record<string, unknown>,
  warnings: string[] = [],
  warned = new Set<string>(),
): RuntimeConfig {
  return taskRuntimeConfig(
    plugin,
    config,
    { prompt: "p", idx: 7, ...task },
    (m) => warnings.push(m),
    warned,
  );
}

describe("taskRuntimeConfig()", () => {
  it("returns the run's config itself when the task asks nothing of its runtime", () => {
    const config = resolved(docker);
    assert.equal(apply(docker, config, { image: null, network_allow: ["*"] }), config);
  });

  it("gives a task its image on every runtime with one, and refuses it on subprocess", () => {
    for (const plugin of [docker, prime, modal] as RuntimePlugin[]) {
      const out = apply(plugin, resolved(plugin, { image: "run:image" }), { image: "task:image" });
      assert.equal(out.image, "task:image", plugin.id);
    }
    assert.throws(
      () => apply(local, resolved(local), { image: "task:image" }),
      (e: unknown) =>
        e instanceof TaskError && /task 7 requires image "task:image"/.test(e.message) &&
        /subprocess runtime has no container/.test(e.message),
    );
  });

  it("applies workdir and resources only where the config kept the default", () => {
    const task = { workdir: "/task", resources: { memory: 0.5, cpu: 2, disk: 9 } };
    const fresh = apply(docker, resolved(docker), task);
    assert.deepEqual([fresh.workdir, fresh.memory, fresh.cpu, fresh.disk], ["/task", 0.5, 2, 9]);
    const set = apply(docker, resolved(docker, { workdir: "/mine", memory: 4 }), task);
    assert.deepEqual([set.workdir, set.memory, set.cpu], ["/mine", 4, 2]);
    const p = apply(prime, resolved(prime, { cpu: 4 }), { resources: { cpu: 1.5, memory: 8 } });
    assert.deepEqual([p.cpu, p.memory], [4, 8]);
  });

  it("ignores a resource the runtime lacks, with one warning per runtime and resource", () => {
    const warnings: string[] = [];
    const warned = new Set<string>();
    const config = resolved(local);
    for (let i = 0; i < 3; i++) {
      assert.equal(apply(local, config, { resources: { memory: 1 } }, warnings, warned), config);
    }
    assert.deepEqual(warnings, [
      `runtime "subprocess" doesn't support resource "memory"; ignoring it`,
    ]);
  });

  it("composes a task's network policy with the runtime's as Python does", () => {
    const open = apply(docker, resolved(docker), { network_allow: ["a.com", "b.com"] });
    assert.deepEqual([open.allow, open.block], [["a.com", "b.com"], []]);
    const narrowed = apply(docker, resolved(docker, { allow: ["a.com"] }), {
      network_allow: ["a.com", "b.com"],
    });
    assert.deepEqual(narrowed.allow, ["a.com"], "a task never widens a concrete allowlist");
    const blocked = apply(docker, resolved(docker, { block: ["x.com"] }), {
      network_block: ["y.com", "x.com"],
    });
    assert.deepEqual([blocked.allow, blocked.block], [["*"], ["y.com", "x.com"]]);
    assert.throws(
      () => apply(prime, resolved(prime), { network_block: ["*"] }),
      (e: unknown) => e instanceof TaskError && /prime runtime does not support/.test(e.message),
    );
  });
});
