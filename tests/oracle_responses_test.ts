/**
 * The oracle answers the Responses API: the official `openai` client's `responses.create`
 * and `responses.stream` get one `bash` function call per turn, then the solution's text;
 * the raw stream passes a strict reader of the API's event order (tests/fakes/).
 */
import "./_builtins.ts";
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import OpenAI from "openai";
import { type OracleServer, startOracleServer } from "../lib/clients/oracle.ts";
import { readResponsesStream } from "./fakes/responses_server.ts";

let oracle: OracleServer;
before(async () => {
  oracle = await startOracleServer();
});
after(async () => {
  await oracle.close();
});

const BASH = {
  type: "function" as const,
  name: "bash",
  description: "run",
  parameters: { type: "object", properties: { command: { type: "string" } } },
  strict: false,
};

describe("oracle over the Responses API", () => {
  it("calls bash once per command, then answers the text, as JSON and streamed", async () => {
    oracle.register("resp-1", { commands: ["ls", "cat a.txt"], text: "the answer" });
    const client = new OpenAI({
      baseURL: oracle.url,
      apiKey: "ignored",
      maxRetries: 0,
      defaultHeaders: { "X-Session-ID": "resp-1" },
    });
    // deno-lint-ignore no-explicit-any
    const input: any[] = [{ role: "user", content: "go" }];
    const first = await client.responses.create({ model: "o-model", input, tools: [BASH] });
    assert.equal(first.model, "o-model");
    assert.equal(first.status, "completed");
    const call = first.output.find((i) => i.type === "function_call");
    assert.ok(call && call.type === "function_call");
    assert.deepEqual([call.name, JSON.parse(call.arguments)], ["bash", { command: "ls" }]);
    assert.ok(first.usage && first.usage.output_tokens > 0);
    input.push(...first.output, {
      type: "function_call_output",
      call_id: call.call_id,
      output: "a.txt\n",
    });

    const stream = client.responses.stream({ model: "o-model", input, tools: [BASH] });
    let args = "";
    stream.on("response.function_call_arguments.delta", (e) => (args += e.delta));
    const second = await stream.finalResponse();
    assert.deepEqual(JSON.parse(args), { command: "cat a.txt" });
    const call2 = second.output.find((i) => i.type === "function_call");
    assert.ok(call2 && call2.type === "function_call");
    input.push(...second.output, {
      type: "function_call_output",
      call_id: call2.call_id,
      output: "42\n",
    });

    const third = await client.responses.create({ model: "o-model", input, tools: [BASH] });
    assert.equal(third.output_text, "the answer");
    oracle.unregister("resp-1");
  });

  it("writes a stream in the API's event order, its final event carrying the answer", async () => {
    oracle.register("resp-2", { text: "a longer answer that arrives in several pieces" });
    const res = await fetch(`${oracle.url}/responses`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-session-id": "resp-2" },
      body: JSON.stringify({ model: "o-model", input: "hi", stream: true }),
    });
    assert.equal(res.status, 200);
    assert.match(res.headers.get("content-type") ?? "", /^text\/event-stream/);
    const { events, response } = readResponsesStream(await res.text());
    const types = events.map((e) => e.type);
    assert.equal(types.at(-1), "response.completed");
    assert.ok(types.filter((t) => t === "response.output_text.delta").length > 2);
    assert.equal(response.status, "completed");
    const message = (response.output as { type: string; content: { text: string }[] }[])[0]!;
    assert.equal(message.content[0]!.text, "a longer answer that arrives in several pieces");
    oracle.unregister("resp-2");
  });

  it("refuses a request it cannot read in the OpenAI error shape", async () => {
    oracle.register("resp-3", { text: "x" });
    const res = await fetch(`${oracle.url}/responses`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-session-id": "resp-3" },
      body: JSON.stringify({ model: "o-model", input: 7 }),
    });
    assert.equal(res.status, 400);
    const body = await res.json();
    assert.equal(body.error.type, "invalid_request_error");
    assert.match(body.error.message, /'input'/);
    oracle.unregister("resp-3");
  });
});
