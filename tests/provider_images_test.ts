/**
 * A provider that takes no images (`client.images = false`): a program of a `vf` run
 * (the `command` harness, posting its own requests) sends an image in each dialect — a
 * chat `image_url` part, an Anthropic `image` block (streamed, and in a tool result), a
 * Responses `input_image` part — and each call is refused before it goes upstream, in that
 * dialect's own error body, and fails its episode; a call without an image in the same run
 * reaches the strict loopback chat provider and is answered. Python v1 loads every line.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import type { Episode, Trace } from "../kit/trace/types.ts";
import { type FakeOpenAI, startFakeOpenAI } from "./fakes/openai_server.ts";
import { prepare, run, traceLines } from "./_run.ts";
import { assertRealPythonLoadsEpisodes } from "./_python_v1.ts";
import { at } from "./_assert.ts";

const KEY = "sk-no-images-KEY-51c0de";
const PNG =
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";

/** The program: posts the request its prompt (`VF_PROMPT`) names; prints status and body. */
const AGENT = `
const env = process.env;
const mode = env.VF_PROMPT;
const png = ${JSON.stringify(PNG)};
const openai = (path, body) => fetch(env.OPENAI_BASE_URL + path, {
  method: "POST",
  headers: { "content-type": "application/json", authorization: "Bearer " + env.OPENAI_API_KEY },
  body: JSON.stringify(body),
});
const anthropic = (body) => fetch(env.ANTHROPIC_BASE_URL + "/v1/messages", {
  method: "POST",
  headers: { "content-type": "application/json", "x-api-key": env.ANTHROPIC_API_KEY,
    "anthropic-version": "2023-06-01" },
  body: JSON.stringify({ model: "claude-program", max_tokens: 64, ...body }),
});
const image = { type: "image", source: { type: "base64", media_type: "image/png", data: png } };
const requests = {
  "chat-text": () => openai("/chat/completions", { model: "m",
    messages: [{ role: "user", content: "Say hi." }] }),
  "chat-image": () => openai("/chat/completions", { model: "m", messages: [{ role: "user",
    content: [{ type: "text", text: "What is this?" },
      { type: "image_url", image_url: { url: "data:image/png;base64," + png } }] }] }),
  "anthropic-image": () => anthropic({ stream: true, messages: [{ role: "user",
    content: [{ type: "text", text: "What is this?" }, image] }] }),
  "anthropic-tool-image": () => anthropic({ messages: [
    { role: "user", content: "Take a screenshot." },
    { role: "assistant", content: [{ type: "tool_use", id: "toolu_1", name: "shot", input: {} }] },
    { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_1", content: [image] }] },
  ], tools: [{ name: "shot", description: "A screenshot", input_schema: { type: "object" } }] }),
  "responses-image": () => openai("/responses", { model: "m", input: [{ role: "user", content: [
    { type: "input_text", text: "What is this?" },
    { type: "input_image", image_url: "data:image/png;base64," + png }] }] }),
};
const res = await requests[mode]();
const text = await res.text();
console.log(JSON.stringify({ status: res.status, body: text }));
`;

const IMAGE_MODES = ["chat-image", "anthropic-image", "anthropic-tool-image", "responses-image"];
const WHY =
  /^this request carries an image \(in its (user|tool) message \d\), and the provider takes none \(client\.images = false\): it was not sent$/;

