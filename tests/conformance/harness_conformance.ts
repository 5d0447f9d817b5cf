/**
 * The shared conformance suite of the {@link HarnessPlugin} contract (kit/contract.ts).
 * Every harness calls {@link harnessConformance}: launched in a real runtime against a
 * strict loopback chat completions server standing in for the interception endpoint, it
 * must send the conversation there with the rollout's key and model, end with a
 * {@link ProgramResult}, report model failures and aborts, and leak no secret.
 *
 * @module
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { z } from "zod";
import { HarnessBase } from "../../kit/common_keys.ts";
import type { HarnessConfig, HarnessLaunchContext, HarnessPlugin } from "../../kit/contract.ts";
import { VerifiersError } from "../../kit/errors.ts";
import type { ProgramResult, Runtime } from "../../kit/runtime/runtime.ts";
import type { Message } from "../../kit/trace/types.ts";
import { type FakeReply, startFakeOpenAI } from "../fakes/openai_server.ts";

/** What a harness needs to be checked. */
export interface HarnessConformanceCase {
  plugin: HarnessPlugin;
  /** The harness's own config keys (those without a default). @default {} */
  config?: Record<string, unknown>;
  /** A new, not yet started runtime the harness runs in. */
  makeRuntime: () => Runtime;
}

const SECRET = "sk-harness-conformance-0123456789";
const MODEL = "conformance-model";
const SYSTEM = "You are checked for conformance.";
const PROMPT = "Say the word: conformance.";

/** The text of a chat message's content (string or text parts). */
function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.map((p) => (p?.type === "text" ? String(p.text) : "")).join("");
}

/** Asserts a launch ended as a failure: a non-zero exit code or a typed rejection. */
async function endsInFailure(launch: Promise<ProgramResult>, what: string): Promise<void> {
  try {
    const result = await launch;
    assert.notEqual(result.exitCode, 0, `${what}: launch resolved with exit code 0`);
  } catch (err) {
    const typed = err instanceof VerifiersError ||
      (err instanceof Error && (err.name === "AbortError" || err.name === "TimeoutError")) ||
      (err instanceof DOMException);
    assert.ok(typed, `${what}: launch rejected with an untyped ${String(err)}`);
  }
}

/**
 * Declares `describe(label + " harness conformance")`: the behaviour every harness must have.
 */
