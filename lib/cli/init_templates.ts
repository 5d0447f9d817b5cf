/**
 * The files `vf init <kind> <name>` writes: a plugin package that publishes to npm and
 * JSR alike (package.json + deno.json), the plugin (`mod.ts`, one per kind) as a plain
 * object of the structural plugin ABI, whose types are in the package itself (`abi.ts`,
 * types only: the plugin depends on no verifiers-ts package, so `npm install` needs
 * nothing but the npm registry and any `vf`, the single-file binary included, loads it),
 * the types of its bundle (`plugin.d.ts`), a test that runs it through `vf` (`mod_test.ts`), a bundle
 * task producing the self-contained `dist/plugin.js` that binaries and Bun load, and a
 * README. The generated TypeScript is `deno fmt`/`deno lint` clean, JSR slow types
 * included.
 *
 * @module
 */
import type { PluginKind } from "../../kit/contract.ts";
import { VERSION } from "../../kit/version.ts";

/** What the templates are filled with. */
export interface InitParams {
  kind: PluginKind;
  /** npm package name (`@acme/vf-mathsets` or `vf-mathsets`). */
  name: string;
  /** JSR package name (`@scope/name`). */
  jsrName: string;
  /** Plugin id (the normalized package name). */
  id: string;
}

/** First line of the bundle: JSR (and editors) read its types from `plugin.d.ts`. */
export const BUNDLE_BANNER = '// @ts-self-types="../plugin.d.ts"';

/** The npm `bundle` script: `mod.ts` -> one self-contained ESM file, with Bun. */
const BUNDLE_SCRIPT = "bun build ./mod.ts --target=node --format=esm " +
  `--outfile dist/plugin.js --banner '${BUNDLE_BANNER}'`;

/** The deno.json `bundle` task: the same with `deno bundle`, then the banner line. */
const DENO_BUNDLE_TASK = "deno bundle --platform=deno -o dist/plugin.js mod.ts && " +
  `deno eval "import { readFileSync, writeFileSync } from 'node:fs'; ` +
  `const f = 'dist/plugin.js'; ` +
  `writeFileSync(f, '// @ts-self-types=\\"../plugin.d.ts\\"\\n' + readFileSync(f, 'utf8'))"`;

/** The scaffold's own types-only module of the plugin ABI. */
const ABI = "./abi.ts";

const TYPE_NAME: Record<PluginKind, string> = {
  taskset: "TasksetPlugin",
  harness: "HarnessPlugin",
  judge: "JudgePlugin",
  runtime: "RuntimePlugin",
};

function json(value: unknown): string {
  return JSON.stringify(value, null, 2) + "\n";
}

function packageJson(p: InitParams): string {
  return json({
    name: p.name,
    version: "0.1.0",
    description: `A verifiers-ts ${p.kind} plugin`,
    type: "module",
    keywords: ["verifiers-ts", "verifiers-ts-plugin", `verifiers-ts-${p.kind}`],
    exports: {
      ".": { types: "./plugin.d.ts", default: "./dist/plugin.js" },
      "./plugin": { types: "./plugin.d.ts", default: "./dist/plugin.js" },
    },
    files: ["dist/plugin.js", "plugin.d.ts", "abi.ts", "mod.ts", "README.md"],
    verifiers: { abi: 1, kind: p.kind, id: p.id },
    scripts: { bundle: BUNDLE_SCRIPT, test: "bun test", prepack: "npm run bundle" },
    // what `npm install` brings from the npm registry alone: the bundler and test
    // runner (bun), the schema library (bundled into dist/plugin.js) and Node's types
    devDependencies: {
      bun: "^1.1.0",
      zod: "^4.0.0",
      "@types/node": "^20.0.0",
    },
    allowScripts: { bun: true },
  });
}

function denoJson(p: InitParams): string {
  return json({
    name: p.jsrName,
    version: "0.1.0",
    exports: { ".": "./mod.ts", "./plugin": "./dist/plugin.js" },
    imports: { zod: "npm:zod@^4" },
    tasks: { bundle: DENO_BUNDLE_TASK, test: "deno test -A" },
    publish: {
      include: ["mod.ts", "abi.ts", "plugin.d.ts", "dist/plugin.js", "README.md"],
      exclude: ["!dist"],
    },
  });
}

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

/**
 * The scaffold's `abi.ts`: the plugin ABI 1 of verifiers-ts as plain types (what `vf`
 * reads from a plugin object and hands to it) and the one helper the templates use.
 * `vf` recognises a plugin by its shape alone (`kind`, `abi: 1`, `id`), so a plugin
 * needs no verifiers-ts package at run time.
 */
