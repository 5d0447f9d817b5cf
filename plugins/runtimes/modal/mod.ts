/**
 * The `modal` runtime: each rollout in its own Modal sandbox, driven by our own gRPC client
 * over `node:http2` (no Modal SDK). Lifecycle and teardown follow the confirmed-teardown
 * semantics of `verifiers/v1/runtimes/modal.py@a60a606`: `timeout` 60..86400 s sent as `Math.trunc(timeout)`;
 * `stopConfirmed()` either gets the provider's OK for `SandboxTerminate` or throws, is
 * idempotent once confirmed, and terminates a held sandbox even when its id was never
 * published; every sandbox is in the user's sandbox ledger from the moment its id is known
 * until a terminate succeeds.
 *
 * Commands run through the task command router with piped stdout/stderr. The router has no
 * kill RPC, so a command given a timeout or an abort signal runs under a small `sh` wrapper
 * in its own process group, which a second exec SIGKILLs; a command killed for its timeout
 * returns exit code 124 (as `timeout(1)` and the local runtime), one killed by an abort 137.
 * Environment variables reach a command through an ephemeral secret, as the official SDK
 * does. Files move through exec (`cat`), binary-safe.
 *
 * Connection settings come from the same places as the official SDK: `MODAL_SERVER_URL`,
 * `MODAL_TOKEN_ID`, `MODAL_TOKEN_SECRET`, `MODAL_ENVIRONMENT`, else `~/.modal.toml`.
 *
 * @module
 */
import { createHash, randomUUID } from "node:crypto";
import { posix } from "node:path";
import { z } from "zod";
import {
  acquireCreateSlot,
  concatBytes,
  ConfigError,
  coresToMilliCpu,
  defineRuntime,
  errorMessage,
  gbToMib,
  type LedgerEntry,
  MissingCredentialsError,
  type ProgramResult,
  type ReadOptions,
  recordPending,
  recordSandbox,
  remoteImageSchema,
  remoteTimeoutSchema,
  remoteWorkdirSchema,
  removePending,
  removeSandbox,
  type RunOptions,
  type Runtime,
  type RuntimeCreateOptions,
  type RuntimeInfo,
  SandboxError,
  sleep,
  TIMEOUT_EXIT_CODE,
  truncSeconds,
} from "../../../kit/mod.ts";
import { buildRegistryImage, ModalApi } from "./api.ts";
import { GrpcError, Status } from "./grpc.ts";
import * as M from "./messages.ts";
import { resolveModalProfile } from "./profile.ts";
import type { ModalProfile } from "./profile.ts";
import { TaskRouter } from "./router.ts";
import {
  KILL_SCRIPT,
  READ_MISSING,
  READ_NOT_FILE,
  READ_SCRIPT,
  READ_TOO_LARGE,
  RUN_WRAPPER,
  WRITE_SCRIPT,
} from "./scripts.ts";

/** The Modal app every sandbox is created in (as verifiers). */
export const MODAL_APP_NAME = "verifiers-v1";
/** The port declared (encrypted) on every sandbox, as verifiers' `SERVICE_PORT`. */
export const SERVICE_PORT = 8000;
/** Ledger and limiter provider name. */
const PROVIDER = "modal";
/** The SDK's guard on the total length of a command's arguments. */
const ARG_MAX_BYTES = 65536;
/** Bytes per `TaskExecStdinWrite`. */
const STDIN_CHUNK = 4 * 1024 * 1024;
/** `SandboxGetTaskId` polling: interval and attempts (the SDK's: 5 minutes). */
const TASK_ID_POLL_MS = 500;
const TASK_ID_POLL_ATTEMPTS = 600;
/** After killing a command, how long to wait for its output streams to close. */
const KILL_GRACE_MS = 5000;
/** Exit code of a command killed by SIGKILL. */
const KILLED_EXIT_CODE = 128 + 9;

