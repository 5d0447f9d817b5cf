/**
 * The model relay in a container with no network (`block = ["*"]`): the `command` harness
 * runs programs built on the official `openai` and `@anthropic-ai/sdk` clients (bundled
 * into one file with `bun build`, run by the Bun binary in a test image built here from
 * the busybox test image) and every call, streaming included, reaches the scripted
 * provider through the relay over `docker exec -i`. The container has only its loopback:
 * the host's 127.0.0.1 is not reachable from it, which the test checks first.
 * Skips with one line when no engine can be reached.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import process from "node:process";
import { after, before, describe, it } from "node:test";
import { MANAGED_LABEL } from "../plugins/runtimes/docker/mod.ts";
import { at } from "./_assert.ts";
import {
  buildImage,
  containersLabelled,
  dockerSkipReason,
  removeImage,
  TEST_IMAGE,
} from "./_docker.ts";
import { evalInProcess } from "./_eval.ts";
import { type FakeAnthropic, startFakeAnthropic } from "./fakes/anthropic_server.ts";
import { startFakeOpenAI } from "./fakes/openai_server.ts";

const skip = dockerSkipReason();
if (skip) console.warn(`relay_docker_test: SKIPPED: ${skip}`);

const ROOT = join(import.meta.dirname!, "..");
const BUN = realpathSync(join(ROOT, "node_modules", "bun", "bin", "bun.exe"));
const IMAGE = `verifiers-ts-test:relay-${process.pid}`;
const KEY = "sk-relay-secret";

/** The program: two chat calls (JSON, SSE), then two Anthropic Messages calls (JSON, SSE). */
const AGENT = `import OpenAI from "openai";
import Anthropic from "@anthropic-ai/sdk";
const probe = await fetch("${"HOST_URL"}").then(() => "reached", (e) => "unreachable");
if (probe !== "unreachable") { console.log("the host's loopback was reachable"); process.exit(4); }
const model = process.env.OPENAI_MODEL;
if (process.env.VF_AGENT === "openai") {
const openai = new OpenAI({ baseURL: process.env.OPENAI_BASE_URL, apiKey: process.env.OPENAI_API_KEY, maxRetries: 0 });
const messages = [{ role: "user", content: process.env.VF_PROMPT }];
const first = await openai.chat.completions.create({ model, messages });
messages.push(first.choices[0].message, { role: "user", content: "again, streaming" });
const stream = await openai.chat.completions.create({ model, messages, stream: true });
let text = "";
for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? "";
console.log("streamed=" + text);
} else {
  const anthropic = new Anthropic({ baseURL: process.env.ANTHROPIC_BASE_URL, apiKey: process.env.ANTHROPIC_API_KEY, maxRetries: 0 });
  const said = await anthropic.messages.create({ model, max_tokens: 64, messages: [{ role: "user", content: "hi" }] });
  console.log("anthropic=" + said.content[0].text);
  let streamed = "";
  const events = await anthropic.messages.create({ model, max_tokens: 64, stream: true, messages: [{ role: "user", content: "hi, streaming" }] });
  for await (const e of events) if (e.type === "content_block_delta") streamed += e.delta.text;
  console.log("anthropic-streamed=" + streamed);
}
`;

const scratch: string[] = [];
let openai: Awaited<ReturnType<typeof startFakeOpenAI>>;
let anthropic: FakeAnthropic;

/** Containers the runtime made that are still there. */
function ourContainers(): string[] {
  return containersLabelled(`${MANAGED_LABEL}=1`);
}

