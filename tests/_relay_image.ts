/**
 * A test image for the model relay: the busybox test image plus the Bun binary of
 * node_modules with the C library it links (the image has no other JavaScript runtime),
 * and a program built on the official `openai` and `@anthropic-ai/sdk` clients, bundled
 * into one file with `bun build`, at `/opt/agent.js`. `VF_AGENT` picks its calls
 * (`openai`: chat JSON then SSE; `anthropic`: Messages JSON then SSE); it first checks that
 * `VF_HOST_PROBE` (a URL of this host's loopback) is unreachable, else exits 4.
 */
import { execFileSync } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import process from "node:process";
import { buildImage, removeImage, TEST_IMAGE } from "./_docker.ts";

const ROOT = join(import.meta.dirname!, "..");
const BUN = realpathSync(join(ROOT, "node_modules", "bun", "bin", "bun.exe"));

/** The key the scripted providers of the relay tests take. */
export const RELAY_TEST_KEY = "sk-relay-secret";

const AGENT = `import OpenAI from "openai";
import Anthropic from "@anthropic-ai/sdk";
const probe = await fetch(process.env.VF_HOST_PROBE).then(() => "reached", () => "unreachable");
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

/**
 * A shell program whose `wget` (busybox's or GNU's) makes chat calls: it exits 4 if the
 * host's loopback (`VF_HOST_PROBE`) answers, then makes a JSON call (printed as `json=...`)
 * and a streamed one (the `content` fields of its events on one line).
 */
export const SHELL_AGENT = `set -e
if wget -q -T 3 -O /dev/null "$VF_HOST_PROBE" 2>/dev/null; then echo "host reached"; exit 4; fi
call() {
  wget -q -O - --header "Authorization: Bearer $OPENAI_API_KEY" \\
    --header "Content-Type: application/json" \\
    --post-data "{\\"model\\":\\"$OPENAI_MODEL\\",\\"stream\\":$1,\\"messages\\":[{\\"role\\":\\"user\\",\\"content\\":\\"hi\\"}]}" \\
    "$OPENAI_BASE_URL/chat/completions"
}
echo "json=$(call false)"
call true | grep -o '"content":"[^"]*"' | tr -d '\\n'; echo`;

/** Builds the image (tag unique to this process); `remove()` deletes it. */
export function buildRelayImage(): { tag: string; remove(): void } {
  const tag = `verifiers-ts-test:relay-${process.pid}`;
  const dir = mkdtempSync(join(tmpdir(), "vf-relay-image-"));
  try {
    writeFileSync(join(dir, "agent_src.mjs"), AGENT);
    execFileSync(BUN, ["build", "agent_src.mjs", "--target=bun", "--outfile", "agent.js"], {
      cwd: dir,
      stdio: "pipe",
      env: { ...process.env, NODE_PATH: join(ROOT, "node_modules") },
    });
    const libs = execFileSync("ldd", [BUN], { encoding: "utf8" }).split("\n")
      .map((l) => /(\/\S+) \(0x/.exec(l)?.[1]).filter((p): p is string => p !== undefined);
    for (const lib of libs) {
      const into = join(dir, "root", lib);
      mkdirSync(dirname(into), { recursive: true });
      copyFileSync(realpathSync(lib), into);
    }
    mkdirSync(join(dir, "root", "usr", "local", "bin"), { recursive: true });
    copyFileSync(BUN, join(dir, "root", "usr", "local", "bin", "bun"));
    writeFileSync(
      join(dir, "Dockerfile"),
      `FROM ${TEST_IMAGE}\nCOPY root/ /\nCOPY agent.js /opt/agent.js\n`,
    );
    buildImage(tag, dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return { tag, remove: () => removeImage(tag) };
}

/** `vf eval` arguments: the program in a container with no network, against `provider`. */
export function relayRunArgs(agent: string, provider: string, image: string): string[] {
  return [
    "addition",
    "-n",
    "1",
    "-m",
    "m-relay",
    "--client.base-url",
    provider,
    "--client.api-key-var",
    "VF_RELAY_TEST_KEY",
    "--env.agent.harness.id",
    "command",
    "--env.agent.harness.command",
    JSON.stringify(["bun", "/opt/agent.js"]),
    "--env.agent.harness.env",
    JSON.stringify({ VF_AGENT: agent, VF_HOST_PROBE: provider }),
    "--env.agent.runtime.type",
    "docker",
    "--env.agent.runtime.image",
    image,
    "--env.agent.runtime.block",
    '["*"]',
  ];
}