/** Config keys of the `modal` runtime (verifiers' `ModalConfig`). */
export const ModalRuntimeConfig = z.object({
  image: remoteImageSchema,
  workdir: remoteWorkdirSchema,
  timeout: remoteTimeoutSchema,
  cpu: z.number().positive().default(1.0).describe("CPU cores (sent as milli-CPU, truncated)"),
  memory: z.number().positive().default(2.0).describe("Memory in GB (sent as MiB, truncated)"),
  gpu: z.string().min(1).nullable().default(null).describe(
    'GPU request: "A100", "A100:2", or null for none',
  ),
  region: z.string().min(1).nullable().default(null).describe("Region to schedule in, or null"),
  network_access: z.boolean().default(true).describe(
    "Allow outbound network access (false blocks it)",
  ),
  disk: z.number().positive().default(5.0).describe("Disk in GB (accepted, not enforced by Modal)"),
  creates_per_sec: z.number().nullable().default(40).describe(
    "Sandbox creations per second shared by all your processes; null or <= 0 = unlimited",
  ),
});

/** The resolved config of the `modal` runtime. */
export type ModalRuntimeConfig = z.infer<typeof ModalRuntimeConfig>;

/** Parses `"A100:2"` → `{gpuType: "A100", count: 2}` (as the SDK), null for none. */
export function parseGpu(gpu: string | null): { gpuType: string; count: number } | null {
  if (gpu === null || gpu === "") return null;
  const [type, countText] = gpu.includes(":") ? gpu.split(":", 2) as [string, string] : [gpu, "1"];
  const count = Number(countText);
  if (!Number.isInteger(count) || count < 1) {
    throw new ConfigError([`runtime "modal": gpu: invalid GPU count "${countText}"`], {
      hint: 'Use a type and an optional positive count, e.g. "A100" or "A100:2"',
    });
  }
  return { gpuType: type.toUpperCase(), count };
}

/** The `SandboxCreate` definition verifiers sends for a config (`runtimes/modal.py@a60a606`). */
export function sandboxDefinition(
  config: ModalRuntimeConfig,
  imageId: string,
  name: string,
): Partial<M.SandboxDefinition> {
  const gpu = parseGpu(config.gpu);
  return {
    entrypointArgs: ["sleep", "infinity"],
    imageId,
    timeoutSecs: truncSeconds(config.timeout),
    workdir: config.workdir,
    networkAccess: {
      networkAccessType: config.network_access
        ? M.NetworkAccessType.OPEN
        : M.NetworkAccessType.BLOCKED,
      allowedCidrs: [],
    },
    resources: {
      milliCpu: coresToMilliCpu(config.cpu),
      memoryMb: gbToMib(config.memory),
      gpuConfig: gpu ? { type: 0, count: gpu.count, gpuType: gpu.gpuType } : {
        type: 0,
        count: 0,
        gpuType: "",
      },
      memoryMbMax: 0,
      ephemeralDiskMb: 0,
      milliCpuMax: 0,
    },
    openPorts: { ports: [{ port: SERVICE_PORT, unencrypted: false, tunnelType: undefined }] },
    schedulerPlacement: config.region ? { regions: [config.region] } : undefined,
    secretIds: [],
    cloudProviderStr: "",
    verbose: false,
    experimentalOptions: {},
    name,
  };
}

/** A sandbox name Modal accepts: letters, digits, `-`, `_`, `.`; at most 64 characters. */
export function sandboxName(name: string): string {
  const cleaned = name.replace(/[^A-Za-z0-9._-]+/g, "-").slice(0, 64);
  return cleaned === "" ? "vf-sandbox" : cleaned;
}

// ------------------------------------------------------------- per-process caches

interface Account {
  api: ModalApi;
  apps: Map<string, Promise<string>>;
  images: Map<string, Promise<string>>;
}

const accounts = new Map<string, Account>();

function accountKey(p: ModalProfile): string {
  const secret = createHash("sha256").update(p.tokenSecret ?? "").digest("hex").slice(0, 16);
  return [p.serverUrl, p.tokenId ?? "", secret, p.environment, p.imageBuilderVersion].join("\n");
}

function accountFor(profile: ModalProfile): Account {
  const key = accountKey(profile);
  let account = accounts.get(key);
  if (account === undefined) {
    account = { api: new ModalApi(profile), apps: new Map(), images: new Map() };
    accounts.set(key, account);
  }
  return account;
}

function cached<T>(map: Map<string, Promise<T>>, key: string, make: () => Promise<T>): Promise<T> {
  let p = map.get(key);
  if (p === undefined) {
    p = make();
    map.set(key, p);
    p.catch(() => {
      if (map.get(key) === p) map.delete(key);
    });
  }
  return p;
}

