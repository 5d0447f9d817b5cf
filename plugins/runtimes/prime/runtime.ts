/**
 * The `prime` runtime: one Prime Intellect sandbox per instance, driven by our own client.
 * Lifecycle as `verifiers/v1/runtimes/prime.py@a60a606` (the confirmed-teardown branch): a
 * new client per start; the sandbox is written to the ledger the moment its id is known;
 * `stopped` and the confirmed id are reset as soon as a new id is known; `stopConfirmed()`
 * decides as follows (idempotent once confirmed, a typed HTTP 404 on DELETE = gone,
 * anything else raises and keeps the client for a retry, a client held by a start that
 * failed before an id existed is released before raising).
 *
 * Commands run as background jobs (see jobs.ts). Timeouts and cancellation are enforced
 * by the client: at the deadline (or on abort) it kills the job's whole process group in
 * the sandbox and reports exit code 124 (or 137), as the local runtime does.
 *
 * @module
 */
import { createHash, randomBytes } from "node:crypto";
import { posix } from "node:path";
import {
  acquireCreateSlot,
  MissingCredentialsError,
  type ProgramResult,
  type ReadOptions,
  recordPending,
  recordSandbox,
  removePending,
  removeSandbox,
  type RunOptions,
  type Runtime,
  type RuntimeInfo,
  SandboxError,
  sleep,
  TIMEOUT_EXIT_CODE,
} from "../../../kit/mod.ts";
import { PrimeClient, type PrimeClientOptions } from "./client.ts";
import { createRequestBody, type ResolvedPrimeConfig } from "./config.ts";
import { type CreationTiming, DEFAULT_CREATION_TIMING, waitForCreation } from "./creation.ts";
import { isTransientPrimeError, PrimeApiError, PrimeNotRunningError } from "./errors.ts";
import {
  ENV_NAME,
  jobKillCommand,
  jobLaunchCommand,
  jobPaths,
  parseExitFile,
  shellQuote,
} from "./jobs.ts";
import { loadPrimeSettings, type PrimeSettings } from "./settings.ts";
import { StatusPoller } from "./status_poller.ts";

/** Provider name in the ledger and the creation limiter. */
export const PRIME_PROVIDER = "prime";

/** Exit code reported for a command cancelled through its signal (128 + SIGKILL). */
const ABORT_EXIT_CODE = 137;
/** Output tail read from a finished job (as the Prime SDK reads it). */
const OUTPUT_TAIL_BYTES = 10 * 1024 * 1024;

/** Timing of job polling and retries (production defaults; tests shrink them). */
export interface PrimeRunTiming {
  /** First job poll delay (doubles). @default 100 */
  jobPollStartMs: number;
  /** Largest job poll delay. @default 3000 */
  jobPollMaxMs: number;
  /** How long a gateway outage is ridden out (job polls, write retries). @default 900000 */
  recoveryMs: number;
  /** First delay after a transient failure (doubles). @default 1000 */
  outageBaseMs: number;
  /** Largest delay after a transient failure. @default 15000 */
  outageMaxMs: number;
}

/** The production run timing. */
export const DEFAULT_RUN_TIMING: PrimeRunTiming = {
  jobPollStartMs: 100,
  jobPollMaxMs: 3000,
  recoveryMs: 900_000,
  outageBaseMs: 1000,
  outageMaxMs: 15_000,
};

/** Options of a {@link PrimeRuntime} beyond its config. */
export interface PrimeRuntimeOptions {
  /** Warnings (image builds, teardown problems). */
  log?: (message: string) => void;
  /** The owning run, noted in the ledger. */
  run?: string | null;
  /** Connection settings. @default read from the environment at each start */
  settings?: PrimeSettings;
  client?: PrimeClientOptions;
  creation?: Partial<CreationTiming>;
  timing?: Partial<PrimeRunTiming>;
}

const pollers = new Map<string, StatusPoller>();

