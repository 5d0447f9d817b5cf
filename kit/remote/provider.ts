/**
 * What a remote sandbox provider implements for {@link RemoteSandboxRuntime}
 * (`kit/remote/runtime.ts`): provision (prepare + create + ready), exec, files (optional:
 * the runtime falls back to small `sh` programs over exec) and terminate. Everything else —
 * the sandbox ledger, the creation limiter, the `stop`/`stopConfirmed` state machine, the
 * lifetime a harness timeout is capped to, the in-sandbox process-group protocol and
 * stop-by-id — belongs to the base.
 *
 * One provider object serves one runtime instance, so it may keep per-instance state
 * (e.g. whether the image was cached); process-wide caches are its own business.
 *
 * @module
 */
import type { CreateRateLimit } from "../runtime/create_limiter.ts";
import type { RuntimeProcess } from "../runtime/runtime.ts";

/** What the sandbox ledger keeps of a sandbox besides provider, name and run. */
export interface SandboxJournal {
  /** Labels sent with the create request. */
  labels?: string[];
  /** Non-secret settings needed to reach the provider again (never keys). */
  config?: Record<string, unknown>;
}

/** A created sandbox: the provider's id and whatever the provider needs to drive it. */
export interface CreatedSandbox<H> {
  id: string;
  handle: H;
}

/**
 * One creation, prepared (credentials checked, clients, images) and ready to send. The
 * base journals {@link journal} as pending, then calls {@link create}.
 */
export interface SandboxCreation<H> {
  journal: SandboxJournal;
  /** Sends the create request; resolves once the provider returned an id. */
  create(signal?: AbortSignal): Promise<CreatedSandbox<H>>;
  /**
   * Frees what `prepare` made (a client) when no sandbox came of it. When present, a start
   * that fails before an id is known leaves this creation held, and `stopConfirmed()`
   * releases it and throws (it cannot confirm a sandbox it never saw).
   */
  release?(): void;
}

/** One command for {@link SandboxProvider.exec}: argv, no shell. */
export interface ExecRequest {
  argv: string[];
  /** Absolute working directory, or the sandbox's default. */
  cwd?: string | undefined;
  env?: Record<string, string> | undefined;
  /** Bytes for stdin (providers whose exec has no stdin may ignore it: see `files`). */
  stdin?: Uint8Array | undefined;
  /**
   * Instead of `stdin`, a stream to write as it arrives and close at its end: given only to
   * providers that declare {@link SandboxProvider.streamsStdin}.
   */
  stdinStream?: AsyncIterable<Uint8Array> | undefined;
  /** A bound the provider's request may carry, seconds (short commands only). */
  timeoutS?: number | undefined;
  /** Ends the request early (the command itself is killed by the process-group protocol). */
  signal?: AbortSignal | undefined;
}

/** What a finished exec returned (128+N when signal N killed the command). */
export interface ExecResult {
  exitCode: number;
  stdout: Uint8Array;
  stderr: Uint8Array;
}

/** Direct file transfer, for providers that have it (else the base uses exec). */
export interface SandboxFiles<H> {
  /** Writes `bytes` to absolute `path`; the parent directory exists. */
  upload(handle: H, path: string, bytes: Uint8Array, signal?: AbortSignal): Promise<void>;
  /** The bytes of absolute `path`, or null when there is no such file. */
  download(handle: H, path: string, signal?: AbortSignal): Promise<Uint8Array | null>;
}

/** Timing of detached jobs (production defaults in `DEFAULT_JOB_TIMING`). */
export interface JobTiming {
  /** First job poll delay (doubles). */
  pollStartMs: number;
  /** Largest job poll delay. */
  pollMaxMs: number;
  /** How long a provider outage is ridden out (job polls, write retries). */
  recoveryMs: number;
  /** First delay after a transient failure (doubles). */
  outageBaseMs: number;
  /** Largest delay after a transient failure. */
  outageMaxMs: number;
}

/**
 * Detached commands, for providers whose exec is one short request: a command runs as a
 * background job whose exit file is polled (`kit/remote/process_group.ts`).
 */
export interface SandboxJobs<H> {
  /** A window of a text file (negative offset = from the end), or null while it is missing. */
  readText(
    handle: H,
    path: string,
    window?: { offset: number; length: number },
    signal?: AbortSignal,
  ): Promise<string | null>;
  timing: JobTiming;
}

/** Context a provider adds to an error the base reports. */
export interface ErrorDetail {
  /** The provider's HTTP status, when it answered with one. */
  statusCode?: number | null;
  hint?: string | undefined;
}

/** A remote sandbox provider (see the module doc). */
export interface SandboxProvider<H> {
  /** Provider name: runtime type, ledger and creation-limiter key (`prime`). */
  readonly name: string;
  /** Creation pacing shared by all processes of the user. */
  readonly createRate: CreateRateLimit;
  /** Checks credentials and makes what a create needs; nothing is created yet. */
  prepare(signal?: AbortSignal): Promise<SandboxCreation<H>>;
  /** True when the provider refused a create outright (nothing was made). */
  isRefusal(error: unknown): boolean;
  /** Waits until a created sandbox runs commands. @default ready at once */
  ready?(handle: H, id: string, signal?: AbortSignal): Promise<void>;
  /** Runs one command to its end (see {@link ExecRequest}). */
  exec(handle: H, request: ExecRequest): Promise<ExecResult>;
  /**
   * Starts one command with its stdin and stdout open (an exec whose stdin streams).
   * @default none: the runtime has no live programs
   */
  spawn?(
    handle: H,
    request: Pick<ExecRequest, "argv" | "cwd" | "env">,
  ): Promise<RuntimeProcess>;
  /** Terminates the sandbox: resolves once the provider confirmed it, or knows it gone. */
  terminate(handle: H, id: string): Promise<"terminated" | "gone">;
  /** Frees the handle's connections (after teardown). */
  close?(handle: H): void;
  /**
   * True when `exec` writes a `stdinStream` as it arrives (an exec that lasts as long as the
   * command). Otherwise the base reads a streamed stdin to its end and passes it as bytes.
   * @default false
   */
  readonly streamsStdin?: boolean;
  /** Direct file transfer. @default `sh` programs over exec with stdin */
  files?: SandboxFiles<H>;
  /** Detached jobs. @default commands run attached (exec lasts as long as the command) */
  jobs?: SandboxJobs<H>;
  /** True for failures worth retrying (outages). @default none are */
  isTransient?(error: unknown): boolean;
  /** A status and a hint for an error. */
  describeError?(error: unknown): ErrorDetail;
}