const ABI_FILE = (_p: InitParams) =>
  `/**
 * The verifiers-ts plugin ABI 1 as plain types, for this package alone. vf
 * recognises a plugin by its shape (\`kind\`, \`abi: 1\`, \`id\`), so nothing here
 * is a dependency: the types are erased, and \`lastReply\` is bundled.
 * Written by \`vf init\` for verifiers-ts ${VERSION}; see its docs/plugins.md.
 *
 * @module
 */

/** A chat message. */
export interface Message {
  role: string;
  content: unknown;
  [key: string]: unknown;
}

/** The trace of one rollout (the message graph; other fields elided). */
export interface Trace {
  nodes: { parent: number | null; message: Message }[];
  [key: string]: unknown;
}

/** One task, as \`load\` yields it. */
export interface TaskData {
  idx?: number;
  prompt?: unknown;
  answer?: unknown;
  [key: string]: unknown;
}

/** A config schema: a zod object (vf reads its fields for flags and help). */
export interface ConfigSchema {
  parse(raw: unknown): unknown;
}

/** What a reward or metric hook gets. */
export interface HookContext {
  task: TaskData;
  trace: Trace;
  runtime: Runtime | null;
  config: Record<string, unknown>;
  signal: AbortSignal;
}

/** One reward hook. */
export interface RewardHook {
  fn(ctx: HookContext): number | Promise<number>;
  weight?: number;
  priority?: number;
}

/** What a program run in a runtime returned. */
export interface ProgramResult {
  exitCode: number;
  stdout: string;
  stderr: string;
}

/** Options of \`Runtime.run\`. */
export interface RunOptions {
  env?: Record<string, string>;
  cwd?: string;
  timeoutMs?: number;
  signal?: AbortSignal;
  stdin?: string | Uint8Array;
}

/** A place where commands run. */
export interface Runtime {
  readonly info: { type: string; id: string | null };
  readonly stopped: boolean;
  readonly isLocal: boolean;
  readonly timeoutS: number | null;
  readonly workdir: string;
  start(options?: { signal?: AbortSignal }): Promise<void>;
  run(argv: string[], options?: RunOptions): Promise<ProgramResult>;
  write(path: string, data: string | Uint8Array): Promise<void>;
  read(path: string, options?: { maxBytes?: number }): Promise<Uint8Array>;
  alive(): Promise<boolean>;
  stop(): Promise<void>;
  stopConfirmed(): Promise<void>;
}

interface PluginBase<K extends string> {
  kind: K;
  abi: 1;
  id: string;
  description: string;
  config: ConfigSchema;
}

/** A taskset plugin. */
export interface TasksetPlugin extends PluginBase<"taskset"> {
  defaultHarness?: string;
  load(
    config: Record<string, unknown>,
  ): Iterable<TaskData> | Promise<Iterable<TaskData>>;
  solution?(task: TaskData): { text: string };
  rewards?: Record<string, RewardHook>;
}

/** A harness plugin. */
export interface HarnessPlugin extends PluginBase<"harness"> {
  capabilities: {
    executesCode: boolean;
    needsContainer: boolean;
    appendsSystemPrompt: boolean;
  };
  launch(ctx: {
    runtime: Runtime;
    endpoint: string;
    secret: string;
    model: string;
    messages: Message[];
    config: Record<string, unknown>;
    signal: AbortSignal;
    log(message: string): void;
  }): Promise<ProgramResult>;
}

/** A judge plugin. */
export interface JudgePlugin extends PluginBase<"judge"> {
  score(
    ctx: HookContext & { judge: Record<string, unknown>; rewardKey: string },
  ): Promise<number>;
}

/** A runtime plugin (its id is \`[env.agent.runtime] type\`). */
export interface RuntimePlugin extends PluginBase<"runtime"> {
  isLocal: boolean;
  create(config: Record<string, unknown>): Runtime;
}

/** Text of the last assistant message of the conversation as it ended. */
export function lastReply(trace: Trace): string {
  const parents = new Set(trace.nodes.map((n) => n.parent));
  let leaf = -1;
  trace.nodes.forEach((_, i) => {
    if (!parents.has(i)) leaf = i;
  });
  for (let i: number | null = leaf; i !== null && i >= 0; i = trace.nodes[i].parent) {
    const m = trace.nodes[i].message;
    if (m.role === "assistant") {
      return typeof m.content === "string" ? m.content : "";
    }
  }
  return "";
}
`;

