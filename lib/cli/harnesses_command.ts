/**
 * `vf harnesses list`, `vf harnesses install <id>...` and `vf harnesses prune`: the host's
 * agent installs (the npm packages of the ACP harnesses, shared by every run of the user,
 * under `<user cache>/agents`). `install` fetches ahead of a run (CI caches the folder);
 * `prune` frees the space.
 *
 * @module
 */
import { InputError } from "../../kit/errors.ts";
import type { HarnessPlugin } from "../../kit/contract.ts";
import {
  agentsCacheDir,
  ensureAgentInstall,
  installName,
  isInstalled,
  pruneAgentInstalls,
} from "../../kit/harness/acp/install.ts";
import { builtinIds } from "../plugins/builtin_catalog.ts";
import { loadPlugin } from "../plugins/load.ts";
import { err, out } from "./output.ts";

const USAGE = "vf harnesses list | vf harnesses install <id>... | vf harnesses prune [--all]";

/** Runs `vf harnesses ...`; returns the exit code. */
export async function harnessesCommand(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub === "list" && rest.length === 0) return await listCommand();
  if (sub === "install" && rest.length > 0) return await installCommand(rest);
  if (sub === "prune" && (rest.length === 0 || (rest.length === 1 && rest[0] === "--all"))) {
    return await pruneCommand(rest[0] === "--all");
  }
  throw new InputError(
    "usage",
    sub === "install"
      ? "Cannot run `vf harnesses install`: name at least one harness"
      : `Cannot run \`vf harnesses ${sub ?? ""}\`: unexpected arguments`,
    { hint: USAGE },
  );
}

/** The built-in harnesses that install agent packages. */
async function agentHarnesses(): Promise<HarnessPlugin[]> {
  const plugins = await Promise.all(builtinIds("harness").map((id) => loadPlugin("harness", id)));
  return plugins.filter((p) => p.agentBundle !== undefined);
}

async function listCommand(): Promise<number> {
  const rows = [["HARNESS", "VERSION", "INSTALLED", "FOLDER"]];
  for (const h of await agentHarnesses()) {
    const bundle = h.agentBundle!;
    rows.push([h.id, bundle.version, isInstalled(bundle) ? "yes" : "no", installName(bundle)]);
  }
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]?.length ?? 0)));
  await out(
    rows.map((r) => r.map((c, i) => c.padEnd(widths[i] ?? 0)).join("  ").trimEnd()).join("\n"),
  );
  await err(`agent installs live in ${agentsCacheDir()}`);
  return 0;
}

async function installCommand(ids: string[]): Promise<number> {
  const harnesses = await agentHarnesses();
  const chosen = ids.map((id) => {
    const found = harnesses.find((h) => h.id === id);
    if (!found) {
      throw new InputError("usage", `Cannot install harness "${id}": it installs no agent`, {
        hint: `Harnesses with agent installs: ${harnesses.map((h) => h.id).join(", ")}`,
      });
    }
    return found;
  });
  for (const h of chosen) {
    const bundle = h.agentBundle!;
    const had = isInstalled(bundle);
    const dir = await ensureAgentInstall(bundle, { log: (m) => void err(m) });
    await out(`${h.id}: ${had ? "already installed" : "installed"} in ${dir}`);
  }
  return 0;
}

async function pruneCommand(all: boolean): Promise<number> {
  const keep = all ? [] : (await agentHarnesses()).map((h) => installName(h.agentBundle!));
  const { removed, bytes } = pruneAgentInstalls({ keep });
  for (const name of removed) await out(`removed ${name}`);
  await err(
    `${removed.length} install(s) removed, ${(bytes / 1e6).toFixed(1)} MB freed` +
      (all ? "" : " (the current versions kept: --all removes them too)"),
  );
  return 0;
}