export function harnessConformance(label: string, c: HarnessConformanceCase): void {
  const { plugin } = c;
  describe(`${label} harness conformance`, () => {
    let reply: (body: Record<string, unknown>) => FakeReply | Promise<FakeReply> = () => ({
      content: "conformance",
    });
    let fake: Awaited<ReturnType<typeof startFakeOpenAI>>;
    const runtimes: Runtime[] = [];
    before(async () => {
      fake = await startFakeOpenAI({ apiKey: SECRET, script: (body) => reply(body) });
    });
    after(async () => {
      for (const rt of runtimes) await rt.stopConfirmed();
      await fake.close();
    });

    /** Launches the harness (after its setup) in a fresh runtime. */
    const launch = async (
      signal: AbortSignal = new AbortController().signal,
      messages: Message[] = [
        { role: "system", content: SYSTEM },
        { role: "user", content: PROMPT },
      ],
    ) => {
      const runtime = c.makeRuntime();
      runtimes.push(runtime);
      await runtime.start();
      const config = z.object({ ...HarnessBase, ...plugin.config.shape })
        .parse({ id: plugin.id, ...c.config }) as HarnessConfig;
      await plugin.setup?.(runtime, config, new AbortController().signal);
      const logged: string[] = [];
      const ctx: HarnessLaunchContext = {
        runtime,
        endpoint: fake.url,
        secret: SECRET,
        model: MODEL,
        messages,
        config,
        signal,
        log: (line) => logged.push(line),
      };
      return { ctx, logged, result: plugin.launch(ctx) };
    };

    it("declares the harness contract", () => {
      assert.equal(plugin.kind, "harness");
      assert.equal(plugin.abi, 1);
      assert.match(plugin.id, /^[a-z0-9][a-z0-9-]*$/);
      assert.ok(plugin.description.trim().length > 0 && !plugin.description.includes("\n"));
      assert.ok(plugin.config instanceof z.ZodObject, "config is a zod object schema");
      assert.equal(typeof plugin.launch, "function");
      assert.ok(plugin.setup === undefined || typeof plugin.setup === "function");
      const caps = plugin.capabilities;
      // `toolsets` is optional: whether the harness offers a task's MCP toolsets
      assert.deepEqual(
        Object.keys(caps).filter((k) => k !== "toolsets").sort(),
        ["appendsSystemPrompt", "executesCode", "needsContainer"],
      );
      for (const v of Object.values(caps)) assert.equal(typeof v, "boolean");
    });

    it("its config schema documents every key and its defaults are a fixed point", () => {
      for (const [key, schema] of Object.entries(plugin.config.shape)) {
        const text = (schema as z.ZodType).description ?? "";
        assert.ok(text.trim().length > 0, `config key '${key}' has no description`);
      }
      const once = plugin.config.parse(c.config ?? {});
      assert.deepEqual(plugin.config.parse(once), once);
    });

    it("launch() sends the conversation to the endpoint with the key and model, then exits 0", async () => {
      reply = () => ({ content: "conformance" });
      const before = fake.requests.length;
      const { ctx, result } = await launch();
      const messages = structuredClone(ctx.messages);
      const done = await result;
      assert.equal(done.exitCode, 0, `exit ${done.exitCode}: ${done.stderr}`);
      assert.equal(typeof done.stdout, "string");
      assert.equal(typeof done.stderr, "string");
      const sent = fake.requests.slice(before);
      assert.ok(sent.length >= 1, "the harness made no model call");
      for (const req of sent) {
        assert.equal(req.headers.authorization, `Bearer ${SECRET}`);
        assert.equal(req.body.model, MODEL);
      }
      // the agent's own first turn: a call the harness names auxiliary (a session title,
      // made in parallel) carries neither the system prompt nor, always, the conversation
      const own = sent.filter((r) => (plugin.auxiliaryCall?.(r) ?? null) === null);
      assert.ok(own.length >= 1, "every model call was an auxiliary one");
      // deno-lint-ignore no-explicit-any
      const first = own[0]!.body.messages as any[];
      assert.ok(first.some((m) => m.role === "user" && textOf(m.content).includes(PROMPT)));
      if (plugin.capabilities.appendsSystemPrompt) {
        assert.ok(
          first.some((m) => m.role === "system" && textOf(m.content).includes(SYSTEM)),
          "the system prompt is sent as a system message",
        );
      }
      assert.deepEqual(ctx.messages, messages, "launch() left the caller's messages alone");
    });

    it("the rollout's key never appears in the result", async () => {
      reply = () => ({ content: "done" });
      const { result, logged } = await launch();
      const done = await result;
      for (const text of [done.stdout, done.stderr, ...logged]) {
        assert.ok(!text.includes(SECRET), "the per-rollout key leaked into the output");
      }
    });

    it("a model error ends the launch as a failure, never as exit code 0", async () => {
      // as OpenAI refuses a request: a 400 of type invalid_request_error, which no agent
      // retries (a server_error is retried: OpenCode backs off five times, a minute in all)
      reply = () => ({
        status: 400,
        error: { message: "conformance: this request is refused", type: "invalid_request_error" },
      });
      const { result } = await launch();
      await endsInFailure(result, "model error");
    });

    it("a signal aborted before launch() makes no model call", async () => {
      const before = fake.requests.length;
      const { result } = await launch(AbortSignal.abort());
      await endsInFailure(result, "aborted before launch");
      assert.equal(fake.requests.length, before, "a model call was made after the abort");
    });

    it("aborting during a model call ends the launch as a failure", async () => {
      let release!: () => void;
      const held = new Promise<void>((r) => (release = r));
      let arrived!: () => void;
      const called = new Promise<void>((r) => (arrived = r));
      reply = async () => {
        arrived();
        await held;
        return { content: "too late" };
      };
      const ac = new AbortController();
      const { result } = await launch(ac.signal);
      const early = result.then(
        (r) => assert.fail(`launch ended (exit ${r.exitCode}) before its model call arrived`),
        (err) => assert.fail(`launch failed before its model call arrived: ${String(err)}`),
      );
      try {
        await Promise.race([called, early]);
      } finally {
        release();
      }
      ac.abort();
      try {
        await endsInFailure(result, "aborted during a model call");
      } finally {
        release();
      }
    });
  });
}
