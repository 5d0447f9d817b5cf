/**
 * Agent installs shared by every rollout and run on this host: an agent's npm packages at
 * pinned versions, installed once into `<user cache>/agents/<name>@<version>-<key>/` by
 * `npm install` (scripts off), checked against the registry integrity each pin carries
 * (the `integrity` npm recorded in the install's package-lock.json must be the pinned
 * one; npm itself checks every tarball against its lock). A lock directory makes
 * concurrent rollouts and processes install once; a finished install is renamed into place
 * whole, so a reader sees a complete install or none, and a second run installs nothing.
 *
 * @module
 */
import { createHash, randomUUID } from "node:crypto";
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import process from "node:process";
import { HarnessError } from "../../errors.ts";
import { spawnProgram } from "../../_runtime/spawn.ts";
import { allowedHostEnv } from "../../runtime/agent_env.ts";
import { userCacheSubdir } from "../../runtime/cache_dir.ts";
import { sleep } from "../../util/sleep.ts";

/** One pinned npm package. */
export interface AgentPackage {
  name: string;
  /** Exact version. */
  version: string;
  /** The registry's `dist.integrity` of that version (`sha512-...`). */
  integrity: string;
}

/** An agent's packages, installed together. */
export interface AgentBundle {
  /** Folder name prefix, e.g. `pi`. */
  name: string;
  /** The agent's version, shown in the folder name. */
  version: string;
  packages: readonly AgentPackage[];
  /** npm `overrides` for the install (e.g. one copy of a package two pins depend on). */
  overrides?: Record<string, unknown>;
}

/** Options of {@link ensureAgentInstall}. */
export interface InstallOptions {
  /** Cancels waiting and installing. */
  signal?: AbortSignal;
  /** Logs a line (e.g. "installing pi@0.84.1"). */
  log?: (message: string) => void;
  /** The folder that holds installs. @default `<user cache>/agents` */
  root?: string;
  /** Longest the install may take, in ms. @default 600000 */
  timeoutMs?: number;
  /** Extra environment for npm (e.g. `npm_config_registry`). @default none */
  npmEnv?: Record<string, string>;
}

/** The marker a complete install holds. */
const MARKER = ".vf-install.json";
/** How often a waiting installer looks at the lock, in ms. */
const POLL_MS = 200;
/** A lock directory without an owner file after this long was left by a crash, in ms. */
const OWNERLESS_MS = 10_000;

/** Installs in flight in this process, by folder. */
const inflight = new Map<string, Promise<string>>();

/** The folder where installs live: `<user cache>/agents`. */
export function agentsCacheDir(): string {
  return userCacheSubdir("agents");
}

/** The folder name of a bundle: `<name>@<version>-<hash of the pins and platform>`. */
export function installName(bundle: AgentBundle): string {
  const pins = bundle.packages.map((p) => `${p.name}@${p.version}#${p.integrity}`).join("\n") +
    (bundle.overrides ? `\n${JSON.stringify(bundle.overrides)}` : "");
  const key = createHash("sha256").update(`${process.platform}-${process.arch}\n${pins}`)
    .digest("hex").slice(0, 10);
  return `${bundle.name}@${bundle.version}-${key}`;
}

/** True when the bundle is installed (nothing would be installed). */
export function isInstalled(bundle: AgentBundle, root: string = agentsCacheDir()): boolean {
  return existsSync(join(root, installName(bundle), MARKER));
}

/**
 * The folder holding the bundle's `node_modules`, installing it first when it is not there.
 * Throws a HarnessError when npm fails or an installed package's integrity is not the pin.
 */
export function ensureAgentInstall(
  bundle: AgentBundle,
  options: InstallOptions = {},
): Promise<string> {
  const root = options.root ?? agentsCacheDir();
  const dir = join(root, installName(bundle));
  if (existsSync(join(dir, MARKER))) return Promise.resolve(dir);
  let running = inflight.get(dir);
  if (running === undefined) {
    running = installLocked(bundle, dir, options).finally(() => inflight.delete(dir));
    inflight.set(dir, running);
  }
  return running;
}