/** The control-plane client this process shares for a profile (its auth token, its caches). */
export function sharedModalApi(profile: ModalProfile = resolveModalProfile()): ModalApi {
  return accountFor(profile).api;
}

/** Closes the cached connections of this process (for tests and clean shutdowns). */
export function closeModalConnections(): void {
  for (const a of accounts.values()) a.api.close();
  accounts.clear();
}

// ------------------------------------------------------------------- the runtime

/** Options of a {@link ModalRuntime} beyond its config. */
export interface ModalRuntimeOptions {
  /** The provider-side sandbox name (sanitized). */
  name: string;
  /** The run that owns the sandbox, noted in the sandbox ledger. */
  run?: string | null;
  /** Receives warnings (best-effort teardown failures). */
  log?: (message: string) => void;
  /** The profile to use. @default resolved from the environment and ~/.modal.toml */
  profile?: ModalProfile;
}

interface ExecResult {
  exitCode: number;
  stdout: Uint8Array;
  stderr: Uint8Array;
}

interface ExecOptions {
  stdin?: Uint8Array;
  /** Working directory field of the exec (absolute), or none. */
  workdir?: string;
  env?: Record<string, string>;
  signal?: AbortSignal;
  timeoutMs?: number;
}

const RESTART_HINT = "Call start() first, or make a new runtime";

/** A {@link Runtime} backed by one Modal sandbox at a time. */
export class ModalRuntime implements Runtime {
  readonly isLocal = false;
  readonly #config: ModalRuntimeConfig;
  readonly #name: string;
  readonly #run: string | null;
  readonly #log: (message: string) => void;
  readonly #profile: ModalProfile | undefined;
  #account: Account | null = null;
  /** The provider's sandbox id, held privately as soon as SandboxCreate returns. */
  #handle: string | null = null;
  /** The published provider id (kept after teardown). */
  #id: string | null = null;
  #confirmedStopId: string | null = null;
  /** Key of this start's pending ledger entry while it is the only record of the sandbox. */
  #pendingKey: string | null = null;
  #stopped = false;
  #router: TaskRouter | null = null;
  #teardown: Promise<void> | null = null;
  /** Internal controllers of the execs in flight; teardown aborts them. */
  readonly #inflight = new Set<AbortController>();

  constructor(config: ModalRuntimeConfig, options: ModalRuntimeOptions) {
    this.#config = config;
    this.#name = sandboxName(options.name);
    this.#run = options.run ?? null;
    this.#log = options.log ?? (() => {});
    this.#profile = options.profile;
  }