/**
 * The status poller shared by every Prime runtime of this process that talks to the same
 * account (base URL + API key), so concurrent creation waits share batched requests.
 */
export function sharedStatusPoller(
  settings: PrimeSettings,
  clientOptions: PrimeClientOptions = {},
): StatusPoller {
  const key = `${settings.baseUrl}\0${
    createHash("sha256").update(settings.apiKey ?? "").digest("hex")
  }`;
  let p = pollers.get(key);
  if (!p) {
    p = new StatusPoller(new PrimeClient(settings, clientOptions));
    pollers.set(key, p);
  }
  return p;
}

function message(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

function statusOf(e: unknown): number | null {
  return e instanceof PrimeApiError ? e.httpStatus : null;
}

function hintFor(e: unknown): string | undefined {
  if (e instanceof PrimeApiError && e.httpStatus === 401) {
    return "Check PRIME_API_KEY (or api_key in ~/.prime/config.json)";
  }
  if (e instanceof PrimeApiError && e.httpStatus === 402) {
    return "Add funds or credits to the Prime account";
  }
  if (e instanceof PrimeNotRunningError && e.errorType === "IMAGE_PULL_FAILED") {
    return "Check the image name and that the registry is reachable (runtime key image)";
  }
  if (e instanceof PrimeNotRunningError && e.errorType === "OOM_KILLED") {
    return "Give the sandbox more memory (runtime key memory)";
  }
  if (e instanceof PrimeApiError && e.transport === "network") {
    return "Check the network and PRIME_API_BASE_URL";
  }
  return undefined;
}

/** True when Prime refused a create outright (a 4xx answer other than 408/429): none was made. */
function isCreateRefusal(e: unknown): boolean {
  return e instanceof PrimeApiError && e.transport === "http" && e.httpStatus !== null &&
    e.httpStatus >= 400 && e.httpStatus < 500 && e.httpStatus !== 408 && e.httpStatus !== 429;
}

/** A {@link Runtime} backed by one Prime sandbox. */
export class PrimeRuntime implements Runtime {
  readonly isLocal = false;
  readonly #config: ResolvedPrimeConfig;
  readonly #name: string;
  readonly #options: PrimeRuntimeOptions;
  readonly #timing: PrimeRunTiming;
  #client: PrimeClient | null = null;
  #id: string | null = null;
  #confirmedStopId: string | null = null;
  #stopped = false;
  #ready = false;
  #starting = false;
  #imageCached: boolean | null = null;
  #stopping: Promise<void> | null = null;
  #finishedJobs: string[] = [];

  constructor(config: ResolvedPrimeConfig, name: string, options: PrimeRuntimeOptions = {}) {
    this.#config = config;
    this.#name = name;
    this.#options = options;
    this.#timing = { ...DEFAULT_RUN_TIMING, ...options.timing };
  }

  /** `{type: "prime", id}`; the id is kept after teardown. */
  get info(): RuntimeInfo & { image_cached: boolean | null } {
    return { type: PRIME_PROVIDER, id: this.#id, image_cached: this.#imageCached };
  }

  /** True once teardown began (`stop()`) or a stop was confirmed; reset by a new start. */
  get stopped(): boolean {
    return this.#stopped;
  }

  /** The hard sandbox lifetime (config `timeout`), seconds. */
  get timeoutS(): number {
    return this.#config.timeout;
  }

  /** The working directory inside the sandbox (config `workdir`). */
  get workdir(): string {
    return this.#config.workdir;
  }

  /** The resolved config (for tests and `vf sandbox exec`). */
  get config(): ResolvedPrimeConfig {
    return this.#config;
  }

  /** True while a client is held (tests check that teardown releases it). */
  get hasClient(): boolean {
    return this.#client !== null;
  }

  /** The id whose deletion was confirmed last, if any. */
  get confirmedStopId(): string | null {
    return this.#confirmedStopId;
  }

  /**
   * Creates the sandbox and waits until it runs commands: pace creation, create (ledger
   * entry and flag reset as soon as the id is known), wait for RUNNING and reachability,
   * then `mkdir -p <workdir>`. Any failure is a SandboxError; the sandbox (or client) is
   * kept so `stopConfirmed()` can free it.
   */
  async start(options: { signal?: AbortSignal } = {}): Promise<void> {
    if (this.#starting) {
      throw new SandboxError("Cannot start the prime runtime: a start is already running", {
        hint: "Wait for it to finish",
      });
    }
    if (this.#ready && !this.#stopped) {
      throw new SandboxError("Cannot start the prime runtime: it is already started", {
        hint: "Stop it before starting it again",
      });
    }
    const { signal } = options;
    this.#starting = true;
    this.#ready = false;
    try {
      if (signal?.aborted) throw signal.reason ?? new Error("the start was cancelled");
      const settings = this.#options.settings ?? loadPrimeSettings();
      if (!settings.apiKey) {
        throw new MissingCredentialsError("prime sandbox provisioning failed: no Prime API key", {
          hint: "Set PRIME_API_KEY, or api_key in ~/.prime/config.json",
        });
      }
      const client = new PrimeClient(settings, this.#options.client);
      this.#client = client;
      // A new sandbox is on its way: the last one's confirmed stop says nothing about it, so
      // a failure before the new id is known leaves teardown to release this client.
      this.#id = null;
      this.#confirmedStopId = null;
      await acquireCreateSlot(PRIME_PROVIDER, { perMinute: this.#config.creates_per_min }, signal);
      const body = createRequestBody(this.#config, this.#name);
      // What the ledger keeps of this sandbox, pending and once its id is known.
      const journal = {
        provider: PRIME_PROVIDER,
        name: this.#name,
        run: this.#options.run ?? null,
        labels: body.labels as string[],
        config: { base_url: settings.baseUrl },
      };
      // Journaled before the request: a crash before the reply leaves an entry `gc` can
      // resolve by name in Prime's sandbox listing.
      const pendingKey = recordPending(journal);
      let rec: Awaited<ReturnType<PrimeClient["createSandbox"]>>;
      try {
        rec = await client.createSandbox(body);
      } catch (e) {
        if (isCreateRefusal(e)) removePending(PRIME_PROVIDER, pendingKey);
        throw e;
      }
      this.#id = rec.id;
      this.#stopped = false;
      this.#confirmedStopId = null;
      this.#imageCached = rec.pendingImageBuildId === null;
      this.#finishedJobs = [];
      client.setVm(rec.id, rec.vm ?? this.#config.vm);
      recordSandbox({ ...journal, id: rec.id, created_at: new Date().toISOString() });
      removePending(PRIME_PROVIDER, pendingKey);
      if (rec.pendingImageBuildId) {
        this.#options.log?.(
          `prime sandbox ${rec.id}: image "${this.#config.image}" is built on first use; this can take about 10 minutes`,
        );
      }
      const outcome = await waitForCreation(
        client,
        sharedStatusPoller(settings, this.#options.client),
        rec.id,
        { ...DEFAULT_CREATION_TIMING, ...this.#options.creation },
        { signal, log: this.#options.log },
      );
      if (outcome.imageBuilt) this.#imageCached = false;
      const mk = await client.exec(rec.id, `mkdir -p ${shellQuote(this.#config.workdir)}`, {
        timeoutS: 60,
        signal,
      });
      if (mk.exitCode !== 0) {
        throw new Error(`mkdir of the workdir exited ${mk.exitCode}: ${mk.stderr.trim()}`);
      }
      this.#ready = true;
    } catch (e) {
      if (e instanceof SandboxError) throw e;
      throw new SandboxError(`prime sandbox provisioning failed: ${message(e)}`, {
        statusCode: statusOf(e),
        hint: hintFor(e) ?? (signal?.aborted ? "The start was cancelled" : undefined),
        cause: e,
      });
    } finally {
      this.#starting = false;
    }
  }

  /** The live client and id, else a SandboxError naming `action`. */
  #live(action: string): { client: PrimeClient; id: string } {
    if (this.#stopped) {
      throw new SandboxError(`Cannot ${action}: runtime is stopped`, {
        hint: "Call start() first, or make a new runtime",
      });
    }
    if (!this.#ready || this.#client === null || this.#id === null) {
      throw new SandboxError(`Cannot ${action}: runtime is not started`, {
        hint: "Call start() first, or make a new runtime",
      });
    }
    return { client: this.#client, id: this.#id };
  }

  /**
   * Runs `argv` as a background job and polls it until it exits, riding out gateway
   * outages on the same job for up to 15 minutes. `timeoutMs` → the job's process group is
   * killed and the exit code is 124; an abort → killed, 137. Never throws for a non-zero exit.
   */
  async run(argv: string[], options: RunOptions = {}): Promise<ProgramResult> {
    const { client, id } = this.#live(`run "${argv[0] ?? ""}"`);
    if (argv.length === 0 || argv[0] === "") {
      throw new SandboxError("Cannot run a command: argv is empty", {
        hint: 'Pass the program and its arguments, e.g. ["bash", "-lc", "ls"]',
      });
    }
    const env = options.env ?? {};
    for (const k of Object.keys(env)) {
      if (!ENV_NAME.test(k)) {
        throw new SandboxError(
          `Cannot run "${argv[0]}": invalid environment variable name "${k}"`,
          {
            hint: "Names must match [A-Za-z_][A-Za-z0-9_]*",
          },
        );
      }
    }
    const { signal } = options;
    if (signal?.aborted) return { exitCode: ABORT_EXIT_CODE, stdout: "", stderr: "" };
    const started = Date.now();
    const deadline = options.timeoutMs === undefined ? Infinity : started + options.timeoutMs;
    const jobId = randomBytes(4).toString("hex");
    const paths = jobPaths(jobId);
    const cwd = posix.resolve(this.#config.workdir, options.cwd ?? ".");
    const fail = (e: unknown, what = "prime exec failed") =>
      new SandboxError(`${what}: ${message(e)}`, {
        statusCode: statusOf(e),
        hint: hintFor(e),
        cause: e,
      });

    // launch (never aborted half-way: a job must not start unseen)
    const cleanup = this.#finishedJobs.splice(0, 50);
    try {
      if (options.stdin !== undefined) {
        const bytes = typeof options.stdin === "string"
          ? new TextEncoder().encode(options.stdin)
          : options.stdin;
        const mk = await client.exec(id, `mkdir -p ${shellQuote(paths.dir)}`, { timeoutS: 30 });
        if (mk.exitCode !== 0) throw new Error(`mkdir exited ${mk.exitCode}: ${mk.stderr.trim()}`);
        await client.upload(id, paths.stdin, bytes);
      }
      const launch = await client.exec(
        id,
        jobLaunchCommand(jobId, argv, cwd, env, cleanup),
        { timeoutS: 30 },
      );
      if (launch.exitCode !== 0) {
        throw new Error(`the job did not start (exit ${launch.exitCode}): ${launch.stderr.trim()}`);
      }
    } catch (e) {
      this.#finishedJobs.push(...cleanup);
      throw fail(e);
    }

    // poll the exit file
    let exitCode: number | null = null;
    let stop: "timeout" | "abort" | null = null;
    let delay = this.#timing.jobPollStartMs;
    let outageSince: number | null = null;
    for (;;) {
      const wait = Math.min(delay, deadline - Date.now());
      if (wait > 0) await sleep(wait, signal).catch(() => {});
      if (signal?.aborted) stop = "abort";
      else if (Date.now() >= deadline) stop = "timeout";
      if (stop) break;
      try {
        const r = await client.readFile(id, paths.exit, {}, signal);
        outageSince = null;
        exitCode = parseExitFile(r?.content);
        if (exitCode !== null) break;
        delay = Math.min(delay * 2, this.#timing.jobPollMaxMs);
      } catch (e) {
        if (signal?.aborted) {
          stop = "abort";
          break;
        }
        if (!isTransientPrimeError(e)) throw fail(e);
        outageSince ??= Date.now();
        if (Date.now() - outageSince >= this.#timing.recoveryMs) {
          throw fail(
            e,
            `prime exec failed after a ${
              Math.round(this.#timing.recoveryMs / 1000)
            }s gateway outage`,
          );
        }
        delay = Math.min(Math.max(delay * 2, this.#timing.outageBaseMs), this.#timing.outageMaxMs);
      }
    }
    if (stop) {
      try {
        await client.exec(id, jobKillCommand(jobId), { timeoutS: 30 });
      } catch (e) {
        this.#options.log?.(`prime sandbox ${id}: could not kill job ${jobId}: ${message(e)}`);
      }
    }
    let stdout = "";
    let stderr = "";
    try {
      const window = { offset: -OUTPUT_TAIL_BYTES, length: OUTPUT_TAIL_BYTES };
      const [o, e] = await Promise.all([
        client.readFile(id, paths.stdout, window),
        client.readFile(id, paths.stderr, window),
      ]);
      stdout = o?.content ?? "";
      stderr = e?.content ?? "";
    } catch (e) {
      if (!stop) throw fail(e);
    }
    this.#finishedJobs.push(paths.dir);
    if (stop === "timeout") return { exitCode: TIMEOUT_EXIT_CODE, stdout, stderr };
    if (stop === "abort") return { exitCode: ABORT_EXIT_CODE, stdout, stderr };
    return { exitCode: exitCode ?? 0, stdout, stderr };
  }

  /**
   * Writes a file: `mkdir -p` of its parent, then an upload. A transient failure repeats
   * that same pair (backoff 1 → 15 s) for up to 15 minutes.
   */
  async write(path: string, data: string | Uint8Array): Promise<void> {
    const { client, id } = this.#live(`write "${path}"`);
    const target = posix.resolve(this.#config.workdir, path);
    const bytes = typeof data === "string" ? new TextEncoder().encode(data) : data;
    const started = Date.now();
    let delay = this.#timing.outageBaseMs;
    for (;;) {
      try {
        const mk = await client.exec(id, `mkdir -p ${shellQuote(posix.dirname(target))}`, {
          timeoutS: 60,
        });
        if (mk.exitCode !== 0) {
          throw new SandboxError(
            `Cannot write "${path}": mkdir exited ${mk.exitCode}: ${mk.stderr.trim()}`,
            { hint: "Check that the path is a file path the sandbox user may write" },
          );
        }
        await client.upload(id, target, bytes);
        return;
      } catch (e) {
        if (e instanceof SandboxError) throw e;
        if (isTransientPrimeError(e) && Date.now() - started < this.#timing.recoveryMs) {
          await sleep(delay);
          delay = Math.min(delay * 2, this.#timing.outageMaxMs);
          continue;
        }
        throw new SandboxError(`Cannot write "${path}": ${message(e)}`, {
          statusCode: statusOf(e),
          hint: hintFor(e),
          cause: e,
        });
      }
    }
  }

  /** Reads a file (download); refuses files over `maxBytes`. */
  async read(path: string, options: ReadOptions = {}): Promise<Uint8Array> {
    const { client, id } = this.#live(`read "${path}"`);
    const target = posix.resolve(this.#config.workdir, path);
    let bytes: Uint8Array;
    try {
      bytes = await client.download(id, target);
    } catch (e) {
      // the gateway answers a missing file with 404 and an error-code body
      if (e instanceof PrimeApiError && e.transport === "http" && e.httpStatus === 404) {
        throw new SandboxError(`Cannot read "${path}": no such file`, {
          statusCode: 404,
          hint: `Looked for "${target}" in sandbox ${id}`,
          cause: e,
        });
      }
      throw new SandboxError(`Cannot read "${path}": ${message(e)}`, {
        statusCode: statusOf(e),
        hint: hintFor(e),
        cause: e,
      });
    }
    const max = options.maxBytes;
    if (max !== undefined && bytes.byteLength > max) {
      throw new SandboxError(
        `Cannot read "${path}": the file has ${bytes.byteLength} bytes, more than the limit of ${max} bytes`,
        { hint: "Raise maxBytes or read a smaller file" },
      );
    }
    return bytes;
  }

  /** True while the sandbox runs commands (`true` exits 0). */
  async alive(): Promise<boolean> {
    if (this.#stopped || !this.#ready || !this.#client || !this.#id) return false;
    try {
      return (await this.#client.exec(this.#id, "true", { timeoutS: 10 })).exitCode === 0;
    } catch {
      return false;
    }
  }

  /** The public URL of a port served inside the sandbox (region-gated at Prime). */
  async expose(port: number): Promise<string> {
    const { client, id } = this.#live(`expose port ${port}`);
    try {
      return await client.expose(id, port);
    } catch (e) {
      throw new SandboxError(`Cannot expose port ${port} of sandbox ${id}: ${message(e)}`, {
        statusCode: statusOf(e),
        hint: "Port exposure is region-gated at Prime (region us supports it)",
        cause: e,
      });
    }
  }

  /**
   * Best-effort teardown: `stopped` is set first, the client is consumed (the idempotency
   * guard), the sandbox is deleted with failures logged, the client closed. Never throws;
   * confirms nothing (a later `stopConfirmed()` raises "without its live client").
   */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#ready = false;
    const client = this.#client;
    const id = this.#id;
    this.#client = null;
    if (!client) return;
    try {
      if (id !== null && id !== this.#confirmedStopId) {
        await client.deleteSandbox(id);
        removeSandbox(PRIME_PROVIDER, id);
      }
    } catch (e) {
      if (e instanceof PrimeApiError && e.transport === "http" && e.httpStatus === 404 && id) {
        removeSandbox(PRIME_PROVIDER, id);
      } else {
        this.#options.log?.(`prime sandbox ${id}: delete failed: ${message(e)}`);
      }
    } finally {
      client.close();
    }
  }

  /**
   * Frees the sandbox or throws (DELETE answered 2xx, or a typed 404 = gone). Idempotent once confirmed:
   * no second DELETE. Concurrent calls share one attempt.
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
    const id = this.#id;
    if (id !== null && id === this.#confirmedStopId) return;
    const client = this.#client;
    if (client === null) {
      if (id === null) return;
      throw new SandboxError("prime sandbox deletion cannot be confirmed without its live client", {
        hint: `Sandbox ${id} stays in the ledger; run \`vf sandboxes gc\` to confirm its deletion`,
      });
    }
    if (id === null) {
      this.#client = null;
      try {
        client.close();
      } catch {
        // released anyway
      }
      throw new SandboxError("prime sandbox deletion cannot be confirmed without a provider ID", {
        hint: "The start failed before Prime returned an id; nothing to delete was recorded",
      });
    }
    try {
      await client.deleteSandbox(id);
    } catch (e) {
      if (e instanceof PrimeApiError && e.transport === "http" && e.httpStatus === 404) {
        this.#options.log?.(`prime sandbox ${id} was already gone (DELETE answered 404)`);
      } else {
        throw new SandboxError(`prime sandbox ${id} deletion not confirmed: ${message(e)}`, {
          statusCode: statusOf(e),
          hint: hintFor(e) ?? "Retry; the sandbox stays in the ledger until confirmed",
          cause: e,
        });
      }
    }
    this.#confirmedStopId = id;
    this.#stopped = true;
    this.#ready = false;
    this.#client = null;
    try {
      client.close();
    } catch {
      // released anyway
    }
    removeSandbox(PRIME_PROVIDER, id);
  }
}
