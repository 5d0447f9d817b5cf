/**
 * The `local` runtime: commands run as subprocesses on this machine, each rollout in a
 * fresh temporary working directory. The directory is named at start and made on first
 * use (a command, a write, or a read of `workdir`): a rollout whose harness runs no
 * command costs no directory at all. Not a sandbox — use it for trusted tasks and for
 * debugging. Commands get only the allowlisted host variables (PATH, HOME, LANG, LC_*,
 * TZ, TERM, TMPDIR, USER, SHELL, ...: kit/runtime/agent_env.ts), then `env`, then the
 * call's own; a credential reaches a command only when the config names it.
 *
 * Over 400 lines: one runtime class with the work-directory helpers only it uses.
 *
 * @module
 */
import { mkdirSync } from "node:fs";
import { mkdir, open, realpath, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, resolve, sep } from "node:path";
import { z } from "zod";
import {
  allowedHostEnv,
  defineRuntime,
  errorMessage,
  isAllowedHostVariable,
  ownedWorkdirPrefix,
  type ProgramResult,
  randomChars,
  type ReadOptions,
  type RunOptions,
  type Runtime,
  type RuntimeCreateOptions,
  type RuntimeInfo,
  type RuntimeProcess,
  SandboxError,
  spawnLive,
  type SpawnOptions,
  spawnProgram,
} from "../../../kit/mod.ts";

/** Config keys of the `local` runtime. */
const LocalRuntimeConfig = z.object({
  workdir_root: z.string().nullable().default(null).describe(
    "Directory in which each rollout's working directory is created; null = the OS temp directory",
  ),
  keep_workdir: z.boolean().default(false).describe(
    "Keep the working directory after the runtime stops (for debugging)",
  ),
  env: z.record(z.string(), z.string()).default({}).describe(
    "Extra environment variables for every command (on top of the allowlisted host variables)",
  ),
});

/** The resolved config of the `local` runtime. */
export type LocalRuntimeConfig = z.infer<typeof LocalRuntimeConfig>;

/** True for host variables never passed to commands: every one off the allowlist. */
export function isHiddenHostVariable(name: string): boolean {
  return !isAllowedHostVariable(name);
}

const RESTART_HINT = "Call start() first, or make a new runtime";

/** Letters of a work directory's random suffix (as `mkdtemp` uses). */
const SUFFIX_LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

/** Six random letters and digits, the suffix `mkdtemp` would add. */
function randomSuffix(): string {
  return randomChars(6, SUFFIX_LETTERS);
}

/**
 * Roots made and resolved in this process, by the path as configured: a root is created
 * and resolved once, not once per rollout. A failure is not kept, so it is retried.
 */
const readyRoots = new Map<string, Promise<string>>();

/** The real paths of the roots made so far, by the path as configured. */
const resolvedRoots = new Map<string, string>();

/** The OS temp folder as an absolute path, read once per process (not once per rollout). */
let defaultRoot: string | undefined;

/** The absolute folder the config puts work directories in. */
function rootOf(config: LocalRuntimeConfig): string {
  if (config.workdir_root !== null) return resolve(config.workdir_root);
  return defaultRoot ??= resolve(tmpdir());
}

/** `root` created when missing, as a real path (once per process). */
function readyRoot(root: string): Promise<string> {
  let ready = readyRoots.get(root);
  if (ready === undefined) {
    ready = mkdir(root, { recursive: true }).then(() => realpath(root));
    readyRoots.set(root, ready);
    ready.then((real) => resolvedRoots.set(root, real), () => readyRoots.delete(root));
  }
  return ready;
}

/** A {@link Runtime} whose commands are subprocesses of this process. */
class LocalRuntime implements Runtime {
  readonly isLocal = true;
  readonly timeoutS = null;
  readonly #config: LocalRuntimeConfig;
  readonly #name: string;
  #workdir: string | null = null;
  /** True once the current workdir exists on disk (it is made on first use). */
  #created = false;
  /** The creation of the current workdir, while in flight or done. */
  #creating: Promise<void> | null = null;
  /** A workdir whose removal is still owed (set once made, cleared once removed or kept). */
  #pendingRemoval: string | null = null;
  #started = false;
  #stopped = false;
  /** Writes in flight: stopping waits for them before removing what they made. */
  readonly #writes = new Set<Promise<void>>();
  /** Files and folders write() created outside the workdir, removed at stop unless kept. */
  readonly #createdOutside = new Set<string>();
  /** Abort controllers of the commands in flight; stopping aborts them. */
  readonly #inflight = new Map<AbortController, Promise<unknown>>();

  readonly #log: (message: string) => void;
  /** The kept workdir last named in the log. */
  #keptSaid: string | null = null;

