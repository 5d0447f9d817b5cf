/**
 * The remote-sandbox base: a {@link Runtime} over any {@link SandboxProvider}, one sandbox
 * at a time, with the confirmed-teardown lifecycle of `verifiers/v1/runtimes/prime.py@a60a606`
 * and `verifiers/v1/runtimes/modal.py@a60a606`:
 * - `start()` paces creation (`kit/runtime/create_limiter.ts`), journals the create as pending
 *   before the request and the sandbox the moment its id is known (`kit/runtime/ledger.ts`),
 *   resets `stopped` and the confirmed id as soon as a new id is known, waits until the
 *   sandbox runs commands, and makes the workdir;
 * - `stop()` is best effort: `stopped` first, the handle consumed, the sandbox terminated with
 *   a failure logged; never throws;
 * - `stopConfirmed()` frees the sandbox or throws: idempotent once confirmed, "gone" counts as
 *   confirmed, a failure keeps the handle for a retry, concurrent calls share one attempt, and
 *   a creation held by a start that failed before an id existed is released before raising;
 * - the sandbox leaves the ledger only once its termination is confirmed;
 * - `timeoutS` is the sandbox lifetime a harness timeout is capped to (`capHarnessTimeout`).
 *
 * @module
 */
import { posix } from "node:path";
import { errorMessage, SandboxError } from "../errors.ts";
import { acquireCreateSlot } from "../runtime/create_limiter.ts";
import type {
  ProgramResult,
  ReadOptions,
  RunOptions,
  Runtime,
  RuntimeInfo,
  RuntimeProcess,
  SpawnOptions,
} from "../runtime/runtime.ts";
import { sleep } from "../util/sleep.ts";
import { type CommandTarget, runAttached, runDetached, spawnUntil } from "./commands.ts";
import { getFile, putFile } from "./files.ts";
import { ENV_NAME } from "./process_group.ts";
import {
  closeQuietly,
  createJournaled,
  forgetSandbox,
  journalCreated,
  makeWorkdir,
  type PendingCreate,
  provisioningFailure,
} from "./provision.ts";
import type { SandboxCreation, SandboxProvider } from "./provider.ts";
import { quote } from "../util/quote.ts";

/** Options of a {@link RemoteSandboxRuntime}. */
export interface RemoteRuntimeOptions {
  /** The sandbox name given to the provider and the ledger. */
  name: string;
  /** Absolute working directory inside the sandbox. */
  workdir: string;
  /** The hard sandbox lifetime, seconds. */
  timeoutS: number;
  /** The owning run, noted in the ledger. */
  run?: string | null;
  /** Warnings (teardown problems). */
  log?: ((message: string) => void) | undefined;
  /** What `stopConfirmed()` calls the handle it lacks after a best-effort stop. @default "handle" */
  handleName?: string;
}

const RESTART_HINT = "Call start() first, or make a new runtime";

/** A {@link Runtime} backed by one sandbox of `provider` at a time (see the module doc). */
export class RemoteSandboxRuntime<H> implements Runtime {
  readonly isLocal = false;
  /** Whether a streamed stdin reaches the command as it arrives (the provider's exec). */
  readonly streamsStdin: boolean;
  readonly #provider: SandboxProvider<H>;
  readonly #options: RemoteRuntimeOptions;
  readonly #log: (message: string) => void;
  #creation: SandboxCreation<H> | null = null;
  /** The live sandbox: its handle and id, from the create's answer to a confirmed stop. */
  #sandbox: { handle: H; id: string } | null = null;
  /** The last sandbox's id (kept after teardown, for `info`). */
  #id: string | null = null;
  #confirmedStopId: string | null = null;
  #stopped = false;
  #ready = false;
  #starting = false;
  #teardown = new AbortController();
  #stopping: Promise<void> | null = null;
  #finishedJobs: string[] = [];
  /** The pending ledger entry of a sandbox the ledger failed to record by id. */
  #unrecorded: PendingCreate | null = null;