  /** `{type: "modal", id: <sandbox id>}`; the id is kept after teardown. */
  get info(): RuntimeInfo {
    return { type: "modal", id: this.#id };
  }

  /** True once teardown began (reset by a later successful `start()`). */
  get stopped(): boolean {
    return this.#stopped;
  }

  /** The hard lifetime in seconds, as configured (the harness cap truncates it). */
  get timeoutS(): number {
    return this.#config.timeout;
  }

  /** The configured working directory inside the sandbox. */
  get workdir(): string {
    return this.#config.workdir;
  }

  #api(): ModalApi {
    if (this.#account === null) this.#account = accountFor(this.#profile ?? resolveModalProfile());
    return this.#account.api;
  }

  /** Creates the sandbox and waits until commands can run in it. */
  async start(options: { signal?: AbortSignal } = {}): Promise<void> {
    if (this.#handle !== null) {
      throw new SandboxError(
        this.#stopped
          ? "Cannot start the modal runtime: its previous sandbox is not confirmed terminated"
          : "Cannot start the modal runtime: it is already started",
        { hint: "Call stopConfirmed() before starting it again" },
      );
    }
    const signal = options.signal;
    if (signal?.aborted) {
      throw new SandboxError("Cannot start the modal runtime: the start was cancelled", {
        cause: signal.reason,
      });
    }
    try {
      await this.#provision(signal);
    } catch (e) {
      if (e instanceof SandboxError && e.message.startsWith("modal sandbox provisioning")) throw e;
      const Failure = e instanceof MissingCredentialsError ? MissingCredentialsError : SandboxError;
      throw new Failure(`modal sandbox provisioning failed: ${errorMessage(e)}`, {
        hint: e instanceof SandboxError ? e.hint : provisioningHint(e),
        cause: e,
      });
    }
  }

  async #provision(signal: AbortSignal | undefined): Promise<void> {
    const api = this.#api();
    const account = this.#account!;
    const cfg = this.#config;
    const appId = await cached(
      account.apps,
      MODAL_APP_NAME,
      () => api.appGetOrCreate(MODAL_APP_NAME, true),
    );
    const imageId = await cached(
      account.images,
      `${appId}\n${cfg.image}`,
      () => buildRegistryImage(api, appId, cfg.image, [["ENTRYPOINT []"]]),
    );
    await acquireCreateSlot(PROVIDER, { perSecond: cfg.creates_per_sec }, signal);
    if (signal?.aborted) throw signal.reason;
    // A new sandbox is on its way: the last one's confirmed stop says nothing about it, so
    // a failure from here on leaves teardown to terminate whatever handle this start holds.
    this.#id = null;
    this.#confirmedStopId = null;
    // What the ledger keeps of this sandbox, pending and once its id is known.
    const journal = {
      provider: PROVIDER,
      name: this.#name,
      run: this.#run,
      config: {
        server_url: api.profile.serverUrl,
        environment: api.profile.environment,
        app_name: MODAL_APP_NAME,
      },
    };
    // Journaled before the request: a crash before the reply leaves an entry `gc` can
    // resolve by name (SandboxGetFromName).
    this.#pendingKey = recordPending(journal);
    let created: M.SandboxCreateResponse;
    try {
      created = await api.unary(
        "SandboxCreate",
        M.SandboxCreateRequest,
        M.SandboxCreateResponse,
        { appId, definition: sandboxDefinition(cfg, imageId, this.#name) as M.SandboxDefinition },
      );
    } catch (e) {
      if (isRefusal(e)) this.#forgetPending(); // Modal answered: nothing was created
      throw e;
    }
    const sandboxId = created.sandboxId;
    if (!sandboxId) throw new SandboxError("modal SandboxCreate returned no sandbox id");
    // Hold the handle before anything else can fail, so teardown can always terminate it.
    this.#handle = sandboxId;
    recordSandbox({ ...journal, id: sandboxId, created_at: new Date().toISOString() });
    this.#forgetPending();
    this.#id = sandboxId;
    this.#stopped = false;
    this.#confirmedStopId = null;

    const taskId = await this.#waitForTask(api, sandboxId, signal);
    this.#router = await TaskRouter.open(api, taskId, signal);
    const made = await this.#exec(["mkdir", "-p", cfg.workdir], { signal });
    if (made.exitCode !== 0) {
      throw new SandboxError(
        `cannot create the workdir "${cfg.workdir}": ${decodeText(made.stderr).trim()}`,
        { hint: "Pick a workdir the image's user may create (runtime key workdir)" },
      );
    }
  }

  async #waitForTask(api: ModalApi, sandboxId: string, signal?: AbortSignal): Promise<string> {
    for (let i = 0; i < TASK_ID_POLL_ATTEMPTS; i++) {
      const res = await api.sandboxGetTaskId(sandboxId, signal);
      if (res.taskResult) {
        const r = res.taskResult;
        throw new SandboxError(
          `Sandbox ${sandboxId} has already completed${
            r.exception ? ` with result: exception: "${r.exception}"` : ""
          }`,
          { hint: "The sandbox ended before it ran anything; check the image and its lifetime" },
        );
      }
      if (res.taskId) return res.taskId;
      await sleep(TASK_ID_POLL_MS, signal);
    }
    throw new SandboxError(`Timed out waiting for the task of sandbox ${sandboxId}`, {
      hint: "Modal did not schedule the sandbox within 5 minutes",
    });
  }

  /** The router when the runtime can run commands, else a SandboxError naming `action`. */
  #live(action: string): TaskRouter {
    if (this.#stopped) {
      throw new SandboxError(`Cannot ${action}: runtime is stopped`, { hint: RESTART_HINT });
    }
    if (this.#router === null || this.#handle === null) {
      throw new SandboxError(`Cannot ${action}: runtime is not started`, { hint: RESTART_HINT });
    }
    return this.#router;
  }

  #resolve(path: string): string {
    return posix.resolve(this.#config.workdir, path);
  }