/** Takes the folder's lock (waiting for another installer), then installs unless done. */
async function installLocked(
  bundle: AgentBundle,
  dir: string,
  options: InstallOptions,
): Promise<string> {
  const lock = `${dir}.lock`;
  mkdirSync(join(dir, ".."), { recursive: true });
  let said = false;
  for (;;) {
    if (existsSync(join(dir, MARKER))) return dir;
    if (options.signal?.aborted) {
      throw new HarnessError(`Cannot install ${bundle.name}@${bundle.version}: cancelled`);
    }
    try {
      mkdirSync(lock);
      writeFileSync(join(lock, "owner"), String(process.pid));
      break;
    } catch (e) {
      if ((e as { code?: string }).code !== "EEXIST") throw installFailed(bundle, String(e));
      if (lockIsStale(lock)) {
        rmSync(lock, { recursive: true, force: true });
        continue;
      }
      if (!said) options.log?.(`waiting for another install of ${bundle.name}@${bundle.version}`);
      said = true;
      await sleep(POLL_MS);
    }
  }
  try {
    if (existsSync(join(dir, MARKER))) return dir;
    await install(bundle, dir, options);
    return dir;
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

/** True when the lock's owner process is gone (or the lock has no owner after a while). */
function lockIsStale(lock: string): boolean {
  let owner: number;
  try {
    owner = Number(readFileSync(join(lock, "owner"), "utf8"));
  } catch {
    // just made (its owner writes the file next), unless it has been ownerless for long
    try {
      return Date.now() - statSync(lock).mtimeMs > OWNERLESS_MS;
    } catch {
      return false;
    }
  }
  if (!Number.isInteger(owner) || owner <= 0) return true;
  try {
    process.kill(owner, 0);
    return false;
  } catch (e) {
    return (e as { code?: string }).code === "ESRCH";
  }
}

/** Installs into a fresh folder beside `dir`, checks the pins, then renames it into place. */
async function install(bundle: AgentBundle, dir: string, options: InstallOptions): Promise<void> {
  const tmp = `${dir}.tmp-${randomUUID().slice(0, 8)}`;
  mkdirSync(tmp, { recursive: true });
  try {
    const dependencies = Object.fromEntries(bundle.packages.map((p) => [p.name, p.version]));
    writeFileSync(
      join(tmp, "package.json"),
      JSON.stringify(
        { name: "vf-agent", private: true, dependencies, overrides: bundle.overrides ?? {} },
        null,
        2,
      ),
    );
    options.log?.(`installing ${bundle.name}@${bundle.version} into ${dir}`);
    const result = await spawnProgram(
      ["npm", "install", "--ignore-scripts", "--no-audit", "--no-fund", "--omit=dev"],
      {
        cwd: tmp,
        env: { ...allowedHostEnv(), npm_config_update_notifier: "false", ...options.npmEnv },
        timeoutMs: options.timeoutMs ?? 600_000,
        signal: options.signal,
        maxOutputBytes: 64 * 1024,
      },
    );
    if (result.exitCode !== 0) {
      const tail = (result.stderr.trim() || result.stdout.trim()).split("\n").slice(-8).join("\n");
      throw installFailed(bundle, `npm install exited ${result.exitCode}: ${tail}`);
    }
    checkPins(bundle, tmp);
    writeFileSync(
      join(tmp, MARKER),
      JSON.stringify({ bundle: bundle.name, version: bundle.version, packages: bundle.packages }),
    );
    try {
      renameSync(tmp, dir);
    } catch (e) {
      // another host process finished first (no shared lock dir across users): keep theirs
      if (!existsSync(join(dir, MARKER))) throw e;
    }
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

/** Checks that package-lock.json records each pin at its version and integrity. */
function checkPins(bundle: AgentBundle, dir: string): void {
  let lock: { packages?: Record<string, { version?: string; integrity?: string }> };
  try {
    lock = JSON.parse(readFileSync(join(dir, "package-lock.json"), "utf8"));
  } catch (e) {
    throw installFailed(bundle, `no package-lock.json after npm install (${String(e)})`);
  }
  for (const pin of bundle.packages) {
    const entry = lock.packages?.[`node_modules/${pin.name}`];
    if (entry?.version !== pin.version || entry.integrity !== pin.integrity) {
      throw installFailed(
        bundle,
        `${pin.name}@${pin.version} has integrity ${entry?.integrity ?? "none"} ` +
          `(version ${entry?.version ?? "none"}), not the pinned ${pin.integrity}`,
      );
    }
  }
}

function installFailed(bundle: AgentBundle, why: string): HarnessError {
  return new HarnessError(`Cannot install ${bundle.name}@${bundle.version}: ${why}`, {
    hint: "Check that npm can reach its registry (npm config get registry)",
  });
}

/** What {@link pruneAgentInstalls} removed. */
export interface PruneResult {
  removed: string[];
  bytes: number;
}

/**
 * Removes installs from the cache: all of them, or those not named in `keep` (folder
 * names from {@link installName}). Leftovers of interrupted installs go too; an install
 * whose lock is held by a live process is kept.
 */
export function pruneAgentInstalls(
  options: { root?: string; keep?: readonly string[] } = {},
): PruneResult {
  const root = options.root ?? agentsCacheDir();
  const keep = new Set(options.keep ?? []);
  const removed: string[] = [];
  let bytes = 0;
  let entries: string[];
  try {
    entries = readdirSync(root);
  } catch {
    return { removed, bytes };
  }
  for (const name of entries) {
    if (name.endsWith(".lock")) continue;
    const base = name.replace(/\.tmp-[0-9a-f]+$/, "");
    if (keep.has(base)) continue;
    const lock = join(root, `${base}.lock`);
    if (existsSync(lock) && !lockIsStale(lock)) continue;
    bytes += folderBytes(join(root, name));
    rmSync(join(root, name), { recursive: true, force: true });
    rmSync(lock, { recursive: true, force: true });
    removed.push(name);
  }
  return { removed, bytes };
}

/** The bytes of the files under `path` (symbolic links not followed). */
function folderBytes(path: string): number {
  let total = 0;
  const stack = [path];
  while (stack.length > 0) {
    const dir = stack.pop()!;
    let entries;
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      continue;
    }
    for (const e of entries) {
      const p = join(dir, e.name);
      if (e.isDirectory()) stack.push(p);
      else if (e.isFile()) {
        try {
          total += statSync(p).size;
        } catch {
          // vanished meanwhile
        }
      }
    }
  }
  return total;
}
