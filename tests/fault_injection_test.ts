/**
 * Fault injection: whole runs against a provider that fails in every way a real one does
 * (tests/fakes/fault_server.ts), over the `null`, `bash` and `command` harnesses (the
 * last with a real agent program on the official `openai` SDK that swallows every error
 * and exits 0, asking for JSON and for streams). No call that failed for good yields an
 * ok episode, a failure the program's retry repaired does, every episode is in the file
 * exactly once, and a resume against a healed provider runs exactly the owed ones.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { run } from "./_run.ts";
import { type Fault, FAULTS, promptOf, startFaultServer } from "./fakes/fault_server.ts";
import type { Episode } from "../kit/trace/types.ts";
import { at } from "./_assert.ts";
import { filesUnder } from "./_source_tree.ts";

const OPENAI_URL = new URL("../node_modules/openai/index.mjs", import.meta.url).href;
const KEY = "sk-fault-KEY-6c1f0e9a7b3d";

/** Good answers: `ok`, `big` (10 MB) and `bash_env` (a tool call where tools are offered). */
const GOOD: Fault[] = ["ok", "big", "bash_env"];
/** Faults that fail every call of their task. */
const PERSISTENT: Fault[] = FAULTS.filter((f) => !GOOD.includes(f));
/** Faults played on a task's first call only: the program's own retry repairs them. */
const TRANSIENT: Fault[] = ["429", "500", "reset_before_headers", "stall", "malformed_json"];

/** The agent program: one chat completion through the official SDK; errors swallowed. */
function agentScript(stream: boolean): string {
  return `
import OpenAI from ${JSON.stringify(OPENAI_URL)};
import { readFileSync } from "node:fs";
const env = process.env;
const client = new OpenAI({ baseURL: env.OPENAI_BASE_URL, apiKey: env.OPENAI_API_KEY, maxRetries: 1 });
const messages = JSON.parse(readFileSync(env.VF_MESSAGES_FILE, "utf8"));
try {
  const args = { model: env.OPENAI_MODEL, messages, stream: ${stream} };
  if (${stream}) {
    let text = "";
    for await (const c of await client.chat.completions.create(args)) text += c.choices[0]?.delta?.content ?? "";
    console.log(text.length);
  } else {
    const r = await client.chat.completions.create(args);
    console.log(r.choices?.[0]?.message?.content?.length);
  }
} catch (e) {
  console.log("ignored: " + e.constructor.name);
}
process.exit(0);
`;
}

interface Variant {
  name: string;
  args: string[];
  /** The program asks for streams (then `stream_unasked` is a plain good answer). */
  stream: boolean;
}

const root = mkdtempSync(join(tmpdir(), "vf-faults-"));
before(() => {
  for (const stream of [false, true]) {
    const file = join(root, `agent_${stream ? "stream" : "json"}.mjs`);
    writeFileSync(file, agentScript(stream));
  }
  const rows = [
    ...PERSISTENT.map((f) => ({ prompt: `fault:${f}` })),
    ...TRANSIENT.map((f) => ({ prompt: `flaky:${f}` })),
    { prompt: "fault:ok" },
    { prompt: "fault:big" },
  ];
  writeFileSync(join(root, "tasks.jsonl"), rows.map((r) => JSON.stringify(r)).join("\n") + "\n");
});
after(() => rmSync(root, { recursive: true, force: true }));

const VARIANTS: Variant[] = [
  { name: "null", args: ["--env.agent.harness.id", "null"], stream: false },
  { name: "bash", args: ["--env.agent.harness.id", "bash"], stream: false },
  ...[false, true].map((stream) => ({
    name: `command (${stream ? "stream" : "json"})`,
    stream,
    args: [
      "--env.agent.harness.id",
      "command",
      "--env.agent.harness.command",
      JSON.stringify(["node", join(root, `agent_${stream ? "stream" : "json"}.mjs`)]),
    ],
  })),
];