  /**
   * Runs one command through the router and collects its output. With a timeout or a
   * signal the command runs under {@link RUN_WRAPPER} so it can be killed as a group.
   */
  async #exec(argv: string[], options: ExecOptions = {}): Promise<ExecResult> {
    const router = this.#router;
    if (router === null) throw new SandboxError("modal exec: the runtime is not started");
    const api = this.#api();
    const control = new AbortController();
    this.#inflight.add(control);
    const internal = control.signal;
    const killable = options.signal !== undefined || options.timeoutMs !== undefined;
    const execId = randomUUID();
    const pidFile = `/tmp/.vf-exec-${execId}.pid`;
    const commandArgs = killable ? ["sh", "-c", RUN_WRAPPER, "vf-run", pidFile, ...argv] : argv;
    const total = commandArgs.reduce((n, a) => n + a.length, 0);
    if (total > ARG_MAX_BYTES) {
      this.#inflight.delete(control);
      throw new SandboxError(
        `Cannot run "${
          argv[0]
        }": its arguments are ${total} bytes, over Modal's limit of ${ARG_MAX_BYTES}`,
        { hint: "Write long input to a file with write() and pass its path instead" },
      );
    }
    let killRequested: "timeout" | "abort" | null = null;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let killing: Promise<void> | null = null;
    const requestKill = (why: "timeout" | "abort") => {
      if (killRequested !== null) return;
      killRequested = why;
      killing = this.#exec(["sh", "-c", KILL_SCRIPT, "vf-kill", pidFile]).then(
        () => {},
        (e) => this.#log(`modal: cannot kill exec ${execId}: ${errorMessage(e)}`),
      );
    };
    const onAbort = () => requestKill("abort");
    try {
      if (options.signal?.aborted) {
        return { exitCode: KILLED_EXIT_CODE, stdout: new Uint8Array(), stderr: new Uint8Array() };
      }
      const env = options.env ?? {};
      const secretIds = Object.keys(env).length > 0
        ? [await api.ephemeralSecret(env, internal)]
        : [];
      await router.execStart({
        taskId: router.taskId,
        execId,
        commandArgs,
        stdoutConfig: M.StdioConfig.PIPE,
        stderrConfig: M.StdioConfig.PIPE,
        workdir: options.workdir,
        secretIds,
        runtimeDebug: false,
      }, internal);
      if (options.timeoutMs !== undefined && Number.isFinite(options.timeoutMs)) {
        timer = setTimeout(() => requestKill("timeout"), Math.max(0, options.timeoutMs));
      }
      if (options.signal?.aborted) requestKill("abort");
      else options.signal?.addEventListener("abort", onAbort, { once: true });

      const stdin = (async () => {
        const data = options.stdin ?? new Uint8Array(0);
        let offset = 0;
        while (offset < data.byteLength) {
          const chunk = data.subarray(offset, offset + STDIN_CHUNK);
          await router.stdinWrite(execId, offset, chunk, false, internal);
          offset += chunk.byteLength;
        }
        await router.stdinWrite(execId, offset, new Uint8Array(0), true, internal);
      })();
      const collect = async (fd: number): Promise<Uint8Array> => {
        const parts: Uint8Array[] = [];
        for await (const data of router.stdioRead(execId, fd, { signal: internal })) {
          parts.push(data);
        }
        return concatBytes(parts);
      };
      const outputs = Promise.all([collect(M.StdioFd.STDOUT), collect(M.StdioFd.STDERR)]);
      // Awaited below; marked handled now so a failure while awaiting `exit` is not unhandled.
      outputs.catch(() => {});
      const exit = router.execWait(execId, { signal: internal });
      // A stdin failure (e.g. the command exited without reading) must not fail the run.
      stdin.catch(() => {});
      const status = await exit;
      let out: Uint8Array;
      let err: Uint8Array;
      if (killRequested !== null) {
        let grace: ReturnType<typeof setTimeout> | undefined;
        const graceful = await Promise.race([
          outputs,
          new Promise<null>((r) => grace = setTimeout(() => r(null), KILL_GRACE_MS)),
        ]).finally(() => clearTimeout(grace));
        if (graceful === null) {
          control.abort();
          [out, err] = [new Uint8Array(), new Uint8Array()];
        } else [out, err] = graceful;
      } else [out, err] = await outputs;
      await (killing as Promise<void> | null);
      let exitCode = status.code !== undefined
        ? status.code
        : status.signal !== undefined
        ? 128 + status.signal
        : 1;
      if (killRequested === "timeout") exitCode = TIMEOUT_EXIT_CODE;
      else if (killRequested === "abort" && exitCode === 0) exitCode = KILLED_EXIT_CODE;
      return { exitCode, stdout: out, stderr: err };
    } catch (e) {
      if (internal.aborted) {
        return { exitCode: KILLED_EXIT_CODE, stdout: new Uint8Array(), stderr: new Uint8Array() };
      }
      if (e instanceof SandboxError) throw e;
      throw new SandboxError(`modal exec of "${argv[0]}" failed: ${errorMessage(e)}`, {
        hint: execHint(e),
        cause: e,
      });
    } finally {
      if (timer !== undefined) clearTimeout(timer);
      options.signal?.removeEventListener("abort", onAbort);
      this.#inflight.delete(control);
    }
  }

  /** Runs `argv` (no shell) in the workdir or `cwd`; never throws for a failing command. */
  async run(argv: string[], options: RunOptions = {}): Promise<ProgramResult> {
    this.#live(`run "${argv[0] ?? ""}"`);
    if (argv.length === 0 || argv[0] === "") {
      throw new SandboxError("Cannot run a command: argv is empty", {
        hint: 'Pass the program and its arguments, e.g. ["bash", "-lc", "ls"]',
      });
    }
    const stdin = options.stdin === undefined
      ? undefined
      : typeof options.stdin === "string"
      ? new TextEncoder().encode(options.stdin)
      : options.stdin;
    const r = await this.#exec(argv, {
      stdin,
      workdir: options.cwd === undefined ? this.#config.workdir : this.#resolve(options.cwd),
      env: options.env,
      signal: options.signal,
      timeoutMs: options.timeoutMs,
    });
    return { exitCode: r.exitCode, stdout: decodeText(r.stdout), stderr: decodeText(r.stderr) };
  }

  /** Writes a file (parents created); relative paths are under the workdir. */
  async write(path: string, data: string | Uint8Array): Promise<void> {
    this.#live(`write "${path}"`);
    const target = this.#resolve(path);
    const bytes = typeof data === "string" ? new TextEncoder().encode(data) : data;
    const r = await this.#exec(["sh", "-c", WRITE_SCRIPT, "vf-write", target], { stdin: bytes });
    if (r.exitCode !== 0) {
      throw new SandboxError(`Cannot write "${path}": ${decodeText(r.stderr).trim()}`, {
        hint: "Check that the path is a file path the sandbox's user may write",
      });
    }
  }

  /** Reads a file; relative paths are under the workdir. Refuses files over `maxBytes`. */
  async read(path: string, options: ReadOptions = {}): Promise<Uint8Array> {
    this.#live(`read "${path}"`);
    const target = this.#resolve(path);
    const max = options.maxBytes;
    const argv = ["sh", "-c", READ_SCRIPT, "vf-read", target];
    if (max !== undefined) argv.push(String(Math.max(0, Math.floor(max))));
    const r = await this.#exec(argv);
    if (r.exitCode === READ_MISSING) {
      throw new SandboxError(`Cannot read "${path}": no such file`, {
        hint: `Looked for "${target}"`,
      });
    }
    if (r.exitCode === READ_NOT_FILE) {
      throw new SandboxError(`Cannot read "${path}": not a regular file`, {
        hint: `"${target}" is a directory or a special file`,
      });
    }
    if (r.exitCode === READ_TOO_LARGE) {
      throw tooLarge(path, Number(decodeText(r.stderr).trim()), max!);
    }
    if (r.exitCode !== 0) {
      throw new SandboxError(`Cannot read "${path}": ${decodeText(r.stderr).trim()}`);
    }
    if (max !== undefined && r.stdout.byteLength > max) {
      throw tooLarge(path, r.stdout.byteLength, max);
    }
    return r.stdout;
  }

  /** True while started, not stopped, and the sandbox runs `true`. */
  async alive(): Promise<boolean> {
    if (this.#stopped || this.#router === null || this.#handle === null) return false;
    try {
      return (await this.#exec(["true"])).exitCode === 0;
    } catch {
      return false;
    }
  }

  /** `https://` URL of the declared service port (8000), or null for any other port. */
  async expose(port: number): Promise<string | null> {
    const handle = this.#handle;
    if (handle === null || port !== SERVICE_PORT) return null;
    const res = await this.#api().sandboxGetTunnels(handle, 50);
    if (res.result?.status === M.GenericStatus.TIMEOUT) {
      throw new SandboxError("modal tunnels are not ready yet", {
        hint: "The sandbox has not opened its tunnel within 50 s; try again",
      });
    }
    const t = res.tunnels.find((x) => x.containerPort === port);
    if (!t) return null;
    return t.port === 443 ? `https://${t.host}` : `https://${t.host}:${t.port}`;
  }

  /** Drops this start's pending ledger entry (the id entry or a refusal replaced it). */
  #forgetPending(): void {
    if (this.#pendingKey === null) return;
    try {
      removePending(PROVIDER, this.#pendingKey);
      this.#pendingKey = null;
    } catch {
      // the entry stays; "vf sandboxes gc" resolves it by name
    }
  }

  #abortInflight(): void {
    for (const c of this.#inflight) c.abort();
  }

  #closeRouter(): void {
    this.#router?.close();
    this.#router = null;
  }

  /** Best-effort teardown: terminates the sandbox, logs a failure; never throws. */
  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#teardown !== null) return await this.#teardown.catch(() => {});
    const handle = this.#handle;
    if (handle === null) return;
    this.#abortInflight();
    this.#teardown = (async () => {
      try {
        await this.#api().sandboxTerminate(handle);
        forget(handle);
        this.#forgetPending();
      } catch (e) {
        this.#log(`modal: terminating sandbox ${handle} failed: ${errorMessage(e)}`);
      } finally {
        // As verifiers: the handle is consumed by teardown, confirmed or not.
        if (this.#handle === handle) this.#handle = null;
        this.#closeRouter();
      }
    })();
    try {
      await this.#teardown;
    } finally {
      this.#teardown = null;
    }
  }

  /**
   * Terminates the sandbox and returns only when Modal confirmed it:
   * idempotent once confirmed; with no handle, resolves when no id was ever published and
   * throws when one was; a held handle is terminated even without a published id; a failed
   * terminate throws and keeps the handle so the next call retries.
   */
  async stopConfirmed(): Promise<void> {
    if (this.#teardown !== null) await this.#teardown.catch(() => {});
    const id = this.#id;
    if (id !== null && id === this.#confirmedStopId) return;
    const handle = this.#handle;
    if (handle === null) {
      if (id === null) return;
      throw new SandboxError(
        "modal sandbox termination cannot be confirmed without its live handle",
        {
          hint:
            `A best-effort stop() already consumed it; check sandbox ${id} with "vf sandboxes list"`,
        },
      );
    }
    this.#abortInflight();
    try {
      await this.#api().sandboxTerminate(handle);
    } catch (e) {
      throw new SandboxError(`modal sandbox ${handle} termination failed: ${errorMessage(e)}`, {
        hint: 'The sandbox may still run; call stopConfirmed() again, or run "vf sandboxes gc"',
        cause: e,
      });
    }
    if (id !== null) this.#confirmedStopId = id;
    this.#stopped = true;
    this.#handle = null;
    this.#closeRouter();
    forget(handle);
    this.#forgetPending();
  }
}

/** gRPC codes by which Modal refuses a create outright (no sandbox was made). */
const REFUSALS: ReadonlySet<number> = new Set([
  Status.INVALID_ARGUMENT,
  Status.NOT_FOUND,
  Status.ALREADY_EXISTS,
  Status.PERMISSION_DENIED,
  Status.RESOURCE_EXHAUSTED,
  Status.FAILED_PRECONDITION,
  Status.OUT_OF_RANGE,
  Status.UNIMPLEMENTED,
  Status.UNAUTHENTICATED,
]);

function isRefusal(e: unknown): boolean {
  return e instanceof GrpcError && REFUSALS.has(e.code);
}

function forget(id: string): void {
  try {
    removeSandbox(PROVIDER, id);
  } catch {
    // the ledger entry stays; "vf sandboxes gc" will find the sandbox gone
  }
}

/**
 * Terminates a sandbox by id (for `vf sandboxes gc`): "terminated" when Modal confirmed it,
 * "gone" when Modal does not know the id (NOT_FOUND). Other failures throw.
 */
export async function terminateModalSandbox(
  id: string,
  ledgerConfig: Record<string, unknown> = {},
): Promise<"terminated" | "gone"> {
  const base = resolveModalProfile();
  const serverUrl = typeof ledgerConfig.server_url === "string" ? ledgerConfig.server_url : null;
  const environment = typeof ledgerConfig.environment === "string"
    ? ledgerConfig.environment
    : null;
  const profile = {
    ...base,
    ...(serverUrl ? { serverUrl } : {}),
    ...(environment !== null ? { environment } : {}),
  };
  try {
    await accountFor(profile).api.sandboxTerminate(id);
    return "terminated";
  } catch (e) {
    if (e instanceof GrpcError && e.code === Status.NOT_FOUND) return "gone";
    throw new SandboxError(`modal sandbox ${id} termination failed: ${errorMessage(e)}`, {
      cause: e,
    });
  }
}

/**
 * The live sandboxes a pending ledger entry's create may have made (for `vf sandboxes gc`):
 * `SandboxGetFromName` with the entry's name in its app — Modal names are unique among an
 * app's running sandboxes — so `[id]`, or `[]` when none runs under that name.
 */
export async function findPendingModalSandboxes(entry: LedgerEntry): Promise<string[]> {
  const cfg = entry.config ?? {};
  const base = resolveModalProfile();
  const serverUrl = typeof cfg.server_url === "string" ? cfg.server_url : null;
  const environment = typeof cfg.environment === "string" ? cfg.environment : null;
  const profile = {
    ...base,
    ...(serverUrl ? { serverUrl } : {}),
    ...(environment !== null ? { environment } : {}),
  };
  if (!entry.name) return [];
  try {
    const res = await accountFor(profile).api.unary(
      "SandboxGetFromName",
      M.SandboxGetFromNameRequest,
      M.SandboxGetFromNameResponse,
      {
        sandboxName: entry.name,
        appName: typeof cfg.app_name === "string" ? cfg.app_name : MODAL_APP_NAME,
        environmentName: profile.environment,
      },
    );
    return res.sandboxId ? [res.sandboxId] : [];
  } catch (e) {
    if (e instanceof GrpcError && e.code === Status.NOT_FOUND) return [];
    throw new SandboxError(`modal lookup of sandbox "${entry.name}" failed: ${errorMessage(e)}`, {
      cause: e,
    });
  }
}

function decodeText(bytes: Uint8Array): string {
  return new TextDecoder("utf-8", { ignoreBOM: true }).decode(bytes);
}

function tooLarge(path: string, size: number, max: number): SandboxError {
  return new SandboxError(
    `Cannot read "${path}": the file has ${size} bytes, more than the limit of ${max} bytes`,
    { hint: "Raise maxBytes or read a smaller file" },
  );
}

function provisioningHint(e: unknown): string | undefined {
  if (!(e instanceof GrpcError)) return undefined;
  switch (e.code) {
    case Status.UNAUTHENTICATED:
      return "Check MODAL_TOKEN_ID and MODAL_TOKEN_SECRET";
    case Status.UNAVAILABLE:
      return "Modal is unreachable; check MODAL_SERVER_URL and the network";
    case Status.ALREADY_EXISTS:
      return "A running sandbox already has this name in the app";
    default:
      return undefined;
  }
}

function execHint(e: unknown): string | undefined {
  if (e instanceof GrpcError && (e.code === Status.NOT_FOUND || e.code === Status.UNAVAILABLE)) {
    return "The sandbox may have ended (lifetime timeout or terminated)";
  }
  return undefined;
}

/** The `modal` runtime plugin. */
export default defineRuntime({
  id: "modal",
  description: "Runs each rollout in its own Modal sandbox (MODAL_TOKEN_ID/MODAL_TOKEN_SECRET)",
  isLocal: false,
  config: ModalRuntimeConfig,
  configHint: "See `vf plugins show modal` for the keys and their ranges",
  create(config, options: RuntimeCreateOptions): Runtime {
    parseGpu(config.gpu);
    return new ModalRuntime(config, {
      name: options.name,
      run: options.run,
      log: options.log,
    });
  },
  async stopById(entry: LedgerEntry, options: { log?: (message: string) => void } = {}) {
    const outcome = await terminateModalSandbox(entry.id, entry.config ?? {});
    if (outcome === "gone") options.log?.(`modal sandbox ${entry.id} was already gone`);
    forget(entry.id);
  },
  findPending: (entry: LedgerEntry) => findPendingModalSandboxes(entry),
});
