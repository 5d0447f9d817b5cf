/**
 * The plugin module `vf init` writes (`mod.ts`), one template per kind: a small working
 * taskset, judge, harness or runtime typed by the scaffold's own `abi.ts`.
 *
 * @module
 */
import type { PluginKind } from "../../kit/contract.ts";

/** The kinds `vf init` scaffolds (an env plugin has no template yet). */
export type InitKind = Exclude<PluginKind, "env">;

/** Every kind `vf init` scaffolds, in display order. */
export const INIT_KINDS: readonly InitKind[] = ["taskset", "harness", "judge", "runtime"];
import type { InitParams } from "./init_templates.ts";

/** The scaffold's own types-only module of the plugin ABI. */
export const ABI = "./abi.ts";

const TASKSET = (p: InitParams) =>
  `/**
 * The \`${p.id}\` taskset: add two numbers. Scaffolded by \`vf init\`;
 * replace the tasks, the config and the reward with your own.
 *
 * @module
 */
import { z } from "zod";
import { lastReply, type TasksetPlugin } from "${ABI}";

/** Own config keys: \`--env.taskset.<key>\` flags, \`[env.taskset]\` in TOML. */
const config = z.object({
  count: z.number().int().min(1).default(5).describe("How many tasks"),
  max_operand: z.number().int().min(1).default(99).describe("Largest operand"),
});

/** The \`${p.id}\` taskset plugin. */
const plugin: TasksetPlugin = {
  kind: "taskset",
  abi: 1,
  id: "${p.id}",
  description: "Add two numbers (scaffolded by vf init)",
  config,
  defaultHarness: "null",
  load(raw) {
    const { count, max_operand } = config.parse(raw);
    return Array.from({ length: count }, (_, idx) => {
      const a = (idx * 37 + 11) % (max_operand + 1);
      const b = (idx * 53 + 7) % (max_operand + 1);
      return {
        idx,
        prompt: \`What is \${a} + \${b}? Answer with the number only.\`,
        answer: String(a + b),
      };
    });
  },
  solution: (task) => ({ text: String(task.answer) }),
  rewards: {
    correct: {
      fn: (ctx) =>
        lastReply(ctx.trace).trim() === String(ctx.task.answer) ? 1 : 0,
    },
  },
};

export default plugin;
`;

const JUDGE = (p: InitParams) =>
  `/**
 * The \`${p.id}\` judge: 1 when the last reply contains the task's answer.
 * Scaffolded by \`vf init\`; replace the scoring with your own.
 *
 * @module
 */
import { z } from "zod";
import { type JudgePlugin, lastReply } from "${ABI}";

/** Own config keys, set per entry of \`env.taskset.task.judges\`. */
const config = z.object({
  case_sensitive: z.boolean().default(false).describe(
    "Compare case-sensitively",
  ),
});

/** The \`${p.id}\` judge plugin. */
const plugin: JudgePlugin = {
  kind: "judge",
  abi: 1,
  id: "${p.id}",
  description: "1 when the reply contains the answer (scaffolded by vf init)",
  config,
  score(ctx) {
    const { case_sensitive } = config.parse(ctx.judge);
    const answer = ctx.task.answer;
    if (answer === undefined || answer === null) return Promise.resolve(0);
    const norm = (s: string) => (case_sensitive ? s : s.toLowerCase());
    const hit = norm(lastReply(ctx.trace)).includes(norm(String(answer)));
    return Promise.resolve(hit ? 1 : 0);
  },
};

export default plugin;
`;

const HARNESS = (p: InitParams) =>
  `/**
 * The \`${p.id}\` harness: one chat completion, no tools. Every model call
 * goes to \`ctx.endpoint\` (the run's interception server), which records it
 * in the trace. Scaffolded by \`vf init\`; replace the loop with your agent.
 *
 * @module
 */
import { z } from "zod";
import type { HarnessPlugin } from "${ABI}";

/** Own config keys: \`--env.agent.harness.<key>\` flags. */
const config = z.object({
  retries: z.number().int().min(0).default(2).describe("Retries of a 5xx"),
});

/** The \`${p.id}\` harness plugin. */
const plugin: HarnessPlugin = {
  kind: "harness",
  abi: 1,
  id: "${p.id}",
  description: "One chat completion, no tools (scaffolded by vf init)",
  config,
  capabilities: {
    executesCode: false,
    needsContainer: false,
    appendsSystemPrompt: true,
  },
  async launch(ctx) {
    const { retries } = config.parse(ctx.config);
    let last = "";
    for (let attempt = 0; attempt <= retries; attempt++) {
      const res = await fetch(\`\${ctx.endpoint}/chat/completions\`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          authorization: \`Bearer \${ctx.secret}\`,
          "x-stainless-retry-count": String(attempt),
        },
        body: JSON.stringify({ model: ctx.model, messages: ctx.messages }),
        signal: ctx.signal,
      });
      const text = await res.text();
      if (res.ok) {
        const reply = String(
          JSON.parse(text).choices?.[0]?.message?.content ?? "",
        );
        ctx.log(\`${p.id}: \${reply.slice(0, 80)}\`);
        return { exitCode: 0, stdout: reply, stderr: "" };
      }
      last = \`HTTP \${res.status}: \${text.slice(0, 500)}\`;
      if (res.status < 500) break;
    }
    return { exitCode: 1, stdout: "", stderr: last };
  },
};

export default plugin;
`;