const DTS = (p: InitParams) =>
  `/** Types of the bundled plugin (dist/plugin.js). */
import type { ${TYPE_NAME[p.kind]} } from "${ABI}";

/** The \`${p.id}\` ${p.kind} plugin. */
declare const plugin: ${TYPE_NAME[p.kind]};
export default plugin;
`;

/** The `vf eval` arguments the scaffolded test runs an entry with, one per line. */
function evalArgs(p: InitParams): string[] {
  switch (p.kind) {
    case "taskset":
      return ["entry", '"--env.taskset.count"', '"3"'];
    case "harness":
      return ['"echo"', '"--env.agent.harness.id"', "entry"];
    case "judge":
      return [
        '"echo"',
        '"--env.agent.harness.id"',
        '"null"',
        '"--env.taskset.task.judges"',
        "JSON.stringify([{ id: entry }])",
      ];
    case "runtime":
      return ['"shell-basics"', '"-n"', '"3"', '"--env.agent.runtime.type"', "entry"];
  }
}

const TEST = (p: InitParams) =>
  `/**
 * Runs the plugin through \`vf\` ($VF_BIN, else \`vf\` on PATH): its config
 * fields, then a whole evaluation with the \`oracle\` model, from the source
 * and, once \`bundle\` has run, from dist/plugin.js (what binaries load).
 *
 * @module
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";

const VF = process.env.VF_BIN ?? "vf";
const HERE = import.meta.dirname!;

function vf(args: string[]) {
  const r = spawnSync(VF, args, {
    cwd: HERE,
    encoding: "utf8",
    env: { ...process.env, NO_COLOR: "1" },
  });
  if (r.error) throw r.error;
  return r;
}

const entries = ["./mod.ts"];
if (existsSync(join(HERE, "dist", "plugin.js"))) {
  entries.push("./dist/plugin.js");
}

describe("${p.id} through vf", () => {
  it("shows its config fields", () => {
    const r = vf(["plugins", "show", "${p.kind}", "./mod.ts"]);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /${p.kind} "${p.id}" \\(abi 1\\)/);
  });

  for (const entry of entries) {
    it(\`scores 1 with the oracle model (\${entry})\`, () => {
      const out = mkdtempSync(join(tmpdir(), "${p.id}-"));
      const r = vf([
        "eval",
${evalArgs(p).map((a) => `        ${a},\n`).join("")}        "-m",
        "oracle",
        "-o",
        out,
        "--display",
        "plain",
      ]);
      assert.equal(r.status, 0, r.stderr);
      assert.match(r.stdout, /${
    p.kind === "judge" ? `^rewards\\b.*\\b${p.id} 1\\.000` : "^reward +1\\.000$"
  }/m);
    });
  }
});
`;

const README = (p: InitParams) =>
  `# ${p.name}

A verifiers-ts ${p.kind} plugin: id \`${p.id}\`, plugin ABI 1.

\`\`\`sh
npm install             # or: deno install
npm run bundle          # dist/plugin.js, one self-contained ESM file (bun)
deno task bundle        # the same with deno bundle
VF_BIN=vf npm test      # runs it through vf with the oracle model
\`\`\`

Use it from the source (\`deno run\`, Bun) or, once published, from npm or JSR
(any \`vf\`, the single-file binary too):

\`\`\`sh
vf plugins show ${p.kind} ./mod.ts
vf plugins show ${p.kind} npm:${p.name}@^0.1
vf plugins show ${p.kind} jsr:${p.jsrName}@^0.1
\`\`\`

Publish with \`npm publish\` (the \`prepack\` script bundles first) and
\`deno task bundle && deno publish\`. The rules are in verifiers-ts's
docs/plugins.md.
`;

const GITIGNORE = "node_modules/\ndist/\noutputs/\n*.tgz\n";

/** The files of a new plugin package, by relative path. */
export function initFiles(p: InitParams): Record<string, string> {
  const plugin = { taskset: TASKSET, judge: JUDGE, harness: HARNESS, runtime: RUNTIME }[p.kind];
  return {
    "package.json": packageJson(p),
    "deno.json": denoJson(p),
    ".gitignore": GITIGNORE,
    "mod.ts": plugin(p),
    "abi.ts": ABI_FILE(p),
    "plugin.d.ts": DTS(p),
    "mod_test.ts": TEST(p),
    "README.md": README(p),
  };
}
