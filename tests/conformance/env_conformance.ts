/**
 * The shared conformance suite of the {@link EnvPlugin} contract (kit/env_contract.ts).
 * Every env calls {@link envConformance}: its shape and its roles must be what the engine
 * and Python's env configs take (role names that are config keys and shadow no common
 * `[env]` key, defaults a seat section accepts); played against recording agents it must
 * start at least one run, only of its declared roles, and judge across the traces with
 * finite numbers; and run end to end by the engine against a strict loopback model, every
 * episode must be ok, its traces named for the env's roles, and the outputs readable by
 * Python v1's models.
 *
 * @module
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import process from "node:process";
import {
  envClassName,
  type EnvInteraction,
  type EnvPlugin,
  envRoles,
  type EnvRunOptions,
} from "../../kit/env_contract.ts";
import type { Trace } from "../../kit/trace/types.ts";
import type { TaskData } from "../../kit/tasks/task_data.ts";
import { buildEvalConfigSchema } from "../../lib/config/eval_config.ts";
import { newTrace, traceTask } from "../../lib/rollout/new_trace.ts";
import { startFakeOpenAI } from "../fakes/openai_server.ts";
import { evalInProcess } from "../_eval.ts";

/** What an env needs to be checked. */
export interface EnvConformanceCase {
  plugin: EnvPlugin;
  /** The env's own keys for the runs (`{ n: 2 }`). @default {} */
  config?: Record<string, string | number>;
  /** More flags for the end-to-end run (`["--env.user.max-turns", "2"]`). @default [] */
  flags?: string[];
  /** How the run names the env (a path for an env not built in). @default its id */
  envId?: string;
}

/** `[env]` keys of Python's `EnvConfig` a role may not shadow (verifiers/v1/configs/env.py). */
const COMMON_KEYS = [
  "id",
  "taskset",
  "timeout",
  "retries",
  "max_concurrent_agents",
  "interception",
];

const TASK: TaskData = { idx: 0, prompt: "Say hi", answer: "hi" };

/** Recording agents: each run resolves with a fresh trace; an interaction ends after 3 turns. */
function recordingAgents(roles: string[]) {
  const runs: string[] = [];
  const traces: Trace[] = [];
  const trace = (role: string, options: EnvRunOptions): Trace => {
    const t = newTrace(traceTask("Task", options.task ?? TASK), {}, "subprocess", role);
    t.ok = true;
    t.is_completed = true;
    traces.push(t);
    return t;
  };
  const seat = (role: string) => ({
    run: (options: EnvRunOptions = {}) => {
      runs.push(role);
      return Promise.resolve(trace(role, options));
    },
    interaction: (options: EnvRunOptions = {}): Promise<EnvInteraction> => {
      runs.push(role);
      let turns = 0;
      return Promise.resolve({
        turn: () => Promise.resolve({ lastReply: `reply ${++turns}`, terminated: turns >= 3 }),
        close: () => Promise.resolve(trace(role, options)),
      });
    },
  });
  const seats = Object.fromEntries(roles.map((r) => [r, seat(r)]));
  const agents = new Proxy({ ...seats, agent: seats[roles[0]!]! }, {
    get(target, key) {
      if (typeof key === "string" && !(key in target)) {
        throw new Error(`the env asked for role ${JSON.stringify(key)}, which it does not declare`);
      }
      return Reflect.get(target, key);
    },
  });
  return { agents, runs, traces };
}

/** Declares `describe(label + " env conformance")`: the behaviour every env must have. */
export function envConformance(label: string, c: EnvConformanceCase): void {
  const { plugin } = c;
  const roles = envRoles(plugin).map(([r]) => r);
  const own = c.config ?? {};
  describe(`${label} env conformance`, () => {
    it("is an env plugin with an id, a description and a Python class name", () => {
      assert.equal(plugin.kind, "env");
      assert.equal(plugin.abi, 1);
      assert.match(plugin.id, /^[a-z][a-z0-9-]*$/);
      assert.ok(plugin.description.trim().length > 0);
      assert.match(envClassName(plugin), /^[A-Z][A-Za-z0-9]*Env$/);
      assert.ok(plugin.config.safeParse(own).success, "its own keys parse");
    });

    it("declares roles that are config keys, shadow no common key, with defaults a seat takes", () => {
      assert.ok(roles.length >= 1);
      for (const role of roles) {
        assert.match(role, /^[a-z][a-z0-9_]*$/, `role ${role}`);
        assert.ok(!COMMON_KEYS.includes(role), `role ${role} shadows env.${role}`);
        assert.ok(!(role in plugin.config.shape), `role ${role} is also one of its own keys`);
      }
      const extra = Object.fromEntries(roles.filter((r) => r !== "agent").map((r) => [r, {}]));
      const schema = buildEvalConfigSchema({ env: plugin.config, roles: extra });
      const sections = Object.fromEntries(envRoles(plugin).map(([r, s]) => [r, s.defaults ?? {}]));
      const parsed = schema.safeParse({ env: { id: plugin.id, ...own, ...sections } });
      assert.ok(parsed.success, parsed.success ? "" : parsed.error.message);
    });

    it("plays at least one run, of its declared roles only, and judges with finite numbers", async () => {
      const { agents, runs, traces } = recordingAgents(roles);
      const config = { id: plugin.id, ...plugin.config.parse(own) };
      const signal = new AbortController().signal;
      await plugin.run({ task: TASK, agents, config, signal });
      assert.ok(runs.length >= 1, "no run was started");
      for (const r of runs) assert.ok(roles.includes(r), `role ${r}`);
      await plugin.finalize?.({ task: TASK, traces, config, signal });
      for (const t of traces) {
        for (const v of Object.values(t.metrics)) assert.ok(v === null || Number.isFinite(v));
        for (const v of Object.values(t.rewards)) assert.ok(v === null || Number.isFinite(v.score));
      }
    });

    describe("end to end against a loopback model", () => {
      let fake: Awaited<ReturnType<typeof startFakeOpenAI>>;
      before(async () => {
        process.env.VF_ENV_CONFORMANCE_KEY = "sk-env-conformance";
        fake = await startFakeOpenAI({
          apiKey: "sk-env-conformance",
          script: (body) => String(body.messages.at(-1).content),
        });
      });
      after(async () => await fake.close());

      it("every episode is ok, its traces are named for the roles, Python reads the outputs", async () => {
        const flags = [
          ...roles.flatMap((r) => [`--env.${r}.harness.id`, "null"]),
          ...Object.entries(own).flatMap(([k, v]) => [`--env.${k}`, String(v)]),
          ...(c.flags ?? []),
        ];
        const out = await evalInProcess([
          "echo",
          "-n",
          "2",
          "-m",
          "m",
          "--env.id",
          c.envId ?? plugin.id,
          "--client.base-url",
          fake.url,
          "--client.api-key-var",
          "VF_ENV_CONFORMANCE_KEY",
          ...flags,
        ]);
        assert.equal(out.episodes.length, 2);
        for (const ep of out.episodes) {
          assert.equal(ep.ok, true, JSON.stringify(ep.errors));
          assert.ok(ep.traces.length >= 1);
          for (const t of ep.traces) assert.ok(roles.includes(t.agent.name), t.agent.name);
        }
        assert.equal(out.summary.counts.episodes, 2);
      });
    });
  });
}
