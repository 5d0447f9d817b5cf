/**
 * The real ACP agents when a rollout goes wrong, through `vf eval` on the subprocess runtime
 * against strict loopback providers of each agent's dialect: the rollout's deadline falls
 * while the agent's tool runs (a typed error within the deadline, and no process of the
 * agent or its tool left), and the provider refuses the first call (a typed error, never a
 * clean episode). Each agent is skipped, with one line, when it is not in the agent cache.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import pi from "../plugins/harnesses/pi/mod.ts";
import claude from "../plugins/harnesses/claude-code/mod.ts";
import codex from "../plugins/harnesses/codex/mod.ts";
import opencode from "../plugins/harnesses/opencode/mod.ts";
import { installName, isInstalled } from "../kit/harness/acp/install.ts";
import type { HarnessPlugin } from "../kit/contract.ts";
import type { AcpRecord } from "../kit/harness/acp/record.ts";
import { evalInProcess } from "./_eval.ts";
import { startFakeOpenAI } from "./fakes/openai_server.ts";
import { startFakeAnthropic } from "./fakes/anthropic_server.ts";
import { startFakeResponses } from "./fakes/responses_server.ts";
import { at } from "./_assert.ts";

const KEY_VAR = "VF_ACP_FAILURE_KEY";
const KEY = "sk-acp-failure-secret-0123456789";

type Json = Record<string, unknown>;
type Mode = "tool" | "refuse";

/** A provider for the agent's dialect: `tool` asks for `command` once; `refuse` fails. */
async function provider(id: string, mode: Mode, command: string) {
  if (id === "claude-code") {
    return await startFakeAnthropic({
      apiKey: KEY,
      script: (body: Json) => {
        if (mode === "refuse") {
          return { error: { status: 400, type: "invalid_request_error", message: "refused" } };
        }
        const tools = (body.tools as { name: string }[] | undefined) ?? [];
        if (!tools.some((t) => t.name === "Bash")) return { text: '{"title": "t"}' };
        if (JSON.stringify(body.messages).includes("tool_result")) return { text: "done" };
        return {
          tool_use: [{ id: "toolu_1", name: "Bash", input: { command, description: "d" } }],
        };
      },
    });
  }
  if (id === "codex") {
    return await startFakeResponses({
      apiKey: KEY,
      script: (body: Json) => {
        if (mode === "refuse") return { status: 400, error: { message: "refused" } };
        return JSON.stringify(body.input).includes("function_call_output")
          ? "done"
          : { calls: [{ name: "exec_command", arguments: { cmd: command } }] };
      },
    });
  }
  return await startFakeOpenAI({
    apiKey: KEY,
    script: (body: Json) => {
      if (mode === "refuse") {
        return { status: 400, error: { message: "refused", type: "invalid_request_error" } };
      }
      // a call with no tools is OpenCode's session title
      if (((body.tools as unknown[] | undefined) ?? []).length === 0) return "t";
      return (body.messages as { role: string }[]).some((m) => m.role === "tool")
        ? "done"
        : { tool_calls: [{ name: "bash", arguments: { command } }] };
    },
  });
}

/** One rollout of harness `id` against `url`, with a rollout deadline of `seconds`. */
async function rollout(id: string, url: string, seconds: number) {
  const dir = mkdtempSync(join(tmpdir(), `vf-acp-fail-${id}-`));
  writeFileSync(
    join(dir, "tasks.jsonl"),
    JSON.stringify({ prompt: "Run it.", answer: "x" }) + "\n",
  );
  writeFileSync(
    join(dir, "run.toml"),
    `model = "m"
[client]
base_url = ${JSON.stringify(url)}
api_key_var = "${KEY_VAR}"
[env.taskset]
id = "jsonl"
path = ${JSON.stringify(join(dir, "tasks.jsonl"))}
[env.agent.harness]
id = "${id}"
[env.agent.timeout]
rollout = ${seconds}
`,
  );
  process.env[KEY_VAR] = KEY;
  const started = Date.now();
  try {
    const { episodes } = await evalInProcess(["@", join(dir, "run.toml")]);
    return { trace: at(at(episodes, 0).traces, 0), ms: Date.now() - started };
  } finally {
    delete process.env[KEY_VAR];
  }
}