before(async () => {
  if (skip) return;
  openai = await startFakeOpenAI({
    apiKey: KEY,
    script: (b) => (b as { stream?: boolean }).stream ? "streamed: hello world" : "json answer",
  });
  anthropic = await startFakeAnthropic({
    apiKey: KEY,
    script: (b) => ({ text: (b as { stream?: boolean }).stream ? "streamed: hi" : "json hi" }),
  });
  process.env.VF_RELAY_TEST_KEY = KEY;
  const dir = mkdtempSync(join(tmpdir(), "vf-relay-image-"));
  scratch.push(dir);
  const source = join(dir, "agent_src.mjs");
  writeFileSync(source, AGENT.replace("HOST_URL", openai.url));
  execFileSync(BUN, ["build", source, "--target=bun", "--outfile", join(dir, "agent.js")], {
    cwd: ROOT,
    stdio: "pipe",
    env: { ...process.env, NODE_PATH: join(ROOT, "node_modules") },
  });
  // Bun and the C library it links: the test image has no other JavaScript runtime
  const libs = execFileSync("ldd", [BUN], { encoding: "utf8" }).split("\n")
    .map((l) => /(\/\S+) \(0x/.exec(l)?.[1]).filter((p): p is string => p !== undefined);
  const copies: string[] = [];
  for (const lib of libs) {
    const into = join(dir, "root", lib);
    mkdirSync(dirname(into), { recursive: true });
    copyFileSync(realpathSync(lib), into);
  }
  mkdirSync(join(dir, "root", "usr", "local", "bin"), { recursive: true });
  copyFileSync(BUN, join(dir, "root", "usr", "local", "bin", "bun"));
  copies.push("COPY root/ /", "COPY agent.js /opt/agent.js");
  writeFileSync(join(dir, "Dockerfile"), `FROM ${TEST_IMAGE}\n${copies.join("\n")}\n`);
  buildImage(IMAGE, dir);
});

after(async () => {
  await openai?.close();
  await anthropic?.close();
  if (!skip) removeImage(IMAGE);
  for (const d of scratch) rmSync(d, { recursive: true, force: true });
});

function runArgs(agent: string, providerUrl: string): string[] {
  return [
    "addition",
    "-n",
    "1",
    "-m",
    "m-relay",
    "--client.base-url",
    providerUrl,
    "--client.api-key-var",
    "VF_RELAY_TEST_KEY",
    "--env.agent.harness.id",
    "command",
    "--env.agent.harness.command",
    JSON.stringify(["bun", "/opt/agent.js"]),
    "--env.agent.harness.env",
    JSON.stringify({ VF_AGENT: agent }),
    "--env.agent.runtime.type",
    "docker",
    "--env.agent.runtime.image",
    IMAGE,
    "--env.agent.runtime.block",
    '["*"]',
  ];
}

describe("the model relay in a container with no network", { skip: skip ?? false }, () => {
  it("carries the openai SDK's chat calls, JSON and SSE, all recorded", async () => {
    const before = openai.requests.length;
    const left = new Set(ourContainers());
    const { episodes } = await evalInProcess(runArgs("openai", openai.url));
    const t = at(at(episodes, 0).traces, 0);
    assert.deepEqual(t.errors, [], JSON.stringify(t.errors));
    assert.equal(t.stop_condition, "agent_completed");
    assert.equal(openai.requests.length - before, 2);
    assert.equal(t.calls.length, 2);
    const output = JSON.stringify(t.info);
    assert.match(output, /streamed=streamed: hello world/);
    assert.equal(output.includes(KEY), false);
    assert.deepEqual(ourContainers().filter((c) => !left.has(c)), []);
  });

  it("carries the @anthropic-ai/sdk's Messages calls, JSON and SSE, all recorded", async () => {
    const before = anthropic.requests.length;
    const { episodes } = await evalInProcess(runArgs("anthropic", anthropic.url));
    const t = at(at(episodes, 0).traces, 0);
    assert.deepEqual(t.errors, [], JSON.stringify(t.errors));
    assert.equal(anthropic.requests.length - before, 2);
    assert.equal(t.calls.length, 2);
    const output = JSON.stringify(t.info);
    assert.match(output, /anthropic=json hi/);
    assert.match(output, /anthropic-streamed=streamed: hi/);
  });
});
