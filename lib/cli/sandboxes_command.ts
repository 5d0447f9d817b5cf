/**
 * `vf sandboxes list`, `vf sandboxes gc` and `vf sandbox exec`: the user's view of the
 * sandbox ledger (every remote sandbox not yet confirmed stopped), confirmed cleanup of
 * what it lists, and a one-shot command in a fresh sandbox (to check credentials and
 * images).
 *
 * @module
 */
import { randomBytes } from "node:crypto";
import process from "node:process";
import { join, resolve } from "node:path";
import { setOwn } from "../config/merge.ts";
import { fieldInfo } from "../config/schema_walk.ts";
import { InputError } from "../../kit/errors.ts";
import type { RuntimePlugin } from "../../kit/contract.ts";
import { loadPlugin } from "../plugins/load.ts";
import {
  ledgerDir,
  type LedgerEntry,
  listSandboxes,
  pendingOwnerAlive,
  removePending,
  removeSandbox,
  useLedgerDir,
} from "../../kit/runtime/ledger.ts";
import { removeOrphanWorkdirs } from "../../kit/runtime/workdirs.ts";
import type { Runtime } from "../../kit/runtime/runtime.ts";
import { writeStderr, writeStdout } from "../../kit/_runtime/tty.ts";
import { err, out, paint } from "./output.ts";
import { quote } from "../../kit/util/quote.ts";

const SANDBOXES_USAGE = "vf sandboxes list [--json] [--run <dir>] | vf sandboxes gc [--run <dir>]";
const EXEC_USAGE =
  "vf sandbox exec [-i] --runtime <type> [--runtime.<key> <value> ...] -- <command...>";

/** Runs `vf sandboxes ...`; returns the exit code. */
export async function sandboxesCommand(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  // `--run <shard dir>`: the ledger a sharded run keeps beside its results
  const at = rest.indexOf("--run");
  if (at !== -1) {
    const dir = rest[at + 1];
    if (dir === undefined || dir.startsWith("-")) {
      throw new InputError("usage", "Cannot run `vf sandboxes`: --run needs a run directory", {
        hint: SANDBOXES_USAGE,
      });
    }
    useLedgerDir(join(resolve(dir), "sandboxes"));
    rest.splice(at, 2);
  }
  if (sub === "list" && (rest.length === 0 || (rest.length === 1 && rest[0] === "--json"))) {
    return await listCommand(rest[0] === "--json");
  }
  if (sub === "gc" && rest.length === 0) return await gcCommand();
  throw new InputError(
    "usage",
    `Cannot run \`vf sandboxes ${quote(String(sub), { bare: true })}\`: unexpected argument ${
      quote(String(rest.find((a) => a !== "--json" || sub !== "list")))
    }`,
    { hint: SANDBOXES_USAGE },
  );
}

function age(createdAt: string): string {
  const t = Date.parse(createdAt);
  if (!Number.isFinite(t)) return "?";
  const s = Math.max(0, Math.round((Date.now() - t) / 1000));
  if (s < 120) return `${s}s`;
  if (s < 7200) return `${Math.round(s / 60)}m`;
  if (s < 172_800) return `${Math.round(s / 3600)}h`;
  return `${Math.round(s / 86_400)}d`;
}

async function listCommand(json: boolean): Promise<number> {
  const entries = listSandboxes();
  if (json) {
    await out(JSON.stringify(entries, null, 2));
    return 0;
  }
  if (entries.length === 0) {
    await err(`no sandboxes in the ledger (${ledgerDir()})`);
    return 0;
  }
  const header = ["PROVIDER", "ID", "AGE", "NAME", "RUN"];
  const rows = [header];
  for (const e of entries) {
    const id = e.state === "pending" ? "(creating)" : e.id;
    rows.push([e.provider, id, age(e.created_at), e.name ?? "-", e.run ?? "-"]);
  }
  const widths = header.map((_, i) => Math.max(...rows.map((r) => r[i]?.length ?? 0)));
  await out(
    rows.map((r) => r.map((c, i) => c.padEnd(widths[i] ?? 0)).join("  ").trimEnd()).join("\n"),
  );
  await err(`${entries.length} sandbox(es) not confirmed stopped; \`vf sandboxes gc\` stops them`);
  return 0;
}

/**
 * Confirms the stop of one ledger entry and removes it; throws when it cannot. A pending
 * entry (a create request with no id known) is reconciled with the provider's listing: every
 * live sandbox with its name is stopped, then the entry goes. Returns the ids stopped.
 */