const RUNTIME = (p: InitParams) =>
  `/**
 * The \`${p.id}\` runtime: commands run on this machine, each instance in a
 * fresh temporary directory. Scaffolded by \`vf init\`; replace it with your
 * sandbox provider (the Runtime contract: start, run, write, read, stop).
 *
 * @module
 */
import { spawn } from "node:child_process";
import {
  mkdir,
  mkdtemp,
  readFile,
  rm,
  stat,
  writeFile,
} from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, isAbsolute, join } from "node:path";
import process from "node:process";
import { z } from "zod";
import type {
  ProgramResult,
  RunOptions,
  Runtime,
  RuntimePlugin,
} from "${ABI}";

/** Own config keys: \`--env.agent.runtime.<key>\` flags. */
const config = z.object({
  env: z.record(z.string(), z.string()).default({}).describe(
    "Environment of every command",
  ),
});

function runIn(
  workdir: string,
  env: Record<string, string>,
  argv: string[],
  options: RunOptions,
): Promise<ProgramResult> {
  return new Promise((resolve) => {
    const cwd = options.cwd ?? ".";
    const child = spawn(argv[0], argv.slice(1), {
      cwd: isAbsolute(cwd) ? cwd : join(workdir, cwd),
      env: {
        PATH: process.env.PATH ?? "/usr/bin:/bin",
        HOME: workdir,
        ...env,
        ...options.env,
      },
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    let killedWith: number | null = null;
    const kill = (code: number) => {
      killedWith = code;
      child.kill("SIGKILL");
    };
    const timer = options.timeoutMs
      ? setTimeout(() => kill(124), options.timeoutMs)
      : null;
    const onAbort = () => kill(137);
    options.signal?.addEventListener("abort", onAbort, { once: true });
    child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
    child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    child.stdin.end(options.stdin ?? "");
    const done = (code: number) => {
      if (timer) clearTimeout(timer);
      options.signal?.removeEventListener("abort", onAbort);
      resolve({ exitCode: killedWith ?? code, stdout, stderr });
    };
    child.on("error", (err) => {
      stderr += String(err);
      done(127);
    });
    child.on("close", (code, signal) => done(code ?? (signal ? 137 : 1)));
  });
}

function makeRuntime(env: Record<string, string>): Runtime {
  let workdir = "";
  let stopped = false;
  const abs = (p: string) => (isAbsolute(p) ? p : join(workdir, p));
  const runtime: Runtime = {
    get info() {
      return { type: "${p.id}", id: workdir || null };
    },
    get stopped() {
      return stopped;
    },
    isLocal: true,
    timeoutS: null,
    get workdir() {
      return workdir;
    },
    async start() {
      workdir = await mkdtemp(join(tmpdir(), "${p.id}-"));
      stopped = false;
    },
    run: (argv, options = {}) => runIn(workdir, env, argv, options),
    async write(path, data) {
      await mkdir(dirname(abs(path)), { recursive: true });
      await writeFile(abs(path), data);
    },
    async read(path, options = {}) {
      const size = (await stat(abs(path))).size;
      if (options.maxBytes !== undefined && size > options.maxBytes) {
        throw new Error(\`\${path}: \${size} bytes, over \${options.maxBytes}\`);
      }
      return new Uint8Array(await readFile(abs(path)));
    },
    alive: () => Promise.resolve(workdir !== "" && !stopped),
    async stop() {
      try {
        await runtime.stopConfirmed();
      } catch {
        // best effort
      }
    },
    async stopConfirmed() {
      if (workdir) await rm(workdir, { recursive: true, force: true });
      stopped = true;
    },
  };
  return runtime;
}

/** The \`${p.id}\` runtime plugin (its id is \`[env.agent.runtime] type\`). */
const plugin: RuntimePlugin = {
  kind: "runtime",
  abi: 1,
  id: "${p.id}",
  description: "Commands in a temp directory here (scaffolded by vf init)",
  config,
  isLocal: true,
  create: (raw) => makeRuntime(config.parse(raw).env),
};

export default plugin;
`;

/** The `mod.ts` template of each kind. */
export const PLUGIN_TEMPLATES: Record<InitKind, (p: InitParams) => string> = {
  taskset: TASKSET,
  judge: JUDGE,
  harness: HARNESS,
  runtime: RUNTIME,
};
