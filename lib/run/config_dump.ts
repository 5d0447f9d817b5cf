/**
 * `configs/eval.json`: the resolved config with nulls kept, shaped so Python verifiers v1's
 * `EvalConfig` loads it (verifiers/v1/configs/cli/eval.py@a60a606). Launch-only switches
 * (`dry_run`, `resume`, `clean`, `lock`, `frozen`) and invocation-only options (`display`,
 * `fail_on_error`) are left out; settings only verifiers-ts has that define the run (the
 * selection `seed`, runtime and harness keys Python's models forbid) go to
 * `configs/verifiers-ts.json` ({@link savedConfig}). API keys are never in either file —
 * only the name of the variable that holds one — nor header values or URL userinfo
 * (`***`), nor any other registered secret (kit/secrets.ts).
 *
 * @module
 */
import { join } from "node:path";
import { createHash } from "node:crypto";
import { type EvalConfig, LAUNCH_ONLY_KEYS } from "../config/eval_config.ts";
import { sidecarPath } from "../config/sidecar.ts";
import { roleSections, type Seat } from "../config/roles.ts";
import { splitRuntimeConfig } from "../../kit/runtime/wire.ts";
import { pythonJsonDumps } from "../../kit/tasks/hash.ts";
import { asOutputError } from "../../kit/util/fs_errors.ts";
import { writeFileAtomic } from "../../kit/util/write_atomic.ts";
import { isMaskedUrl, MASK, maskUrl, redact } from "../../kit/secrets.ts";

/** Options of one invocation: never saved (a resume may change them). */
const INVOCATION_ONLY_KEYS = ["display", "fail_on_error"] as const;

/** Root keys saved in the sidecar only. */
const SIDECAR_ROOT_KEYS = ["seed"] as const;

const HARNESS_BASE_KEYS = ["id", "env", "forward_env", "tool_timeout", "disabled_tools", "skills"];

/**
 * Config keys of the plugins both tools ship, as Python's config classes have them
 * (`harnesses/{bash,null}/harness.py`, `environments/reverse_text` at a60a606).
 */
const PYTHON_PLUGIN_KEYS: Record<"harness" | "taskset", Record<string, readonly string[]>> = {
  harness: {
    bash: [...HARNESS_BASE_KEYS, "edit", "search"],
    null: HARNESS_BASE_KEYS,
  },
  taskset: {
    "reverse-text": ["id", "task", "system_prompt", "dataset_name", "dataset_split"],
  },
};

function splitKeys(
  section: Record<string, unknown>,
  known: readonly string[] | undefined,
): { wire: Record<string, unknown>; extras: Record<string, unknown> } {
  if (!known) return { wire: section, extras: {} };
  const wire: Record<string, unknown> = {};
  const extras: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(section)) (known.includes(k) ? wire : extras)[k] = v;
  return { wire, extras };
}

/**
 * The config as saved: `dump` for `configs/eval.json` (Python loads it) and `side` for
 * `configs/verifiers-ts.json` (the settings only verifiers-ts has), both without secrets.
 */