async function gcEntry(
  entry: LedgerEntry,
  log?: (m: string) => void,
): Promise<string[]> {
  let plugin: RuntimePlugin;
  try {
    plugin = await loadPlugin("runtime", entry.provider);
  } catch (e) {
    throw new Error(`unknown runtime type "${entry.provider}": ${(e as Error).message}`);
  }
  if (!plugin.stopById) {
    throw new Error(`runtime "${entry.provider}" cannot stop a sandbox by id`);
  }
  const stopOptions = log === undefined ? {} : { log };
  if (entry.state === "pending") {
    if (!plugin.findPending) {
      throw new Error(`runtime "${entry.provider}" cannot look sandboxes up by name`);
    }
    const ids = await plugin.findPending(entry);
    for (const id of ids) {
      await plugin.stopById({ ...entry, id, state: "created" }, stopOptions);
      removeSandbox(entry.provider, id);
    }
    removePending(entry.provider, entry.key!);
    return ids;
  }
  await plugin.stopById(entry, stopOptions);
  removeSandbox(entry.provider, entry.id);
  return [entry.id];
}

async function gcCommand(): Promise<number> {
  const cleaned = removeOrphanWorkdirs();
  if (cleaned.length) await err(`removed ${cleaned.length} work dir(s) of crashed runs`);
  const all = listSandboxes();
  // a create still in flight in a live process is that process's to finish or record
  const busy = all.filter(pendingOwnerAlive);
  const entries = all.filter((e) => !pendingOwnerAlive(e));
  for (const b of busy) {
    await err(`skipped ${b.provider} sandbox "${b.name}": pid ${b.pid} is still creating it`);
  }
  if (entries.length === 0) {
    await err(`no sandboxes in the ledger (${ledgerDir()})`);
    return 0;
  }
  const failed: { entry: LedgerEntry; error: string }[] = [];
  let next = 0;
  const worker = async () => {
    for (let entry = entries[next++]; entry !== undefined; entry = entries[next++]) {
      try {
        const ids = await gcEntry(entry);
        if (entry.state === "pending") {
          await out(
            ids.length
              ? `stopped ${entry.provider} ${ids.join(" ")} (created as "${entry.name}")`
              : `no live ${entry.provider} sandbox named "${entry.name}" (creation never finished)`,
          );
        } else await out(`stopped ${entry.provider} ${entry.id}`);
      } catch (e) {
        failed.push({ entry, error: e instanceof Error ? e.message : String(e) });
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(8, entries.length) }, worker));
  for (const f of failed) {
    await err(
      `${paint("not stopped:", "red")} ${f.entry.provider} ${
        f.entry.id || `"${f.entry.name}" (pending)`
      }: ${f.error}`,
    );
  }
  await err(
    `${entries.length - failed.length} of ${entries.length} sandbox(es) confirmed stopped` +
      (failed.length ? `; ${failed.length} left in the ledger (${ledgerDir()})` : ""),
  );
  return failed.length ? 1 : 0;
}

/** The parsed arguments of `vf sandbox exec`. */
export interface SandboxExecArgs {
  runtime: string;
  /** Raw `--runtime.<key>` values, keys in snake case. */
  settings: Record<string, string | true>;
  command: string[];
  /** `-i`/`--interactive`: standard input is streamed to the command. */
  interactive: boolean;
}

/** Parses `vf sandbox exec` arguments (after `exec`). */
export function parseSandboxExecArgs(argv: string[]): SandboxExecArgs {
  const dash = argv.indexOf("--");
  const flags = dash < 0 ? argv : argv.slice(0, dash);
  const command = dash < 0 ? [] : argv.slice(dash + 1);
  let runtime: string | null = null;
  let interactive = false;
  const settings: Record<string, string | true> = {};
  for (let i = 0; i < flags.length; i++) {
    const tok = flags[i]!;
    const eq = tok.indexOf("=");
    const name = eq >= 0 ? tok.slice(0, eq) : tok;
    const inline = eq >= 0 ? tok.slice(eq + 1) : undefined;
    const take = (): string | true => {
      if (inline !== undefined) return inline;
      const v = flags[i + 1];
      if (v === undefined || v.startsWith("--")) return true;
      i++;
      return v;
    };
    if (tok === "-i" || tok === "--interactive") {
      interactive = true;
    } else if (name === "--runtime") {
      const v = take();
      if (v === true) throw usage("--runtime needs a runtime type");
      runtime = v;
    } else if (name.startsWith("--runtime.") && name.length > "--runtime.".length) {
      setOwn(settings, name.slice("--runtime.".length).replaceAll("-", "_"), take());
    } else {
      throw usage(`unexpected argument ${quote(tok)}`);
    }
  }
  if (!runtime) throw usage("--runtime is required");
  if (command.length === 0) throw usage("no command after `--`");
  return { runtime, settings, command, interactive };
}

