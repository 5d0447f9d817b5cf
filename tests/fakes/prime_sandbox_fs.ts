/**
 * Where the Prime fake's sandboxes really run: each sandbox gets a root directory on the
 * host, and every command runs chrooted into it inside a fresh user + mount namespace
 * (`unshare -Urm`) with the host's `/usr`, `/etc`, `/opt` bind-mounted read-only and
 * `/dev`, `/proc` bind-mounted. So `/app`, `/tmp` and every other path a command writes
 * belong to that sandbox alone (and its network, when the fake gives it one: sandbox_netns.ts),
 * while pids are shared with the host (the fake can kill a
 * sandbox's processes, found by a marker variable in their environment).
 *
 * Linux only; needs `unshare` and unprivileged user namespaces (or root).
 *
 * @module
 */
import { spawn, spawnSync } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import {
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  symlinkSync,
} from "node:fs";
import { join, posix } from "node:path";
import process from "node:process";
import type { SandboxNetwork } from "./sandbox_netns.ts";

/** The environment variable that marks every process of a sandbox. */
export const SANDBOX_MARKER = "VF_FAKE_PRIME_SANDBOX";

const BIND_RO = ["usr", "etc", "opt"];
const BIND_RW = ["dev", "proc"];
const LINKS = ["bin", "sbin", "lib", "lib32", "lib64", "libx32"];

const SETUP = [
  "r=$1; w=$2; shift 2",
  `for d in ${
    BIND_RO.join(" ")
  }; do if [ -d "/$d" ] && [ ! -L "/$d" ]; then mount --rbind "/$d" "$r/$d" && mount -o remount,bind,ro "$r/$d"; fi; done`,
  `for d in ${BIND_RW.join(" ")}; do mount --rbind "/$d" "$r/$d"; done`,
  `exec chroot "$r" /bin/sh -c 'cd "$0" || exit 1; exec "$@"' "$w" "$@"`,
].join("\n");

let supported: boolean | null = null;

/** True when commands can be isolated here (checked once). */
export function isolationSupported(): boolean {
  if (supported === null) {
    const r = spawnSync("unshare", ["--user", "--map-root-user", "--mount", "true"], {
      stdio: "ignore",
    });
    supported = r.status === 0;
  }
  return supported;
}

/** Makes a sandbox root: system directories as mount points, links as on the host. */
export function makeSandboxRoot(root: string): void {
  mkdirSync(root, { recursive: true });
  for (const d of [...BIND_RO, ...BIND_RW]) mkdirSync(join(root, d), { recursive: true });
  for (const d of ["tmp", "root", "home", "var/tmp", "run"]) {
    mkdirSync(join(root, d), { recursive: true, mode: 0o1777 });
  }
  for (const l of LINKS) {
    const host = `/${l}`;
    if (!existsSync(host)) continue;
    if (lstatSync(host).isSymbolicLink()) symlinkSync(readlinkSync(host), join(root, l));
  }
}

/** Maps an absolute sandbox path to the host path under `root`; null when it escapes. */
export function hostPath(root: string, sandboxPath: string): string | null {
  if (!sandboxPath.startsWith("/")) return null;
  const norm = posix.normalize(sandboxPath);
  if (norm.split("/").includes("..")) return null;
  return join(root, norm);
}

/** A command started in a sandbox. */
export interface SandboxProcess {
  child: ChildProcess;
  /** Resolves when the process exited and its output pipes closed. */
  done: Promise<{ code: number | null; signal: string | null }>;
  /** SIGKILLs the whole process group. */
  kill(): void;
}

/** Options of {@link spawnInSandbox}. */
export interface SpawnInSandboxOptions {
  sandboxId: string;
  root: string;
  /** The sandbox's network (sandbox_netns.ts). @default this host's */
  network?: SandboxNetwork;
  /** Working directory inside the sandbox. @default "/" */
  cwd?: string | null;
  env?: Record<string, string>;
  /** Keep stdin open as a pipe (Connect sessions with stdin). */
  stdin?: boolean;
  onStdout?(chunk: Uint8Array): void;
  onStderr?(chunk: Uint8Array): void;
}

/** Starts `argv` inside the sandbox (its own process group on the host). */
export function spawnInSandbox(argv: string[], o: SpawnInSandboxOptions): SandboxProcess {
  const env: Record<string, string> = {
    PATH: "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
    HOME: "/root",
    LANG: "C.UTF-8",
    ...o.env,
    [SANDBOX_MARKER]: o.sandboxId,
  };
  const unshared = [
    "unshare",
    "--user",
    "--map-root-user",
    "--mount",
    "--",
    "/bin/sh",
    "-c",
    SETUP,
    "vf-fake-sandbox",
    o.root,
    o.cwd || "/",
    ...argv,
  ];
  const [program, ...args] = o.network?.wrap(unshared) ?? unshared;
  const child = spawn(
    program!,
    args,
    {
      env,
      cwd: o.root,
      detached: true,
      stdio: [o.stdin ? "pipe" : "ignore", "pipe", "pipe"],
    },
  );
  child.stdout?.on("data", (c: Uint8Array) => o.onStdout?.(new Uint8Array(c)));
  child.stderr?.on("data", (c: Uint8Array) => o.onStderr?.(new Uint8Array(c)));
  child.stdin?.on("error", () => {});
  const done = new Promise<{ code: number | null; signal: string | null }>((resolve) => {
    let exit: { code: number | null; signal: string | null } | null = null;
    child.on("exit", (code, signal) => {
      exit = { code, signal };
    });
    child.on("close", (code, signal) => resolve(exit ?? { code, signal }));
    child.on("error", () => resolve({ code: 127, signal: null }));
  });
  return {
    child,
    done,
    kill() {
      if (child.pid === undefined) return;
      try {
        process.kill(-child.pid, "SIGKILL");
      } catch {
        // gone
      }
    },
  };
}

/** Kills every host process whose environment carries the sandbox's marker. */
export function killSandboxProcesses(sandboxId: string): number {
  const needle = `${SANDBOX_MARKER}=${sandboxId}`;
  let killed = 0;
  for (let round = 0; round < 3; round++) {
    let found = 0;
    let entries: string[] = [];
    try {
      entries = readdirSync("/proc");
    } catch {
      return killed;
    }
    for (const name of entries) {
      if (!/^\d+$/.test(name)) continue;
      const pid = Number(name);
      if (pid === process.pid) continue;
      let environ: string;
      try {
        environ = readFileSync(`/proc/${name}/environ`, "latin1");
      } catch {
        continue;
      }
      if (!environ.split("\0").includes(needle)) continue;
      try {
        process.kill(pid, "SIGKILL");
        found++;
      } catch {
        // already gone
      }
    }
    killed += found;
    if (found === 0) break;
  }
  return killed;
}

/** Removes a sandbox root (after its processes are gone). */
export function removeSandboxRoot(root: string): void {
  try {
    rmSync(root, { recursive: true, force: true, maxRetries: 3 });
  } catch {
    // best effort: a mount point still busy is cleaned with the parent later
  }
}