export function savedConfig(
  config: EvalConfig,
): { dump: Record<string, unknown>; side: Record<string, unknown> } {
  const dump = structuredClone(config) as Record<string, unknown>;
  for (const k of [...LAUNCH_ONLY_KEYS, ...INVOCATION_ONLY_KEYS]) delete dump[k];
  const side: Record<string, unknown> = {};
  for (const k of SIDECAR_ROOT_KEYS) {
    side[k] = dump[k] ?? null;
    delete dump[k];
  }
  // a sharded run's shard (lib/run/shard.ts); an unsharded run's saved config has no key
  if (dump.shard != null) side.shard = dump.shard;
  delete dump.shard;
  const d = dump as unknown as EvalConfig;
  // Python's `client` is a union told apart by `type`; its writer names it, so do we.
  (d.client as Record<string, unknown>).type = "eval";
  // Python's SamplingConfig has no `seed`; an unset one is not written.
  const sampling = d.sampling as Record<string, unknown>;
  if (sampling.seed === null) delete sampling.seed;
  // `env.agent` aliases an env's first role when it is not `agent`: only the role is written
  const sections = config.env as unknown as Record<string, unknown>;
  const aliased = roleSections(sections).some(([k, v]) => k !== "agent" && v === sections.agent);
  if (aliased) delete (d.env as Partial<EvalConfig["env"]>).agent;
  const env = d.env as unknown as Record<"taskset", Record<string, unknown>>;
  const taskset = splitKeys(env.taskset, PYTHON_PLUGIN_KEYS.taskset[String(env.taskset.id)]);
  env.taskset = taskset.wire;
  const sideEnv: Record<string, unknown> = {};
  if (Object.keys(taskset.extras).length) sideEnv.taskset = taskset.extras;
  for (const [role, seat] of roleSections(d.env as unknown as Record<string, unknown>)) {
    const extras = seatForPython(seat, d.client);
    if (Object.keys(extras).length) sideEnv[role] = extras;
  }
  const interception = pythonInterception(d.env.interception);
  (d.env as unknown as Record<string, unknown>).interception = interception.wire;
  if (interception.extras !== null) sideEnv.interception = interception.extras;
  if (Object.keys(sideEnv).length) side.env = sideEnv;
  // Python's judges always name their own client and model (JudgeConfig, configs/judge.py):
  // ours default to the run's, so the run's values are written.
  for (const judge of (env.taskset.task as { judges?: Record<string, unknown>[] }).judges ?? []) {
    judge.base_url ??= d.client.base_url;
    judge.api_key_var ??= d.client.api_key_var;
    judge.model ??= d.model;
  }
  // Python's client has no stall timeout (verifiers/v1/clients/base.py@a60a606: no read
  // timeout), no dialects (it passes every call through) and no images switch: all go to
  // the sidecar.
  const client = d.client as Record<string, unknown>;
  const sideClient: Record<string, unknown> = {};
  for (const key of ["stall_timeout", "dialects", "images"]) {
    if (key in client) {
      sideClient[key] = client[key];
      delete client[key];
    }
  }
  if (Object.keys(sideClient).length > 0) side.client = sideClient;
  for (const [, c] of clientsOf(dump)) maskClient(c);
  return { dump: scrubbed(dump), side: scrubbed(side) };
}

/**
 * A seat as Python's `AgentConfig` writes it (in place): runtime and harness keys Python
 * lacks moved out (returned, for the sidecar), a client in full (the run's keys where the
 * seat sets none, as the seat resolves them).
 */
function seatForPython(seat: Seat, run: EvalConfig["client"]): Record<string, unknown> {
  const table = seat as unknown as Record<"runtime" | "harness", Record<string, unknown>>;
  const side: Record<string, unknown> = {};
  const runtime = splitRuntimeConfig(table.runtime);
  table.runtime = runtime.wire;
  if (Object.keys(runtime.extras).length) side.runtime = runtime.extras;
  const harness = splitKeys(table.harness, PYTHON_PLUGIN_KEYS.harness[String(table.harness.id)]);
  table.harness = harness.wire;
  if (Object.keys(harness.extras).length) side.harness = harness.extras;
  if (seat.client) {
    const c = seat.client;
    seat.client = {
      type: "eval",
      base_url: c.base_url ?? run.base_url,
      api_key_var: c.api_key_var ?? run.api_key_var,
      headers: c.headers ?? { ...run.headers },
    };
  }
  const sampling = seat.sampling as Record<string, unknown> | null;
  if (sampling?.seed === null) delete sampling.seed;
  return side;
}

/**
 * `env.interception` as Python's union has it (elastic `multiplex`, static `servers`, server
 * `tunnel`), and what only verifiers-ts has (the bound address, the relay) for the sidecar.
 */
