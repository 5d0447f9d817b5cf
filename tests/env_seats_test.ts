/**
 * A seat's own model, client and sampling (`env.agent.model`, `.client`, `.sampling`, as
 * Python's `AgentConfig`) end to end: the calls go to the seat's provider with its model and
 * its sampling merged over the run's, the trace records them, and Python v1 reads the outputs.
 */
import "./_builtins.ts";
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import process from "node:process";
import { evalInProcess } from "./_eval.ts";
import { assertExchangeable } from "./_python_v1_exchange.ts";
import { startFakeOpenAI } from "./fakes/openai_server.ts";

type Fake = Awaited<ReturnType<typeof startFakeOpenAI>>;

describe("a seat's own model, client and sampling", () => {
  let runProvider: Fake;
  let seatProvider: Fake;
  before(async () => {
    process.env.VF_SEAT_RUN_KEY = "sk-run-provider";
    process.env.VF_SEAT_OWN_KEY = "sk-seat-provider";
    runProvider = await startFakeOpenAI({ apiKey: "sk-run-provider" });
    seatProvider = await startFakeOpenAI({
      apiKey: "sk-seat-provider",
      script: (body) => {
        const messages = body.messages as { role: string; content: string }[];
        const prompt = messages.filter((m) => m.role === "user").at(-1)!.content;
        return `<reversed_text>${Array.from(prompt).reverse().join("")}</reversed_text>`;
      },
    });
  });
  after(async () => {
    await runProvider.close();
    await seatProvider.close();
  });

  it("sends the seat's calls to its client with its model and merged sampling", async () => {
    const out = await evalInProcess([
      "reverse-text",
      "-n",
      "2",
      "-m",
      "run-model",
      "--client.base-url",
      runProvider.url,
      "--client.api-key-var",
      "VF_SEAT_RUN_KEY",
      "--sampling.top-p",
      "0.5",
      "--sampling.temperature",
      "0.9",
      "--env.agent.harness.id",
      "null",
      "--env.agent.model",
      "seat-model",
      "--env.agent.client.base-url",
      seatProvider.url,
      "--env.agent.client.api-key-var",
      "VF_SEAT_OWN_KEY",
      "--env.agent.sampling.temperature",
      "0.25",
    ]);
    assert.equal(runProvider.requests.length, 0, "the run's provider is not called");
    assert.equal(seatProvider.requests.length, 2);
    for (const req of seatProvider.requests) {
      const body = req.body as Record<string, unknown>;
      assert.equal(body.model, "seat-model");
      assert.equal(body.temperature, 0.25);
      assert.equal(body.top_p, 0.5);
    }
    for (const ep of out.episodes) {
      assert.equal(ep.ok, true, JSON.stringify(ep.errors));
      const trace = ep.traces[0]!;
      assert.equal(trace.rewards.lcs?.score, 1);
      assert.equal(trace.agent.config.model, "seat-model");
      assert.deepEqual(trace.agent.config.sampling, { temperature: 0.25, top_p: 0.5 });
      for (const call of trace.calls) assert.equal(call.model, "seat-model");
    }
    const config = JSON.parse(readFileSync(join(out.runDir, "configs", "eval.json"), "utf8"));
    assert.equal(config.model, "run-model");
    assert.equal(config.env.agent.model, "seat-model");
    assert.equal(config.env.agent.client.type, "eval");
    assert.equal(config.env.agent.client.api_key_var, "VF_SEAT_OWN_KEY");
    assert.equal(config.env.agent.sampling.temperature, 0.25);
    const written = readFileSync(join(out.runDir, "configs", "eval.json"), "utf8") +
      readFileSync(join(out.runDir, "traces.jsonl"), "utf8");
    assert.ok(!written.includes("sk-seat-provider"), "the seat's key is never written");
    assertExchangeable(out);
  });
});

describe("an env's roles (env.<role>.*)", () => {
  const CRITIC = join(import.meta.dirname!, "fixtures", "envs", "critic.ts");
  let provider: Fake;
  before(async () => {
    process.env.VF_ROLES_KEY = "sk-roles";
    provider = await startFakeOpenAI({
      apiKey: "sk-roles",
      script: (body) => {
        const messages = body.messages as { role: string; content: string }[];
        const prompt = messages.filter((m) => m.role === "user").at(-1)!.content;
        const text = body.model === "critic-model" ? "no" : Array.from(prompt).reverse().join("");
        return `<reversed_text>${text}</reversed_text>`;
      },
    });
  });
  after(async () => await provider.close());

  const args = (extra: string[]) => [
    "reverse-text",
    "-n",
    "2",
    "-c",
    "1",
    "-m",
    "run-model",
    "--env.id",
    CRITIC,
    "--client.base-url",
    provider.url,
    "--client.api-key-var",
    "VF_ROLES_KEY",
    ...extra,
  ];

  it("runs each role with its own section, its defaults under it, its name on its trace", async () => {
    const before = provider.requests.length;
    const out = await evalInProcess(args([
      "--env.solver.harness.id",
      "null",
      "--env.critic.model",
      "critic-model",
      "--env.critic.sampling.temperature",
      "0.1",
    ]));
    const calls = provider.requests.slice(before).map((r) => r.body as Record<string, unknown>);
    assert.deepEqual(calls.map((b) => b.model), [
      "run-model",
      "critic-model",
      "run-model",
      "critic-model",
    ]);
    assert.deepEqual(calls.map((b) => b.temperature), [undefined, 0.1, undefined, 0.1]);
    for (const ep of out.episodes) {
      assert.equal(ep.ok, true, JSON.stringify(ep.errors));
      assert.deepEqual(ep.traces.map((t) => t.agent.name), ["solver", "critic"]);
      const [solver, critic] = ep.traces;
      assert.equal(solver!.rewards.lcs?.score, 1);
      assert.ok(critic!.rewards.lcs!.score < 1);
      assert.equal(critic!.agent.config.max_turns, 1);
      assert.equal((critic!.agent.config.harness as { id: string }).id, "null");
      assert.equal(critic!.agent.config.model, "critic-model");
    }
    const config = JSON.parse(readFileSync(join(out.runDir, "configs", "eval.json"), "utf8"));
    assert.equal(config.env.agent, undefined, "the first role is written under its own name");
    assert.equal(config.env.solver.harness.id, "null");
    assert.equal(config.env.critic.harness.id, "null");
    assert.equal(config.env.critic.max_turns, 1);
    assert.equal(config.env.critic.model, "critic-model");
    assert.equal(out.summary.counts.traces, 4);
  });

  it("refuses env.agent for an env without an agent role, naming its roles", async () => {
    await assert.rejects(
      evalInProcess(args(["--env.agent.max-turns", "3"])),
      (e: unknown) =>
        e instanceof Error && /env\.agent/.test(e.message) &&
        /env\.solver, env\.critic/.test(JSON.stringify(e) + String((e as { hint?: string }).hint)),
    );
  });

  it("refuses a bad key in a role's section, naming its flag", async () => {
    await assert.rejects(
      evalInProcess(args(["--env.critic.max-turns", "0"])),
      (e: unknown) => e instanceof Error && /--env\.critic\.max-turns/.test(e.message),
    );
  });
});