  constructor(config: LocalRuntimeConfig, name: string, log: (message: string) => void = () => {}) {
    this.#config = config;
    this.#name = name;
    this.#log = log;
  }

  /** `{type: "subprocess", id: <workdir path>}`; id is null before the first start. */
  get info(): RuntimeInfo {
    return { type: "subprocess", id: this.#workdir };
  }

  /** True once stopped (reset by a later `start()`). */
  get stopped(): boolean {
    return this.#stopped;
  }

  /**
   * Absolute path of the current (or last) working directory; while the runtime is
   * started, the directory exists once this was read (it is made here if no command or
   * write made it first).
   */
  get workdir(): string {
    if (this.#workdir === null) {
      throw new SandboxError("Cannot get the workdir: runtime is not started", {
        hint: RESTART_HINT,
      });
    }
    if (this.#started && !this.#stopped && !this.#created) {
      try {
        mkdirSync(this.#workdir, { mode: 0o700 });
      } catch (e) {
        // a creation already under way (async) made it: that one completes the bookkeeping
        if ((e as { code?: string }).code !== "EEXIST" || this.#creating === null) {
          throw provisioningFailed(dirname(this.#workdir), e);
        }
      }
      this.#madeWorkdir(this.#workdir);
    }
    return this.#workdir;
  }

  /**
   * Names a fresh working directory `vf-<name>-p<pid>-XXXXXX` (`vf-<name>-XXXXXX` with
   * `keep_workdir`) under the root, which is created when missing (once per process); the
   * directory itself is made on first use.
   */
  async start(options: { signal?: AbortSignal } = {}): Promise<void> {
    if (this.#started && !this.#stopped) {
      throw new SandboxError("Cannot start the local runtime: it is already started", {
        hint: "Stop it before starting it again",
      });
    }
    if (options.signal?.aborted) {
      throw new SandboxError("Cannot start the local runtime: the start was cancelled", {
        cause: options.signal.reason,
      });
    }
    if (this.#creating !== null) await this.#creating.catch(() => {});
    if (this.#pendingRemoval !== null) await this.#removeWorkdir().catch(() => {});
    const root = rootOf(this.#config);
    let realRoot = resolvedRoots.get(root);
    if (realRoot === undefined) {
      try {
        realRoot = await readyRoot(root);
      } catch (e) {
        throw provisioningFailed(root, e);
      }
    }
    // a directory removed at stop names its process, so a crashed run's can be found
    const prefix = this.#config.keep_workdir
      ? `vf-${safeName(this.#name)}-`
      : ownedWorkdirPrefix(safeName(this.#name));
    // realRoot is absolute and resolved (readyRoot): nothing for a join to normalize
    this.#workdir = realRoot + (realRoot.endsWith(sep) ? "" : sep) + prefix + randomSuffix();
    this.#created = false;
    this.#creating = null;
    this.#started = true;
    this.#stopped = false;
  }

  /** Records that `dir` exists: it is owed a removal at stop unless kept. */
  #madeWorkdir(dir: string): void {
    this.#created = true;
    this.#pendingRemoval = this.#config.keep_workdir ? null : dir;
  }

  /** The workdir, made first if this is its first use; a SandboxError naming `action` else. */
  async #usableWorkdir(action: string): Promise<string> {
    const dir = this.#live(action);
    if (this.#created) return dir;
    this.#creating ??= makeDir(dir).then(
      () => this.#madeWorkdir(dir),
      (e) => {
        if (this.#created) return; // the workdir getter made it meanwhile
        this.#creating = null; // a later use tries again
        throw provisioningFailed(dirname(dir), e);
      },
    );
    await this.#creating;
    return this.#live(action);
  }

  /** Runs `argv` in the workdir (or `cwd`); never throws for a failing command. */
  async run(argv: string[], options: RunOptions = {}): Promise<ProgramResult> {
    this.#live(`run "${argv[0] ?? ""}"`);
    if (argv.length === 0 || argv[0] === "") {
      throw new SandboxError("Cannot run a command: argv is empty", {
        hint: 'Pass the program and its arguments, e.g. ["bash", "-lc", "ls"]',
      });
    }
    const workdir = await this.#usableWorkdir(`run "${argv[0]}"`);
    const env: Record<string, string> = {
      ...allowedHostEnv(),
      ...this.#config.env,
      ...options.env,
    };

    const controller = new AbortController();
    const forward = () => controller.abort(options.signal?.reason);
    if (options.signal?.aborted) controller.abort(options.signal.reason);
    else options.signal?.addEventListener("abort", forward, { once: true });
    const running = spawnProgram(argv, {
      cwd: options.cwd === undefined ? workdir : resolve(workdir, options.cwd),
      env,
      timeoutMs: options.timeoutMs,
      signal: controller.signal,
      stdin: options.stdin,
    });
    this.#inflight.set(controller, running);
    try {
      const { exitCode, stdout, stderr } = await running;
      return { exitCode, stdout, stderr };
    } finally {
      this.#inflight.delete(controller);
      options.signal?.removeEventListener("abort", forward);
    }
  }

  /**
   * Starts `argv` in the workdir (or `cwd`) with its stdin and stdout open, in its own
   * process group; stopping the runtime kills the group.
   */
  async spawn(argv: string[], options: SpawnOptions = {}): Promise<RuntimeProcess> {
    const workdir = await this.#usableWorkdir(`spawn "${argv[0] ?? ""}"`);
    const program = spawnLive(argv, {
      cwd: options.cwd === undefined ? workdir : resolve(workdir, options.cwd),
      env: { ...allowedHostEnv(), ...this.#config.env, ...options.env },
    });
    const controller = new AbortController();
    controller.signal.addEventListener("abort", () => void program.kill(), { once: true });
    this.#inflight.set(controller, program.exited);
    void program.exited.then(() => this.#inflight.delete(controller));
    return program;
  }

  /**
   * Writes a file (parents created); relative paths are under the workdir. What it creates
   * outside the workdir (a file not there before, or the topmost folder it had to make) is
   * removed at stop with the workdir, so a host runtime leaves nothing behind even when the
   * harness that wrote it could not clean up (a rollout past its deadline is torn down
   * before the harness's own cleanup runs). A file that was there before is never removed.
   */
  async write(path: string, data: string | Uint8Array): Promise<void> {
    await this.#usableWorkdir(`write "${path}"`);
    const workdir = this.#live(`write "${path}"`); // not stopped while the workdir was made
    const target = resolve(workdir, path);
    const outside = !target.startsWith(workdir + "/");
    const writing = this.#writeFile(target, data, outside);
    this.#writes.add(writing);
    try {
      await writing;
    } catch (e) {
      throw new SandboxError(`Cannot write "${path}": ${errorMessage(e)}`, {
        hint: "Check that the path is a file path the runtime's user may write",
        cause: e,
      });
    } finally {
      this.#writes.delete(writing);
    }
  }

  /** Writes `target`, noting what it created when `outside` the workdir. */
  async #writeFile(target: string, data: string | Uint8Array, outside: boolean): Promise<void> {
    const madeDir = await mkdir(dirname(target), { recursive: true });
    if (outside && madeDir !== undefined) this.#createdOutside.add(madeDir);
    if (!outside || madeDir !== undefined) return await writeFile(target, data);
    try {
      await writeFile(target, data, { flag: "wx" }); // created here: removed at stop
      this.#createdOutside.add(target);
    } catch (e) {
      if ((e as { code?: string }).code !== "EEXIST") throw e;
      await writeFile(target, data); // there before: overwritten, and kept
    }
  }

  /** Reads a file; relative paths are under the workdir. Refuses files over `maxBytes`. */
  async read(path: string, options: ReadOptions = {}): Promise<Uint8Array> {
    const target = resolve(this.#live(`read "${path}"`), path);
    const max = options.maxBytes;
    let handle;
    try {
      handle = await open(target, "r");
    } catch (e) {
      const missing = (e as { code?: string }).code === "ENOENT";
      throw new SandboxError(
        missing
          ? `Cannot read "${path}": no such file`
          : `Cannot read "${path}": ${errorMessage(e)}`,
        { hint: missing ? `Looked for "${target}"` : undefined, cause: e },
      );
    }
    try {
      const info = await handle.stat();
      if (!info.isFile()) {
        throw new SandboxError(`Cannot read "${path}": not a regular file`, {
          hint: `"${target}" is a directory or a special file`,
        });
      }
      if (max !== undefined && info.size > max) throw tooLarge(path, info.size, max);
      const bytes = await handle.readFile();
      if (max !== undefined && bytes.byteLength > max) throw tooLarge(path, bytes.byteLength, max);
      return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    } catch (e) {
      if (e instanceof SandboxError) throw e;
      throw new SandboxError(`Cannot read "${path}": ${errorMessage(e)}`, { cause: e });
    } finally {
      await handle.close().catch(() => {});
    }
  }

  /** True while started and not stopped, unless the workdir was made and is gone. */
  async alive(): Promise<boolean> {
    if (!this.#started || this.#stopped || this.#workdir === null) return false;
    if (!this.#created) return true;
    try {
      return (await stat(this.#workdir)).isDirectory();
    } catch {
      return false;
    }
  }

  /** Kills commands in flight and removes the workdir; best effort, never throws. */
  async stop(): Promise<void> {
    try {
      await this.#teardown();
    } catch {
      // best effort: stopConfirmed() reports what stop() swallows
    }
  }

  /** Like {@link stop}, but throws a SandboxError when the workdir cannot be removed. */
  async stopConfirmed(): Promise<void> {
    await this.#teardown();
  }

  async #teardown(): Promise<void> {
    this.#stopped = true;
    if (this.#inflight.size > 0) {
      const running = [...this.#inflight.entries()];
      for (const [controller] of running) controller.abort();
      await Promise.allSettled(running.map(([, p]) => p));
    }
    if (this.#writes.size > 0) await Promise.allSettled([...this.#writes]);
    if (this.#creating !== null) await this.#creating.catch(() => {});
    let outsideFailure: unknown = null;
    await this.#removeCreatedOutside().catch((e) => (outsideFailure = e));
    if (this.#pendingRemoval !== null) await this.#removeWorkdir();
    else if (
      this.#config.keep_workdir && this.#created && this.#workdir !== null &&
      this.#keptSaid !== this.#workdir
    ) {
      this.#keptSaid = this.#workdir; // said once per directory, however often it is stopped
      this.#log(`kept work directory (keep_workdir): ${this.#workdir}`);
    }
    if (outsideFailure !== null) throw outsideFailure;
  }

  /** Removes what write() created outside the workdir (kept with `keep_workdir`). */
  async #removeCreatedOutside(): Promise<void> {
    if (this.#createdOutside.size === 0 || this.#config.keep_workdir) return;
    const failed: string[] = [];
    for (const path of this.#createdOutside) {
      try {
        await rm(path, { recursive: true, force: true, maxRetries: 2 });
        this.#createdOutside.delete(path);
      } catch {
        failed.push(path);
      }
    }
    if (failed.length > 0) {
      throw new SandboxError(`Cannot remove what the runtime wrote: ${failed.join(", ")}`, {
        hint: "Remove them by hand; check their permissions",
      });
    }
  }

  async #removeWorkdir(): Promise<void> {
    const dir = this.#pendingRemoval;
    if (dir === null) return;
    try {
      await rm(dir, { recursive: true, force: true, maxRetries: 2 });
    } catch (e) {
      throw new SandboxError(`Cannot remove the local workdir "${dir}": ${errorMessage(e)}`, {
        hint: "Remove it by hand; check its permissions",
        cause: e,
      });
    }
    this.#pendingRemoval = null;
  }

  /** The workdir when the runtime can be used, else a SandboxError naming `action`. */
  #live(action: string): string {
    if (this.#stopped) {
      throw new SandboxError(`Cannot ${action}: runtime is stopped`, { hint: RESTART_HINT });
    }
    if (!this.#started || this.#workdir === null) {
      throw new SandboxError(`Cannot ${action}: runtime is not started`, { hint: RESTART_HINT });
    }
    return this.#workdir;
  }
}

/** Makes `dir` (mode 0700, not there before); its parent again if it went missing. */
async function makeDir(dir: string): Promise<void> {
  try {
    await mkdir(dir, { mode: 0o700 });
  } catch (e) {
    if ((e as { code?: string }).code !== "ENOENT") throw e;
    await mkdir(dirname(dir), { recursive: true });
    await mkdir(dir, { mode: 0o700 });
  }
}

function provisioningFailed(root: string, cause: unknown): SandboxError {
  return new SandboxError(`local sandbox provisioning failed: ${errorMessage(cause)}`, {
    hint: `Check that "${root}" is a writable directory (runtime key workdir_root)`,
    cause,
  });
}

function tooLarge(path: string, size: number, max: number): SandboxError {
  return new SandboxError(
    `Cannot read "${path}": the file has ${size} bytes, more than the limit of ${max} bytes`,
    { hint: "Raise maxBytes or read a smaller file" },
  );
}

/** A name {@link safeName} keeps as it is. */
const SAFE_NAME = /^[A-Za-z0-9._-]{1,64}$/;

/** A runtime name made safe for a directory name. */
function safeName(name: string): string {
  if (SAFE_NAME.test(name)) return name; // a trace id always is
  const cleaned = name.replace(/[^A-Za-z0-9._-]+/g, "_").slice(0, 64);
  return cleaned === "" ? "runtime" : cleaned;
}

/** The `local` runtime plugin. */
export default defineRuntime({
  id: "subprocess",
  description: "Runs commands as subprocesses on this machine, in a fresh temporary directory",
  isLocal: true,
  config: LocalRuntimeConfig,
  configHint: "Keys: workdir_root (path or null), keep_workdir (bool), env (table of strings)",
  create(config, options: RuntimeCreateOptions): Runtime {
    return new LocalRuntime(config, options.name, options.log);
  },
});