/** A process's parent and command line, or null once it is gone. */
function procInfo(pid: number): { ppid: number; cmdline: string } | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
    return { ppid, cmdline: readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " ") };
  } catch {
    return null;
  }
}

/**
 * Whether a process belongs to another test suite running at the same time (the Deno and
 * Bun suites run side by side): it descends from a live test runner that is not this one.
 * Ours, and orphans of anyone (what a leak leaves), count.
 */
function anotherSuites(pid: number): boolean {
  for (let p = procInfo(pid)?.ppid ?? 0; p > 1; p = procInfo(p)?.ppid ?? 0) {
    if (p === process.pid) return false;
    if (/\b(deno|bun)(\.exe)? test\b/.test(procInfo(p)?.cmdline ?? "")) return true;
  }
  return false;
}

/** Command lines of the live processes that contain `needle` (not another suite's). */
function processesWith(needle: string): string[] {
  const found: string[] = [];
  for (const name of readdirSync("/proc")) {
    const pid = Number(name);
    if (!/^\d+$/.test(name) || pid === process.pid) continue;
    const cmdline = procInfo(pid)?.cmdline;
    if (cmdline?.includes(needle) && !anotherSuites(pid)) found.push(`${pid}: ${cmdline}`);
  }
  return found;
}

/** The processes with `needle` once none is left, or after 3 s (a kill may take a moment). */
async function settled(needle: string): Promise<string[]> {
  for (let i = 0; i < 30; i++) {
    const left = processesWith(needle);
    if (left.length === 0) return left;
    await new Promise((r) => setTimeout(r, 100));
  }
  return processesWith(needle);
}

const AGENTS: [string, HarnessPlugin][] = [
  ["pi", pi],
  ["claude-code", claude],
  ["codex", codex],
  ["opencode", opencode],
];

for (const [id, plugin] of AGENTS) {
  const missing = isInstalled(plugin.agentBundle!) ? null : `${id} is not in the agent cache`;
  if (missing) console.log(`acp_rollout_failures_test: ${id} skipped: ${missing}`);
  describe(`${id}: a rollout that goes wrong`, { skip: missing ?? false }, () => {
    it("ends at the deadline while its tool runs, and leaves no process", async () => {
      const marker = `${Math.floor(Math.random() * 1e6)}.123`;
      const fake = await provider(id, "tool", `echo started && sleep ${marker}`);
      try {
        // Codex's exec_command hands back a still-running command after 10 s: cut before that;
        // OpenCode takes the longest to start (seconds of CPU before its first call)
        const deadline = id === "codex" ? 8 : id === "opencode" ? 30 : 15;
        const { trace, ms } = await rollout(id, fake.url, deadline);
        assert.equal(trace.errors.length, 1, JSON.stringify(trace.errors));
        assert.equal(at(trace.errors, 0).type, "HarnessError");
        assert.match(at(trace.errors, 0).message, /agent timeout/);
        assert.ok(ms < (deadline + 20) * 1000, `took ${ms} ms`);
        const acp = trace.info.acp as AcpRecord;
        assert.ok(acp.tool_calls.length >= 1, "the deadline fell while the tool ran");
        assert.deepEqual(await settled(`sleep ${marker}`), [], "the tool was killed");
        assert.deepEqual(
          await settled(installName(plugin.agentBundle!)),
          [],
          "the adapter and agent were killed",
        );
      } finally {
        await fake.close();
      }
    });

    it("ends as an error when the provider refuses the call", async () => {
      const fake = await provider(id, "refuse", "true");
      try {
        const { trace, ms } = await rollout(id, fake.url, 60);
        assert.ok(trace.errors.length >= 1, "a refused call is no clean episode");
        assert.ok(
          ["ProviderError", "HarnessError"].includes(at(trace.errors, 0).type),
          JSON.stringify(trace.errors),
        );
        assert.ok(ms < 50_000, `took ${ms} ms`);
        assert.deepEqual(await settled(installName(plugin.agentBundle!)), []);
      } finally {
        await fake.close();
      }
    });
  });
}
