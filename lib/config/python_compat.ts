/**
 * Reading a config Python `verifiers` v1 wrote (its `configs/eval.json`): the keys Python
 * has and verifiers-ts does not are taken in here, before validation. A key at Python's
 * default is dropped; one that only changes how Python hosts or shows a run is dropped
 * with a warning; one that would change results is refused, named. Defaults are those of
 * `verifiers/v1/configs/{cli/eval,env,harness,client,runtime}.py`,
 * `verifiers/v1/harnesses/bash/harness.py` and `verifiers/v1/runtimes/*.py` at a60a606.
 *
 * @module
 */
import { pythonJsonDumps } from "../../kit/tasks/hash.ts";
import { SUBPROCESS_ALIASES, wireRuntimeType } from "../../kit/runtime/wire.ts";
import { isPlainObject, type Json } from "./merge.ts";

/** What {@link absorbPythonKeys} found. */
export interface Absorbed {
  /** Harmless keys that were ignored. */
  warnings: string[];
  /** Keys that would change results: refused. */
  problems: string[];
  /**
   * Refusals of harness keys (`env.agent.harness.<key>`) that a harness may take as its
   * own: they stand only when the run's harness has no such key.
   */
  harnessKeys: { key: string; problem: string }[];
}

type Policy = "drop" | "warn" | "refuse";

interface Rule {
  /** Dotted path from the root. */
  path: string;
  /** Python's default (JSON); a value equal to it is dropped silently. */
  defaults: readonly unknown[];
  /** What happens to any other value. */
  otherwise: Policy;
  /** Why (shown in warnings and errors). */
  why: string;
  /** Runtime types that have the key themselves, as in Python: the rule skips them. */
  ownedBy?: readonly string[];
  /** A harness may take the key as its own (ACP agents do): refused only when it does not. */
  harnessKey?: true;
}

const SERVE_DEFAULT = {
  pool: { type: "elastic", max_workers: null, multiplex: 128 },
  address: null,
  max_concurrent: null,
};

const RULES: readonly Rule[] = [
  {
    path: "serve",
    defaults: [null, SERVE_DEFAULT],
    otherwise: "warn",
    why: "verifiers-ts runs episodes in-process (no env-server pool)",
  },
  { path: "rich", defaults: [], otherwise: "drop", why: "display only (see --display)" },
  {
    path: "env.max_concurrent_agents",
    defaults: [null, 1],
    otherwise: "warn",
    why: "a single-agent env runs one agent at a time",
  },
  {
    path: "client.type",
    defaults: ["eval"],
    otherwise: "refuse",
    why: "only the eval client exists in verifiers-ts",
  },
  {
    path: "env.agent.runtime.allow",
    defaults: [["*"]],
    otherwise: "refuse",
    why: "egress allowlists are enforced only by the docker runtime",
    // Python's DockerConfig is its one runtime config with a network policy
    ownedBy: ["docker"],
  },
  {
    path: "env.agent.runtime.block",
    defaults: [[]],
    otherwise: "refuse",
    why: "egress blocklists are enforced only by the docker runtime",
    // Python's DockerConfig is its one runtime config with a network policy
    ownedBy: ["docker"],
  },
  {
    path: "env.agent.harness.tool_timeout",
    harnessKey: true,
    defaults: [600, 600.0],
    otherwise: "refuse",
    why: "this harness has no per-tool timeout",
  },
  {
    path: "env.agent.harness.disabled_tools",
    harnessKey: true,
    defaults: [null],
    otherwise: "refuse",
    why: "this harness cannot disable its tools",
  },
  {
    path: "env.agent.harness.skills",
    harnessKey: true,
    defaults: [[]],
    otherwise: "refuse",
    why: "this harness takes no skills",
  },
  {
    path: "env.agent.harness.search",
    defaults: [false],
    otherwise: "refuse",
    why: "the bash harness has no web search tool",
  },
];

function parentOf(root: Json, path: string[]): Record<string, unknown> | undefined {
  let node: unknown = root;
  for (const seg of path.slice(0, -1)) {
    if (!isPlainObject(node)) return undefined;
    node = node[seg];
  }
  return isPlainObject(node) ? node : undefined;
}

const same = (a: unknown, b: unknown) => pythonJsonDumps(a) === pythonJsonDumps(b);

/**
 * Takes Python-only keys out of `data` (merged file layers, mutated in place), and writes
 * runtime type `local` as `subprocess`. `push = true` (Python's default) becomes false
 * with a warning: verifiers-ts has no results upload.
 */
export function absorbPythonKeys(data: Json, source: (path: string) => string): Absorbed {
  const out: Absorbed = { warnings: [], problems: [], harnessKeys: [] };
  if (!isPlainObject(data)) return out;
  for (const rule of RULES) {
    const path = rule.path.split(".");
    const parent = parentOf(data, path);
    const key = path.at(-1);
    if (!parent || key === undefined || !(key in parent)) continue;
    if (rule.ownedBy && typeof parent.type === "string" && rule.ownedBy.includes(parent.type)) {
      continue;
    }
    const value = parent[key];
    const isDefault = rule.defaults.some((d) => same(d, value));
    if (isDefault || rule.otherwise === "drop") {
      delete parent[key];
      continue;
    }
    if (rule.otherwise === "warn") {
      delete parent[key];
      out.warnings.push(`${source(rule.path)}: ignored — ${rule.why}`);
    } else {
      const problem = `${source(rule.path)}: ${pythonJsonDumps(value)} is a Python verifiers ` +
        `setting verifiers-ts does not support (${rule.why}); remove it or set Python's default`;
      if (rule.harnessKey) out.harnessKeys.push({ key, problem });
      else out.problems.push(problem);
    }
  }
  const root = data as Record<string, unknown>;
  if (root.push === true) {
    root.push = false;
    out.warnings.push(`${source("push")}: ignored — verifiers-ts does not upload results`);
  }
  const runtime = parentOf(data, ["env", "agent", "runtime", "type"]);
  if (runtime && typeof runtime.type === "string" && SUBPROCESS_ALIASES.includes(runtime.type)) {
    runtime.type = wireRuntimeType(runtime.type);
  }
  // Python's `harness = None` means the taskset's default harness, as a missing key does here.
  const agent = parentOf(data, ["env", "agent", "harness"]);
  if (agent && agent.harness === null) delete agent.harness;
  return out;
}
