/**
 * The `local` runtime's {@link Runtime}: commands run as subprocesses of this process,
 * each runtime in a work directory named at start and made on first use (a command, a
 * write, or a read of `workdir`); stop kills the commands in flight and removes the
 * directory with what write() created outside it, unless `keep_workdir`.
 *
 * @module
 */
import { mkdirSync } from "node:fs";
import { rm, stat } from "node:fs/promises";
import { dirname, resolve } from "node:path";
import {
  allowedHostEnv,
  errorMessage,
  type ProgramResult,
  type ReadOptions,
  type RunOptions,
  type Runtime,
  type RuntimeInfo,
  type RuntimeProcess,
  SandboxError,
  spawnLive,
  type SpawnOptions,
  spawnProgram,
} from "../../../kit/mod.ts";
import type { LocalRuntimeConfig } from "./config.ts";
import { readBounded, writeNoting } from "./files.ts";
import { makeDir, nameWorkdir, provisioningFailed } from "./workdirs.ts";

const RESTART_HINT = "Call start() first, or make a new runtime";

/** A {@link Runtime} whose commands are subprocesses of this process. */
export class LocalRuntime implements Runtime {
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
    this.#workdir = await nameWorkdir(this.#config, this.#name);
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
    const writing = writeNoting(target, data, outside, this.#createdOutside);
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

  /** Reads a file; relative paths are under the workdir. Refuses files over `maxBytes`. */
  async read(path: string, options: ReadOptions = {}): Promise<Uint8Array> {
    const target = resolve(this.#live(`read "${path}"`), path);
    return await readBounded(path, target, options.maxBytes);
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