  /** Present when the provider can stream a command's stdin (see {@link Runtime.spawn}). */
  readonly spawn?: (argv: string[], options?: SpawnOptions) => Promise<RuntimeProcess>;

  constructor(provider: SandboxProvider<H>, options: RemoteRuntimeOptions) {
    this.#provider = provider;
    this.#options = options;
    this.#log = options.log ?? (() => {});
    this.streamsStdin = provider.streamsStdin === true && provider.jobs === undefined;
    if (provider.spawn) this.spawn = (argv, o = {}) => this.#spawn(argv, o);
  }

  /** Starts a live program; a teardown (stop, deletion) kills it. */
  #spawn(argv: string[], options: SpawnOptions): Promise<RuntimeProcess> {
    const { handle } = this.live(`spawn "${argv[0] ?? ""}"`);
    const request = { argv, cwd: this.#resolve(options.cwd ?? "."), env: options.env ?? {} };
    return spawnUntil(this.#provider, handle, request, this.#teardown.signal);
  }

  /** `{type: <provider>, id}`; the id is kept after teardown. */
  get info(): RuntimeInfo {
    return { type: this.#provider.name, id: this.#id };
  }

  /** True once teardown began (`stop()`) or a stop was confirmed; reset by a new start. */
  get stopped(): boolean {
    return this.#stopped;
  }

  /** The hard sandbox lifetime, seconds. */
  get timeoutS(): number {
    return this.#options.timeoutS;
  }

  /** The working directory inside the sandbox. */
  get workdir(): string {
    return this.#options.workdir;
  }

  /** True while a handle (or a creation that got no id) is held. */
  get holdsHandle(): boolean {
    return this.#sandbox !== null || this.#creation !== null;
  }

  /** The id whose termination was confirmed last, if any. */
  get confirmedStopId(): string | null {
    return this.#confirmedStopId;
  }

  /** A SandboxError for a provider failure, with the provider's status and hint. */
  protected failure(e: unknown, what: string, hint?: string): SandboxError {
    const detail = this.#provider.describeError?.(e) ?? {};
    return new SandboxError(`${what}: ${errorMessage(e)}`, {
      statusCode: detail.statusCode ?? null,
      hint: detail.hint ?? hint,
      cause: e,
    });
  }

  /**
   * Creates the sandbox and waits until it runs commands. Any failure is a SandboxError
   * (`<provider> sandbox provisioning failed: ...`); what was made is kept so
   * `stopConfirmed()` can free it.
   */
  async start(options: { signal?: AbortSignal } = {}): Promise<void> {
    const p = this.#provider;
    if (this.#starting) {
      throw new SandboxError(`Cannot start the ${p.name} runtime: a start is already running`, {
        hint: "Wait for it to finish",
      });
    }
    if (this.#sandbox !== null) {
      throw new SandboxError(
        this.#ready && !this.#stopped
          ? `Cannot start the ${p.name} runtime: it is already started`
          : `Cannot start the ${p.name} runtime: its previous sandbox is not confirmed terminated`,
        { hint: "Call stopConfirmed() before starting it again" },
      );
    }
    const { signal } = options;
    this.#starting = true;
    this.#ready = false;
    try {
      if (signal?.aborted) throw signal.reason ?? new Error("the start was cancelled");
      this.#creation?.release?.();
      this.#creation = null;
      const creation = await p.prepare(signal);
      if (creation.release) this.#creation = creation;
      // A new sandbox is on its way: the last one's confirmed stop says nothing about it.
      this.#id = null;
      this.#confirmedStopId = null;
      await acquireCreateSlot(p.name, p.createRate, signal);
      if (signal?.aborted) throw signal.reason;
      const who = { name: this.#options.name, run: this.#options.run ?? null };
      const { made, pending } = await createJournaled(p, creation, who, signal);
      this.#sandbox = made;
      this.#creation = null;
      this.#id = made.id;
      this.#stopped = false;
      this.#confirmedStopId = null;
      this.#finishedJobs = [];
      this.#teardown = new AbortController();
      this.#unrecorded = pending;
      journalCreated(pending, made.id);
      this.#unrecorded = null;
      await p.ready?.(made.handle, made.id, signal);
      await makeWorkdir(p, made.handle, this.#options.workdir, signal);
      this.#ready = true;
    } catch (e) {
      throw provisioningFailure(p, e, signal);
    } finally {
      this.#starting = false;
    }
  }

  /** The live handle and id, else a SandboxError naming `action`. */
  protected live(action: string): { handle: H; id: string } {
    if (this.#stopped) {
      throw new SandboxError(`Cannot ${action}: runtime is stopped`, { hint: RESTART_HINT });
    }
    if (!this.#ready || this.#sandbox === null) {
      throw new SandboxError(`Cannot ${action}: runtime is not started`, { hint: RESTART_HINT });
    }
    return this.#sandbox;
  }

  #resolve(path: string): string {
    return posix.resolve(this.#options.workdir, path);
  }

  /**
   * Runs `argv` (no shell) in the workdir or `cwd`; never throws for a non-zero exit. At
   * `timeoutMs` the command's process group is killed (exit 124); on an abort, 137.
   */
  async run(argv: string[], options: RunOptions = {}): Promise<ProgramResult> {
    const { handle, id } = this.live(`run ${quote(argv[0] ?? "")}`);
    if (argv.length === 0 || argv[0] === "") {
      throw new SandboxError("Cannot run a command: argv is empty", {
        hint: 'Pass the program and its arguments, e.g. ["bash", "-lc", "ls"]',
      });
    }
    const env = options.env ?? {};
    for (const k of Object.keys(env)) {
      if (!ENV_NAME.test(k)) {
        throw new SandboxError(
          `Cannot run ${quote(argv[0] ?? "")}: invalid environment variable name ${quote(k)}`,
          {
            hint: "Names must match [A-Za-z_][A-Za-z0-9_]*",
          },
        );
      }
    }
    const p = this.#provider;
    const target: CommandTarget<H> = {
      provider: p,
      handle,
      id,
      log: this.#log,
      teardown: this.#teardown.signal,
      fail: (e, what = `${p.name} exec failed`) => this.failure(e, what),
    };
    const spec = {
      argv,
      cwd: this.#resolve(options.cwd ?? "."),
      env,
      stdin: typeof options.stdin === "string"
        ? new TextEncoder().encode(options.stdin)
        : options.stdin,
      timeoutMs: options.timeoutMs,
      signal: options.signal,
    };
    return p.jobs
      ? await runDetached(target, p.jobs, spec, this.#finishedJobs)
      : await runAttached(target, spec);
  }

  /**
   * Writes a file (parents created); relative paths are under the workdir. A transient
   * provider failure repeats the write (backoff) for up to the jobs' `recoveryMs`.
   */
  async write(path: string, data: string | Uint8Array): Promise<void> {
    const { handle } = this.live(`write ${quote(path)}`);
    const p = this.#provider;
    const target = this.#resolve(path);
    const bytes = typeof data === "string" ? new TextEncoder().encode(data) : data;
    const timing = p.jobs?.timing;
    const started = Date.now();
    let delay = timing?.outageBaseMs ?? 0;
    for (;;) {
      try {
        return await putFile(p, handle, path, target, bytes);
      } catch (e) {
        if (e instanceof SandboxError) throw e;
        if (timing && p.isTransient?.(e) && Date.now() - started < timing.recoveryMs) {
          await sleep(delay);
          delay = Math.min(delay * 2, timing.outageMaxMs);
          continue;
        }
        throw this.failure(e, `Cannot write ${quote(path)}`);
      }
    }
  }

  /** Reads a file; relative paths are under the workdir. Refuses files over `maxBytes`. */
  async read(path: string, options: ReadOptions = {}): Promise<Uint8Array> {
    const { handle } = this.live(`read ${quote(path)}`);
    try {
      return await getFile(this.#provider, handle, path, this.#resolve(path), options.maxBytes);
    } catch (e) {
      if (e instanceof SandboxError) throw e;
      throw this.failure(e, `Cannot read ${quote(path)}`);
    }
  }

  /** True while the sandbox runs commands (`true` exits 0). */
  async alive(): Promise<boolean> {
    if (this.#stopped || !this.#ready || this.#sandbox === null) return false;
    try {
      const r = await this.#provider.exec(this.#sandbox.handle, { argv: ["true"], timeoutS: 10 });
      return r.exitCode === 0;
    } catch {
      return false;
    }
  }

  /**
   * Best-effort teardown: `stopped` is set first, the handle is consumed (the idempotency
   * guard), commands in flight end, the sandbox is terminated with a failure logged, the
   * handle closed. Never throws; confirms nothing.
   */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#ready = false;
    const p = this.#provider;
    this.#creation?.release?.();
    this.#creation = null;
    const sandbox = this.#sandbox;
    this.#sandbox = null;
    if (sandbox === null) return;
    const { handle, id } = sandbox;
    this.#teardown.abort();
    try {
      if (id !== this.#confirmedStopId) {
        await p.terminate(handle, id);
        this.#forget(id);
      }
    } catch (e) {
      this.#log(`${p.name} sandbox ${id}: terminate failed: ${errorMessage(e)}`);
    } finally {
      closeQuietly(p, handle);
    }
  }

  /**
   * Frees the sandbox or throws (the provider confirmed the termination, or knows the
   * sandbox gone). Idempotent once confirmed; concurrent calls share one attempt.
   */
  stopConfirmed(): Promise<void> {
    if (this.#stopping) return this.#stopping;
    const p = this.#stopConfirmed().finally(() => {
      this.#stopping = null;
    });
    this.#stopping = p;
    return p;
  }

  async #stopConfirmed(): Promise<void> {
    const p = this.#provider;
    const id = this.#id;
    if (id !== null && id === this.#confirmedStopId) return;
    const sandbox = this.#sandbox;
    if (sandbox === null) {
      if (this.#creation !== null) {
        this.#creation.release?.();
        this.#creation = null;
        throw new SandboxError(
          `${p.name} sandbox deletion cannot be confirmed without a provider ID`,
          {
            hint:
              `The start failed before ${p.name} returned an id; nothing to delete was recorded`,
          },
        );
      }
      if (id === null) return;
      throw new SandboxError(
        `${p.name} sandbox deletion cannot be confirmed without its live ${
          this.#options.handleName ?? "handle"
        }`,
        {
          hint:
            `Sandbox ${id} stays in the ledger; run \`vf sandboxes gc\` to confirm its deletion`,
        },
      );
    }
    const { handle } = sandbox;
    this.#teardown.abort();
    try {
      const outcome = await p.terminate(handle, sandbox.id);
      if (outcome === "gone") this.#log(`${p.name} sandbox ${sandbox.id} was already gone`);
    } catch (e) {
      throw this.failure(
        e,
        `${p.name} sandbox ${sandbox.id} deletion not confirmed`,
        "Retry; the sandbox stays in the ledger until confirmed",
      );
    }
    this.#confirmedStopId = sandbox.id;
    this.#stopped = true;
    this.#ready = false;
    this.#sandbox = null;
    closeQuietly(p, handle);
    this.#forget(sandbox.id);
  }

  /** Drops a terminated sandbox from the ledger (and its pending entry, if it never got one). */
  #forget(id: string): void {
    forgetSandbox(this.#provider.name, id, this.#unrecorded);
    this.#unrecorded = null;
  }
}