function usage(problem: string): InputError {
  return new InputError("usage", `Cannot run \`vf sandbox exec\`: ${problem}`, {
    hint: EXEC_USAGE,
  });
}

/** Types `--runtime.<key>` strings against the runtime's config schema. */
function typeSettings(
  plugin: RuntimePlugin,
  raw: Record<string, string | true>,
): Record<string, unknown> {
  const shape: Record<string, Parameters<typeof fieldInfo>[0]> = plugin.config.shape;
  const out: Record<string, unknown> = {};
  const problems: string[] = [];
  for (const [key, value] of Object.entries(raw)) {
    const field = Object.hasOwn(shape, key) ? shape[key] : undefined;
    if (!field) {
      problems.push(
        `unknown key --runtime.${quote(key, { bare: true })}; runtime "${plugin.id}" has: ${
          Object.keys(shape).join(", ") || "no keys"
        }`,
      );
      continue;
    }
    const info = fieldInfo(field);
    if (value === true) {
      if (info.kind === "boolean") out[key] = true;
      else problems.push(`--runtime.${key} needs a value`);
      continue;
    }
    if (value === "None" || (value === "null" && info.kind !== "string")) out[key] = null;
    else if (info.kind === "string" || info.kind === "enum") out[key] = value;
    else if (info.kind === "boolean") out[key] = ["true", "1", "yes"].includes(value.toLowerCase());
    else if (info.kind === "number" || info.kind === "int") {
      const n = Number(value);
      if (value.trim() === "" || Number.isNaN(n)) {
        problems.push(`--runtime.${key}: expected a number`);
      } else out[key] = n;
    } else {
      try {
        out[key] = JSON.parse(value);
      } catch {
        out[key] = value;
      }
    }
  }
  if (problems.length) {
    throw new InputError("usage", problems.join("\n"), { hint: EXEC_USAGE });
  }
  return out;
}

/** This process's standard input as it arrives (`-i`), for the command's stdin. */
async function* ownStdin(): AsyncGenerator<Uint8Array> {
  for await (const chunk of process.stdin) {
    yield typeof chunk === "string" ? new TextEncoder().encode(chunk) : chunk;
  }
}

/** Runs `vf sandbox ...`; returns the exit code (the command's own exit code on success). */
export async function sandboxCommand(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub !== "exec") {
    throw new InputError("usage", "Cannot run `vf sandbox`: expected `exec`", {
      hint: EXEC_USAGE,
    });
  }
  const args = parseSandboxExecArgs(rest);
  const plugin = await loadPlugin("runtime", args.runtime);
  const config = { type: args.runtime, ...typeSettings(plugin, args.settings) };
  const log = (m: string) => void err(`${paint("warning:", "yellow")} ${m}`);
  const name = `vf-exec-${randomBytes(4).toString("hex")}`;
  const runtime: Runtime = plugin.create(config, { name, log });

  const ctrl = new AbortController();
  let signalled: NodeJS.Signals | null = null;
  const onSignal = (sig: NodeJS.Signals) => {
    if (signalled !== null) return;
    signalled = sig;
    void err("stopping: killing the command, then stopping the sandbox");
    ctrl.abort(new Error("interrupted"));
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  let code = 1;
  let failure: unknown = null;
  try {
    await err(`starting a ${plugin.id} sandbox...`);
    await runtime.start({ signal: ctrl.signal });
    if (runtime.info.id) await err(`sandbox ${runtime.info.id} is ready`);
    const r = await runtime.run(args.command, {
      signal: ctrl.signal,
      ...(args.interactive ? { stdin: ownStdin() } : {}),
    });
    // a read of our stdin still waiting must not keep this process alive
    if (args.interactive) process.stdin.destroy();
    writeStdout(r.stdout);
    writeStderr(r.stderr);
    code = signalled === null ? r.exitCode : signalled === "SIGTERM" ? 143 : 130;
  } catch (e) {
    failure = e;
  } finally {
    try {
      await runtime.stopConfirmed();
      if (runtime.info.id) await err(`sandbox ${runtime.info.id} stopped (confirmed)`);
    } catch (e) {
      await err(
        `${paint("error:", "red")} sandbox ${runtime.info.id ?? "(no id)"} not confirmed stopped: ${
          e instanceof Error ? e.message : String(e)
        }\nhint: it stays in the ledger; run \`vf sandboxes gc\``,
      );
      if (failure === null) code = 1;
    }
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
  }
  if (failure !== null) throw failure;
  return code;
}
