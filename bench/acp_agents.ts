/**
 * One-tool-call rollouts of the `pi` harness against a scripted loopback chat model, three
 * ways, interleaved: through vf (a whole in-process `vf eval` of one rollout: interception,
 * the ACP base, trace and scoring), through a minimal ACP client of this benchmark's own
 * driving the same adapter against the same model, and pi run directly (`pi -p`). Prints
 * the medians and the ratios vf / minimal client (target <= 1.3) and vf / direct. Needs the
 * pi install in the agent cache (`vf harnesses install pi`).
 *
 *   deno run -A bench/acp_agents.ts [rounds]
 *
 * @module
 */
import "./_builtins.ts";
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { Readable, Writable } from "node:stream";
import { client, ndJsonStream } from "@agentclientprotocol/sdk";
import pi from "../plugins/harnesses/pi/mod.ts";
import { bunBinary } from "../kit/harness/acp/harness.ts";
import { agentsCacheDir, installName, isInstalled } from "../kit/harness/acp/install.ts";
import { loadEvalConfig } from "../lib/config/load_config.ts";
import { resolveRunDir } from "../lib/run/naming.ts";
import { runEval } from "../lib/run/run_eval.ts";
import { startFakeOpenAI } from "../tests/fakes/openai_server.ts";
import { median } from "./common.ts";

const rounds = Number(process.argv[2] ?? 3);
const bundle = pi.agentBundle!;
if (!isInstalled(bundle)) {
  console.log("acp_agents: pi is not in the agent cache (vf harnesses install pi)");
  process.exit(0);
}
const install = join(agentsCacheDir(), installName(bundle));
const bun = bunBinary(install);
const PI_CLI = join(install, "node_modules/@earendil-works/pi-coding-agent/dist/cli.js");
const ADAPTER = join(install, "node_modules/pi-acp/dist/index.js");
const KEY = "sk-bench-acp-0123456789";
process.env.VF_BENCH_ACP_KEY = KEY;

const fake = await startFakeOpenAI({
  apiKey: KEY,
  script: (body) =>
    (body.messages as { role: string }[]).some((m) => m.role === "tool")
      ? "The answer is 42."
      : { tool_calls: [{ name: "bash", arguments: { command: "echo ok > proof.txt" } }] },
});
const root = mkdtempSync(join(tmpdir(), "vf-bench-acp-"));
writeFileSync(join(root, "t.jsonl"), JSON.stringify({ prompt: "Do it.", answer: "42" }) + "\n");
writeFileSync(
  join(root, "run.toml"),
  `model = "m"
[client]
base_url = ${JSON.stringify(fake.url)}
api_key_var = "VF_BENCH_ACP_KEY"
[env.taskset]
id = "jsonl"
path = ${JSON.stringify(join(root, "t.jsonl"))}
[env.agent.harness]
id = "pi"
`,
);

/** A fresh pi agent folder pointed at the fake, and the environment pi needs. */
function piSetup(dir: string): Record<string, string> {
  const agentDir = join(dir, "agent");
  mkdirSync(join(dir, "work"), { recursive: true });
  mkdirSync(agentDir, { recursive: true });
  writeFileSync(
    join(agentDir, "models.json"),
    JSON.stringify({
      providers: {
        vf: { baseUrl: fake.url, api: "openai-completions", apiKey: "$K", models: [{ id: "m" }] },
      },
    }),
  );
  writeFileSync(join(agentDir, "settings.json"), JSON.stringify({ retry: { enabled: false } }));
  const wrapper = join(dir, "pi");
  writeFileSync(
    wrapper,
    `#!/bin/sh\nexec ${bun} ${PI_CLI} --provider vf --model m --offline "$@"\n`,
    { mode: 0o700 },
  );
  return {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: dir,
    PI_CODING_AGENT_DIR: agentDir,
    PI_ACP_PI_COMMAND: wrapper,
    PI_OFFLINE: "1",
    PI_TELEMETRY: "0",
    K: KEY,
  };
}

async function viaVf(): Promise<void> {
  const out = mkdtempSync(join(root, "vf-"));
  const loaded = await loadEvalConfig(
    ["@", join(root, "run.toml"), "-o", out, "--display", "none"],
    {
      cwd: root,
    },
  );
  await runEval(loaded, { runDir: resolveRunDir(loaded.config, root), cwd: root });
}

async function viaMinimalClient(): Promise<void> {
  const dir = mkdtempSync(join(root, "acp-"));
  const env = piSetup(dir);
  const child = spawn(bun, [ADAPTER], { cwd: join(dir, "work"), env, detached: true });
  const conn = client({ name: "bench" })
    .onRequest("session/request_permission", ({ params }) => ({
      outcome: { outcome: "selected", optionId: params.options[0]!.optionId },
    }))
    .onNotification("session/update", () => {})
    .connect(ndJsonStream(
      Writable.toWeb(child.stdin) as WritableStream<Uint8Array>,
      Readable.toWeb(child.stdout) as unknown as ReadableStream<Uint8Array>,
    ));
  await conn.agent.request("initialize", { protocolVersion: 1, clientCapabilities: {} });
  const s = await conn.agent.request("session/new", { cwd: join(dir, "work"), mcpServers: [] });
  await conn.agent.request("session/prompt", {
    sessionId: s.sessionId,
    prompt: [{ type: "text", text: "Do it." }],
  });
  conn.close();
  process.kill(-child.pid!, "SIGKILL");
}

function direct(): Promise<void> {
  const dir = mkdtempSync(join(root, "direct-"));
  const env = piSetup(dir);
  return new Promise((resolve, reject) => {
    const child = spawn(bun, [
      PI_CLI,
      "--provider",
      "vf",
      "--model",
      "m",
      "--offline",
      "-p",
      "--no-session",
      "Do it.",
    ], {
      cwd: join(dir, "work"),
      env,
      stdio: ["ignore", "ignore", "inherit"],
    });
    child.on("exit", (code) => code === 0 ? resolve() : reject(new Error(`pi exited ${code}`)));
  });
}

const ways: [string, () => Promise<void>][] = [
  ["vf (pi harness)", viaVf],
  ["minimal ACP client", viaMinimalClient],
  ["pi -p directly", direct],
];
const times = new Map<string, number[]>(ways.map(([name]) => [name, []]));
await viaVf(); // warm: the first run loads the engine's modules
for (let r = 0; r < rounds; r++) {
  for (const [name, fn] of ways) {
    const t = performance.now();
    await fn();
    times.get(name)!.push(performance.now() - t);
  }
}
await fake.close();
rmSync(root, { recursive: true, force: true });
const med = (name: string) => median(times.get(name)!);
for (const [name] of ways) console.log(`${name.padEnd(20)} median ${med(name).toFixed(0)} ms`);
const vf = med("vf (pi harness)");
console.log(
  `vf / minimal ACP client: ${(vf / med("minimal ACP client")).toFixed(2)}x (target <= 1.3)`,
);
console.log(`vf / pi -p directly:     ${(vf / med("pi -p directly")).toFixed(2)}x`);