function pythonInterception(
  i: EvalConfig["env"]["interception"],
): { wire: Record<string, unknown>; extras: Record<string, unknown> | null } {
  const extras: Record<string, unknown> = {};
  if (i.host !== "127.0.0.1") extras.host = i.host;
  if (i.port !== 0) extras.port = i.port;
  let wire: Record<string, unknown>;
  if (i.tunnel?.type === "custom") wire = { type: "server", tunnel: i.tunnel };
  else if (i.type === "static" && i.servers !== undefined) {
    wire = { type: "static", servers: i.servers };
  } else wire = { type: "elastic", multiplex: i.multiplex };
  if (i.tunnel?.type === "relay") extras.tunnel = i.tunnel;
  if (wire.type !== i.type) extras.type = i.type;
  return { wire, extras: Object.keys(extras).length ? extras : null };
}

/** A JSON-ready copy with every registered secret value replaced by `***`. */
function scrubbed(value: Record<string, unknown>): Record<string, unknown> {
  return JSON.parse(redact(JSON.stringify(value)));
}

/** A client-like table with its header values and URL userinfo masked (in place). */
function maskClient(client: unknown): void {
  if (typeof client !== "object" || client === null) return;
  const c = client as { base_url?: unknown; headers?: unknown };
  if (typeof c.base_url === "string") c.base_url = maskUrl(c.base_url);
  if (typeof c.headers === "object" && c.headers !== null) {
    const headers = c.headers as Record<string, unknown>;
    for (const name of Object.keys(headers)) headers[name] = MASK;
  }
}

/** The client-like tables of a config by path: the run's, every judge's, every seat's own. */
function clientsOf(config: Record<string, unknown>): [string, unknown][] {
  const env = (config.env ?? {}) as { taskset?: { task?: { judges?: unknown } } };
  const judges = env.taskset?.task?.judges;
  return [
    ["client", config.client],
    ...(Array.isArray(judges) ? judges : []).map((j, i) =>
      [`env.taskset.task.judges[${i}]`, j] as [string, unknown]
    ),
    ...roleSections(env as Record<string, unknown>)
      .filter(([, seat]) => seat.client)
      .map(([role, seat]) => [`env.${role}.client`, seat.client] as [string, unknown]),
  ];
}

/** Config paths holding a secret the saved config masks (a resume must give them again). */
export function maskedSecretPaths(config: EvalConfig): string[] {
  const out: string[] = [];
  for (const [where, client] of clientsOf(config as unknown as Record<string, unknown>)) {
    if (typeof client !== "object" || client === null) continue;
    const c = client as { base_url?: string | null; headers?: Record<string, string> };
    if (isMaskedUrl(c.base_url)) out.push(`${where}.base_url`);
    for (const [name, value] of Object.entries(c.headers ?? {})) {
      if (value === MASK) out.push(`${where}.headers.${name}`);
    }
  }
  return out;
}

/** The config as saved in `configs/eval.json` (a JSON-ready copy Python loads, no secrets). */
export function configForDump(config: EvalConfig): Record<string, unknown> {
  return savedConfig(config).dump;
}

/** SHA-256 of the dumped config's sorted-key JSON (compares a resume against its run). */
export function configDigest(config: Record<string, unknown>): string {
  return createHash("sha256").update(pythonJsonDumps(config)).digest("hex");
}

/**
 * Writes one of the run's own files atomically (kit/util/write_atomic.ts); a failure
 * (disk full, unwritable path) is an OutputError naming the file.
 */
export function writeOutputAtomic(path: string, text: string): void {
  try {
    writeFileAtomic(path, text);
  } catch (err) {
    throw asOutputError(err, "", path) ?? err;
  }
}

/** Writes `<runDir>/configs/eval.json` and its sidecar; returns the eval.json path. */
export function writeEvalJson(runDir: string, config: EvalConfig): string {
  const path = join(runDir, "configs", "eval.json");
  const { dump, side } = savedConfig(config);
  writeOutputAtomic(sidecarPath(runDir), JSON.stringify(side, null, 2) + "\n");
  writeOutputAtomic(path, JSON.stringify(dump, null, 2) + "\n");
  return path;
}
