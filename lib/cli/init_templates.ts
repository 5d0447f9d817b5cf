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
import { VERSION } from "../../kit/version.ts";
import { ABI, type InitKind, PLUGIN_TEMPLATES } from "./init_plugin_templates.ts";

/** What the templates are filled with. */
export interface InitParams {
  kind: InitKind;
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

const TYPE_NAME: Record<InitKind, string> = {
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
    scripts: { bundle: BUNDLE_SCRIPT, test: "bun test --timeout 60000", prepack: "npm run bundle" },
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
import { existsSync, mkdtempSync, rmSync } from "node:fs";
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
      try {
        const r = vf([
          "eval",
${evalArgs(p).map((a) => `          ${a},\n`).join("")}          "-m",
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
      } finally {
        rmSync(out, { recursive: true, force: true });
      }
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
  const plugin = PLUGIN_TEMPLATES[p.kind];
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