/** The fault a task's prompt names and whether it is transient. */
function faultOf(episode: Episode): { fault: Fault; flaky: boolean } {
  const prompt = String(episode.task.data.prompt);
  const [kind, fault] = prompt.split(":");
  return { fault: fault as Fault, flaky: kind === "flaky" };
}

describe("a run against a failing provider", () => {
  for (const variant of VARIANTS) {
    it(`${variant.name}: never an ok episode from a failed call; exactly-once; resume runs the owed`, async () => {
      let healed = false;
      const seen = new Map<string, number>();
      const server = await startFaultServer({
        pick(body) {
          const prompt = promptOf(body);
          const n = seen.get(prompt) ?? 0;
          seen.set(prompt, n + 1);
          if (healed) return "ok";
          const [kind, fault] = prompt.split(":");
          if (kind === "flaky") return n === 0 ? fault as Fault : "ok";
          return fault as Fault;
        },
      });
      const cwd = mkdtempSync(join(root, "run-"));
      const argv = [
        "jsonl",
        "--env.taskset.path",
        join(root, "tasks.jsonl"),
        ...variant.args,
        "-m",
        "fault-model",
        "--client.base-url",
        server.url,
        "--client.api-key-var",
        "VF_FAULT_TEST_KEY",
        "--client.stall-timeout",
        "4",
        "-o",
        cwd,
      ];
      process.env.VF_FAULT_TEST_KEY = KEY;
      try {
        const first = await run(argv, cwd);
        const lines = readFileSync(join(first.runDir, "traces.jsonl"), "utf8").trim().split("\n");
        const episodes = lines.map((l) => JSON.parse(l) as Episode);
        const tasks = PERSISTENT.length + TRANSIENT.length + 2;
        assert.equal(episodes.length, tasks, "one line per episode");
        assert.equal(new Set(episodes.map((e) => e.task.hash)).size, tasks, "each task once");
        let owed = 0;
        for (const ep of episodes) {
          const { fault, flaky } = faultOf(ep);
          const trace = at(ep.traces, 0);
          const label = `${variant.name} ${flaky ? "flaky" : "fault"}:${fault}`;
          const lastCall = trace.calls.at(-1);
          const fails = PERSISTENT.includes(fault) &&
            !(variant.stream && fault === "stream_unasked");
          if (!flaky && fails) {
            assert.equal(ep.ok, false, `${label}: a call that failed for good is not ok`);
            assert.equal(
              trace.errors[0]?.type,
              "ProviderError",
              `${label}: ${trace.errors[0]?.message}`,
            );
            assert.ok(lastCall?.error, `${label}: the failed call is recorded`);
            owed++;
          } else {
            assert.equal(ep.ok, true, `${label}: ${JSON.stringify(trace.errors)}`);
            assert.equal(lastCall?.error, null, `${label}: the last call succeeded`);
            if (flaky) {
              // the fault was played, then a retry succeeded (ours, the SDK's, or one the
              // HTTP client made itself on a reset keep-alive connection)
              const prompt = String(ep.task.data.prompt);
              assert.ok((seen.get(prompt) ?? 0) >= 2, `${label}: the provider was asked again`);
            }
          }
        }
        for (const file of filesUnder(first.runDir)) {
          assert.ok(!readFileSync(file, "utf8").includes(KEY), `the key is not in ${file}`);
        }

        healed = true;
        const before = server.requests.length;
        const second = await run(["--resume", first.runDir], cwd);
        assert.equal(second.runDir, first.runDir);
        const resumed = readFileSync(join(first.runDir, "traces.jsonl"), "utf8").trim().split("\n")
          .map((l) => JSON.parse(l) as Episode);
        assert.equal(resumed.length, tasks);
        assert.equal(new Set(resumed.map((e) => e.task.hash)).size, tasks);
        assert.ok(resumed.every((e) => e.ok), "every owed episode completed");
        assert.equal(server.requests.length - before, owed, "one call per owed episode, no more");
        assert.equal(second.summary.counts.episodes, tasks);
      } finally {
        delete process.env.VF_FAULT_TEST_KEY;
        await server.close();
      }
    });
  }
});