describe("client.images", () => {
  it("is true unless said: --client.no-images sets it false", async () => {
    const root = mkdtempSync(join(tmpdir(), "vf-images-config-"));
    try {
      const base = ["addition", "-m", "m", "--client.base-url", "http://127.0.0.1:9/v1"];
      assert.equal((await prepare(base, root)).loaded.config.client.images, true);
      const off = await prepare([...base, "--client.no-images"], root);
      assert.equal(off.loaded.config.client.images, false);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});

describe("an image for a provider that takes none (client.images = false)", () => {
  let root: string;
  let fake: FakeOpenAI;
  let runDir: string;
  let episodes: Map<string, Episode>;

  before(async () => {
    root = mkdtempSync(join(tmpdir(), "vf-no-images-"));
    fake = await startFakeOpenAI({ apiKey: KEY, knownParams: true, script: () => "hi" });
    writeFileSync(join(root, "agent.mjs"), AGENT);
    writeFileSync(
      join(root, "tasks.jsonl"),
      ["chat-text", ...IMAGE_MODES].map((p) => JSON.stringify({ prompt: p })).join("\n") + "\n",
    );
    process.env.VF_IMAGES_TEST_KEY = KEY;
    const out = await run([
      "jsonl",
      "--env.taskset.path",
      join(root, "tasks.jsonl"),
      "--env.agent.harness.id",
      "command",
      "--env.agent.harness.command",
      JSON.stringify(["node", join(root, "agent.mjs")]),
      "-m",
      "text-only",
      "--client.base-url",
      fake.url,
      "--client.api-key-var",
      "VF_IMAGES_TEST_KEY",
      "--client.no-images",
      "-o",
      root,
    ], root);
    runDir = out.runDir;
    episodes = new Map(
      traceLines(runDir).map((l) => JSON.parse(l) as Episode).map((e) => [
        String(e.task.data.prompt),
        e,
      ]),
    );
  });
  after(async () => {
    delete process.env.VF_IMAGES_TEST_KEY;
    await fake.close();
    rmSync(root, { recursive: true, force: true });
  });

  const traceOf = (prompt: string): Trace => {
    const episode = episodes.get(prompt);
    assert.ok(episode, `no episode for ${prompt}`);
    return at(episode.traces, 0);
  };
  // deno-lint-ignore no-explicit-any
  const outputOf = (trace: Trace): { status: number; body: any } => {
    const output = trace.info.agent_output as { stdout: string; stderr: string; exit_code: number };
    assert.equal(output.exit_code, 0, output.stderr);
    const out = JSON.parse(output.stdout);
    return { status: out.status, body: JSON.parse(out.body) };
  };

  it("refuses each dialect's image in that dialect's error body, sending nothing", () => {
    for (const mode of IMAGE_MODES) {
      const { status, body } = outputOf(traceOf(mode));
      assert.equal(status, 400, mode);
      if (mode.startsWith("anthropic")) {
        assert.equal(body.type, "error", mode);
        assert.equal(body.error.type, "invalid_request_error", mode);
        assert.match(body.error.message, WHY, mode);
      } else {
        assert.equal(body.error.type, "invalid_request_error", mode);
        assert.equal(body.error.code, "unsupported_content", mode);
        assert.match(body.error.message, WHY, mode);
      }
    }
    assert.match(outputOf(traceOf("anthropic-tool-image")).body.error.message, /tool message 3/);
    // only the call without an image reached the provider
    assert.deepEqual(fake.requests.map((r) => r.body.messages), [
      [{ role: "user", content: "Say hi." }],
    ]);
  });

  it("fails each such episode with the refusal; the call without an image is answered", () => {
    for (const mode of IMAGE_MODES) {
      const trace = traceOf(mode);
      assert.equal(trace.ok, false, `${mode} passed for a clean episode`);
      assert.equal(at(trace.errors, 0).type, "ProviderError", mode);
      assert.match(at(trace.errors, 0).message, /carries an image/, mode);
      assert.deepEqual(trace.calls.map((c) => [c.node, c.error?.status_code]), [[null, 400]]);
    }
    const text = traceOf("chat-text");
    assert.equal(text.ok, true, JSON.stringify(text.errors));
    assert.equal(outputOf(text).status, 200);
    assert.deepEqual(text.calls.map((c) => [c.model, c.error]), [["text-only", null]]);
  });

  it("writes lines Python v1 loads", () => {
    assertRealPythonLoadsEpisodes(traceLines(runDir));
  });
});
