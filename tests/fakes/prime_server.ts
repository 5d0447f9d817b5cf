/**
 * A loopback fake of the Prime sandbox API for tests and benchmarks: the
 * control plane (`/api/v1/sandbox...`) and the gateway (`/gw/<ns>/<job>/...`: exec,
 * upload, download, read-file, and the Connect command session for VMs) on one real HTTP
 * server at 127.0.0.1:<port>.
 *
 * ```ts
 * const fake = await startPrimeFake();
 * fake.useEnv();                 // PRIME_API_BASE_URL / PRIME_API_KEY point at the fake
 * // ... run the prime runtime ...
 * fake.liveSandboxes();          // 0 when everything was torn down
 * await fake.close();
 * ```
 *
 * It is strict: bearer auth on every route (the API key on the control plane, the
 * sandbox's current token on the gateway), create validation with 422 as the API does,
 * unknown body fields rejected. Sandboxes follow the status machine (PENDING → RUNNING
 * after K status reads or T fake-clock ms; image builds; image failures; lifetime and
 * idle expiry on the fake clock), and commands really run, chrooted into a per-sandbox
 * root (prime_sandbox_fs.ts), in a network namespace of the sandbox's own where one can be
 * made (sandbox_netns.ts): this host's 127.0.0.1 is not theirs. Faults can be injected per request kind: an HTTP answer,
 * a delay, a connection reset, a body cut off mid-way.
 *
 * It answers as the official SDK expects the service to (`packages/prime-sandboxes/src/
 * prime_sandboxes/sandbox.py@66fb4b70`): the gateway answers 409 while a sandbox is not
 * running yet, 502 `sandbox_not_found` once it is gone (also after it died while RUNNING:
 * {@link PrimeFake.kill}), 404 with an error-code body for a missing file, and Connect
 * errors before a stream starts as plain HTTP statuses (404 `not_found`, 401
 * `unauthenticated`); `/error-context` names the cause (OOM, lifetime, image pull).
 *
 * @module
 */
import { Buffer } from "node:buffer";
import http from "node:http";
import { randomBytes } from "node:crypto";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import process from "node:process";
import {
  COMMAND_SESSION_PROTO,
  encodeSessionEvent,
  type SessionEvent,
} from "./command_session_proto.ts";
import {
  hostPath,
  isolationSupported,
  killSandboxProcesses,
  makeSandboxRoot,
  removeSandboxRoot,
  type SandboxProcess,
  spawnInSandbox,
} from "./prime_sandbox_fs.ts";
import { SandboxNetwork } from "./sandbox_netns.ts";

/** The pid a request's `CommandSessionSelector` names (0 for a tag or none: no session has it). */
function sessionPid(request: Record<string, unknown>): number {
  return (request.session as { pid?: number } | undefined)?.pid ?? 0;
}

/** Kinds of request the fake tells apart (for faults and counters). */
export type PrimeRequestKind =
  | "create"
  | "get"
  | "list"
  | "batch"
  | "delete"
  | "bulk-delete"
  | "error-context"
  | "auth"
  | "expose"
  | "logs"
  | "exec"
  | "upload"
  | "download"
  | "read-file"
  | "connect-start"
  | "connect-send-input"
  | "connect-send-signal"
  | "unknown";

/** Kinds served by the control plane. */
export const CONTROL_KINDS: ReadonlySet<PrimeRequestKind> = new Set([
  "create",
  "get",
  "list",
  "batch",
  "delete",
  "bulk-delete",
  "error-context",
  "auth",
  "expose",
  "logs",
]);

/** What an injected fault does to a matching request. */
export interface PrimeFault {
  /** Which requests: one kind or several. @default every request */
  kind?: PrimeRequestKind | PrimeRequestKind[];
  /** Only requests whose URL (path and query string) matches. */
  path?: RegExp;
  /** Only requests whose raw body (text) matches. */
  body?: RegExp;
  /** How many matching requests it affects. @default 1 */
  times?: number;
  /** Answer with this status and JSON body instead of serving the request. */
  respond?: { status: number; body?: unknown };
  /** Destroy the connection before answering (the request is not served). */
  reset?: boolean;
  /** Serve the request (its effects happen), send half the body, then drop the connection. */
  readError?: boolean;
  /** Wait this long (real ms) before serving. */
  delayMs?: number;
}

/** A request the fake received. */
export interface PrimeFakeRequest {
  kind: PrimeRequestKind;
  method: string;
  path: string;
  query: Record<string, string>;
  /** Lower-cased header names. */
  headers: Record<string, string>;
  /** Parsed JSON body, when JSON. */
  json?: unknown;
  bodyBytes: number;
  /** Wall-clock ms. */
  at: number;
  /** Ids asked about by a status request (`get`: one; `batch`: the list). */
  statusIds?: string[];
  /** A command-session Start: its `stdin` field (null when absent from the message). */
  connectStdin?: boolean | null;
}

/** One fake sandbox. */
export interface FakeSandbox {
  id: string;
  name: string;
  image: string;
  vm: boolean;
  timeoutMinutes: number;
  idleTimeoutMinutes: number | null;
  labels: string[];
  createBody: Record<string, unknown>;
  status: string;
  errorType: string | null;
  errorMessage: string | null;
  terminationReason: string | null;
  pendingImageBuildId: string | null;
  /** Fake-clock ms. */
  createdAt: number;
  startedAt: number | null;
  terminatedAt: number | null;
  lastActivity: number;
  statusReads: number;
  buildReadsLeft: number;
  gatewayLagLeft: number;
  /** DELETE answered 200 once. */
  deleted: boolean;
  /** Gone from the provider (deleted, or reaped after idle/lifetime expiry). */
  reaped: boolean;
  root: string;
  /** Its own network: commands reach its loopback, not this host's (sandbox_netns.ts). */
  net: SandboxNetwork;
}

/** Options of {@link startPrimeFake}. */
export interface PrimeFakeOptions {
  /** The API key the control plane accepts. @default "pk-fake-prime-key" */
  apiKey?: string;
  /** Status reads a new sandbox answers PENDING before RUNNING. @default 0 */
  readsUntilRunning?: number;
  /** Or: fake-clock ms after creation before RUNNING (checked on status reads). */
  msUntilRunning?: number | undefined;
  /** Images built on first use: image → status reads spent building. */
  imageBuilds?: Record<string, number>;
  /** Images that fail: image → error type (`IMAGE_PULL_FAILED`, `OOM_KILLED`). */
  failingImages?: Record<string, string>;
  /** Gateway requests answered "not ready" after RUNNING. @default 0 */
  gatewayLag?: number;
  /** How the gateway answers during the lag. @default 502 (sandbox_not_found) */
  gatewayLagStatus?: 502 | 409;
  /** What GET answers after DELETE. @default "404" */
  afterDelete?: "404" | "TERMINATED";
  /** Prefix of new sandbox ids. @default "fk" */
  idPrefix?: string;
  /** Make `status:batchGet` answer 405 (true) or the given status (the client must fall back to GETs). */
  batchUnsupported?: boolean | 404 | 405;
  /** Images whose sandboxes die at their first gateway request after RUNNING: image → error type. */
  dieAfterRunning?: Record<string, string>;
  /**
   * How the gateway answers a Connect call it refuses before any message (unknown token,
   * unknown sandbox): `http` = an HTTP error status with a Connect JSON error (404
   * `not_found`, 401 `unauthenticated`, 503 `unavailable`), `stream` = HTTP 200 and the
   * error in the end-of-stream message. @default "http"
   */
  connectRefusal?: "http" | "stream";
  /** An `error` text the command session puts on its end events (the exit code stays). */
  endEventError?: string;
  /**
   * Keep connections open between requests. With false every answer says
   * `Connection: close`, so a client never reuses a connection and counts of retries are
   * exact (a runtime's fetch may resend a request by itself when a reused connection
   * closes before the answer). @default true
   */
  keepAlive?: boolean;
  /** Lifetime of gateway tokens on the fake clock. @default 3600000 */
  tokenTtlMs?: number;
  /** `read-file` answers 413 above this many bytes (window or file). @default 16 MiB */
  readFileLimit?: number;
  /** Real-time delay of the create answer; the sandbox exists from the start. @default 0 */
  createReplyDelayMs?: number;
}

/** The fake clock: starts at the wall clock, moves only when advanced. */
export interface FakeClock {
  now(): number;
  advance(ms: number): void;
}

/** A running fake. */
export interface PrimeFake {
  /** Control-plane base URL (`http://127.0.0.1:<port>`). */
  url: string;
  apiKey: string;
  clock: FakeClock;
  sandboxes: Map<string, FakeSandbox>;
  requests: PrimeFakeRequest[];
  /** Queues a fault. */
  fault(f: PrimeFault): void;
  /** Drops queued faults. */
  clearFaults(): void;
  /** Requests received, of one kind or all. */
  count(kind?: PrimeRequestKind): number;
  /** Sandboxes neither deleted nor finished. */
  liveSandboxes(): number;
  /** Sets PRIME_API_BASE_URL/PRIME_API_KEY (and clears PRIME_BASE_URL/PRIME_TEAM_ID); returns a restore function. */
  useEnv(): () => void;
  /** Environment variables that point a child process at the fake. */
  env(): Record<string, string>;
  /**
   * Ends a sandbox as the platform does when it dies (OOM, lifetime): the status becomes
   * `status` with `errorType`, its processes are killed, the gateway answers
   * `sandbox_not_found`, and `/error-context` names the cause.
   */
  kill(id: string, how: { status?: string; errorType: string; errorMessage?: string }): void;
  /** Changes behaviour knobs at run time. */
  options: Required<Omit<PrimeFakeOptions, "msUntilRunning">> & {
    msUntilRunning?: number | undefined;
  };
  close(): Promise<void>;
}

const CREATE_FIELDS = new Set([
  "name",
  "docker_image",
  "start_command",
  "cpu_cores",
  "memory_gb",
  "disk_size_gb",
  "gpu_count",
  "gpu_type",
  "vm",
  "network_allowlist",
  "network_denylist",
  "timeout_minutes",
  "idle_timeout_minutes",
  "environment_vars",
  "secrets",
  "labels",
  "team_id",
  "region",
  "advanced_configs",
  "registry_credentials_id",
  "guaranteed",
  "idempotency_key",
]);

const EXEC_FIELDS = new Set(["command", "working_dir", "env", "sandbox_id", "timeout", "user"]);

const TERMINAL = new Set(["ERROR", "TERMINATED", "TIMEOUT"]);

type Problem = { loc: string[]; msg: string; type: string };

function isStringMap(v: unknown): boolean {
  return typeof v === "object" && v !== null && !Array.isArray(v) &&
    Object.values(v).every((x) => typeof x === "string");
}

const HOST_RE = /^(\*\.)?([A-Za-z0-9-]+\.)*[A-Za-z0-9-]+$/;
const IPV4_CIDR_RE = /^(\d{1,3}\.){3}\d{1,3}(\/\d{1,2})?$/;

/** Validates a create body as the API does (`CreateSandboxRequest`, prime_sandboxes/models.py@66fb4b70). */
export function validateCreate(b: Record<string, unknown>): Problem[] {
  const p: Problem[] = [];
  const bad = (field: string, msg: string, type = "value_error") =>
    p.push({ loc: ["body", field], msg, type });
  for (const k of Object.keys(b)) {
    if (!CREATE_FIELDS.has(k)) bad(k, "Extra inputs are not permitted", "extra_forbidden");
  }
  if (typeof b.name !== "string" || b.name === "") bad("name", "Field required", "missing");
  if (typeof b.docker_image !== "string" || b.docker_image === "") {
    bad("docker_image", "Field required", "missing");
  }
  for (const f of ["cpu_cores", "memory_gb", "disk_size_gb"]) {
    if (b[f] !== undefined && !(typeof b[f] === "number" && (b[f] as number) > 0)) {
      bad(f, "Input should be greater than 0");
    }
  }
  const vm = b.vm;
  if (vm !== undefined && typeof vm !== "boolean") bad("vm", "Input should be a valid boolean");
  const gpuCount = b.gpu_count ?? 0;
  if (!Number.isInteger(gpuCount) || (gpuCount as number) < 0) {
    bad("gpu_count", "Input should be a non-negative integer");
  } else if ((gpuCount as number) > 0) {
    if (typeof b.gpu_type !== "string" || b.gpu_type === "") {
      bad("gpu_type", "gpu_type is required when gpu_count > 0");
    }
    if (vm === false) bad("gpu_count", "GPU sandboxes require vm=true");
  } else if (b.gpu_type !== undefined) {
    bad("gpu_type", "gpu_type is only allowed when gpu_count > 0");
  }
  const timeout = b.timeout_minutes ?? 60;
  if (!Number.isInteger(timeout) || ((timeout as number) < 1 && timeout !== -1)) {
    bad("timeout_minutes", "timeout_minutes must be -1 or a positive integer");
  }
  if (b.idle_timeout_minutes !== undefined) {
    const idle = b.idle_timeout_minutes;
    if (!Number.isInteger(idle) || (idle as number) < 1) {
      bad("idle_timeout_minutes", "idle_timeout_minutes must be an integer >= 1");
    } else if (
      Number.isInteger(timeout) && (timeout as number) > 0 && (idle as number) > (timeout as number)
    ) {
      bad("idle_timeout_minutes", "idle_timeout_minutes must not exceed timeout_minutes");
    }
  }
  if (b.start_command !== undefined) {
    const sc = b.start_command;
    if (vm === true) {
      const ok = typeof sc === "object" && sc !== null &&
        typeof (sc as { executable?: unknown }).executable === "string" &&
        Array.isArray((sc as { args?: unknown }).args);
      if (!ok) bad("start_command", "VM sandboxes need start_command {executable, args[]}");
    } else if (typeof sc !== "string") bad("start_command", "Input should be a valid string");
  }
  if (b.guaranteed !== undefined && typeof b.guaranteed !== "boolean") {
    bad("guaranteed", "Input should be a valid boolean");
  }
  if (b.guaranteed === true && vm !== false) bad("guaranteed", "guaranteed requires vm=false");
  if (b.registry_credentials_id !== undefined && vm !== false) {
    bad("registry_credentials_id", "registry credentials require vm=false");
  }
  const allow = b.network_allowlist;
  const deny = b.network_denylist;
  if (allow !== undefined && deny !== undefined) {
    bad("network_allowlist", "allowlist and denylist are mutually exclusive");
  }
  for (const [f, list] of [["network_allowlist", allow], ["network_denylist", deny]] as const) {
    if (list === undefined) continue;
    if (vm !== true) bad(f, "network lists require vm=true");
    if (!Array.isArray(list) || list.length > 256) {
      bad(f, "must be a list of at most 256 entries");
      continue;
    }
    for (const e of list) {
      if (typeof e !== "string" || !(HOST_RE.test(e) || IPV4_CIDR_RE.test(e))) {
        bad(f, `invalid entry ${JSON.stringify(e)}`);
      }
    }
  }
  if (
    b.labels !== undefined &&
    !(Array.isArray(b.labels) && b.labels.every((l) => typeof l === "string"))
  ) {
    bad("labels", "Input should be a list of strings");
  }
  for (const f of ["environment_vars", "secrets"]) {
    if (b[f] !== undefined && !isStringMap(b[f])) bad(f, "Input should be a map of strings");
  }
  for (const f of ["team_id", "region", "idempotency_key"]) {
    if (b[f] !== undefined && typeof b[f] !== "string") bad(f, "Input should be a valid string");
  }
  return p;
}

function json(res: http.ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(text),
  });
  res.end(text);
}

/** The gateway's body for a missing file: an error code, as its other errors carry. */
function fileNotFound(path: string | undefined): Record<string, unknown> {
  return { error: "file_not_found", message: `File not found: ${path ?? ""}`, code: 404 };
}

function parseQuery(url: URL): Record<string, string> {
  const q: Record<string, string> = {};
  url.searchParams.forEach((v, k) => (q[k] = v));
  return q;
}

function classify(method: string, path: string): PrimeRequestKind {
  if (path.startsWith("/gw/")) {
    const op = path.split("/").slice(4).join("/");
    if (op === "exec") return "exec";
    if (op === "upload") return "upload";
    if (op === "download") return "download";
    if (op === "read-file") return "read-file";
    if (op === "command_session.CommandSession/Start") return "connect-start";
    if (op === "command_session.CommandSession/SendInput") return "connect-send-input";
    if (op === "command_session.CommandSession/SendSignal") return "connect-send-signal";
    return "unknown";
  }
  if (path === "/api/v1/sandbox") {
    return method === "POST"
      ? "create"
      : method === "GET"
      ? "list"
      : method === "DELETE"
      ? "bulk-delete"
      : "unknown";
  }
  if (path === "/api/v1/sandbox/status:batchGet") return "batch";
  const m = path.match(/^\/api\/v1\/sandbox\/([^/]+)(\/.*)?$/);
  if (!m) return "unknown";
  const sub = m[2] ?? "";
  if (sub === "") return method === "GET" ? "get" : method === "DELETE" ? "delete" : "unknown";
  if (sub === "/error-context") return "error-context";
  if (sub === "/auth") return "auth";
  if (sub === "/expose") return "expose";
  if (sub === "/logs") return "logs";
  return "unknown";
}

/** Splits a multipart/form-data body into parts. */
export function parseMultipart(
  body: Uint8Array,
  contentType: string,
): { name: string; filename: string | null; data: Uint8Array }[] | null {
  const m = contentType.match(/boundary=(?:"([^"]+)"|([^;]+))/i);
  if (!m) return null;
  const boundary = new TextEncoder().encode(`--${m[1] ?? m[2]}`);
  const buf = Buffer.from(body);
  const parts: { name: string; filename: string | null; data: Uint8Array }[] = [];
  let pos = buf.indexOf(boundary);
  if (pos < 0) return null;
  for (;;) {
    pos += boundary.length;
    if (buf[pos] === 0x2d && buf[pos + 1] === 0x2d) break; // closing --
    pos += 2; // CRLF
    const headerEnd = buf.indexOf("\r\n\r\n", pos);
    if (headerEnd < 0) return null;
    const headers = buf.subarray(pos, headerEnd).toString("utf8");
    const next = buf.indexOf(boundary, headerEnd + 4);
    if (next < 0) return null;
    const data = new Uint8Array(buf.subarray(headerEnd + 4, next - 2));
    const disp = headers.match(/content-disposition:[^\r\n]*/i)?.[0] ?? "";
    const name = disp.match(/\bname="([^"]*)"/i)?.[1] ?? "";
    const filename = disp.match(/\bfilename="([^"]*)"/i)?.[1] ?? null;
    parts.push({ name, filename, data });
    pos = next;
  }
  return parts;
}

/** Starts the fake on 127.0.0.1 with an OS-chosen port. */
export async function startPrimeFake(options: PrimeFakeOptions = {}): Promise<PrimeFake> {
  if (!isolationSupported()) {
    throw new Error(
      "the Prime fake needs `unshare --user --map-root-user --mount` (Linux user namespaces)",
    );
  }
  const opts: PrimeFake["options"] = {
    apiKey: options.apiKey ?? "pk-fake-prime-key",
    readsUntilRunning: options.readsUntilRunning ?? 0,
    msUntilRunning: options.msUntilRunning,
    imageBuilds: options.imageBuilds ?? {},
    failingImages: options.failingImages ?? {},
    gatewayLag: options.gatewayLag ?? 0,
    gatewayLagStatus: options.gatewayLagStatus ?? 502,
    afterDelete: options.afterDelete ?? "404",
    batchUnsupported: options.batchUnsupported ?? false,
    dieAfterRunning: options.dieAfterRunning ?? {},
    connectRefusal: options.connectRefusal ?? "http",
    endEventError: options.endEventError ?? "",
    keepAlive: options.keepAlive ?? true,
    tokenTtlMs: options.tokenTtlMs ?? 3_600_000,
    readFileLimit: options.readFileLimit ?? 16 * 1024 * 1024,
    idPrefix: options.idPrefix ?? "fk",
    createReplyDelayMs: options.createReplyDelayMs ?? 0,
  };
  let clockNow = Date.now();
  const clock: FakeClock = {
    now: () => clockNow,
    advance: (ms: number) => {
      clockNow += ms;
    },
  };
  const rootDir = mkdtempSync(join(tmpdir(), "vf-prime-fake-"));
  const sandboxes = new Map<string, FakeSandbox>();
  const idempotency = new Map<string, string>();
  const tokens = new Map<string, { sandboxId: string; expiresAt: number }>();
  const requests: PrimeFakeRequest[] = [];
  let faults: (PrimeFault & { left: number })[] = [];
  const sessions = new Map<number, { sandboxId: string; proc: SandboxProcess }>();
  const running = new Set<SandboxProcess>();
  let url = "";

  const ns = "ns-fake";
  const jobOf = (id: string) => `job-${id}`;

  function finish(sb: FakeSandbox, status: string, errorType: string | null, reason: string): void {
    sb.status = status;
    sb.errorType = errorType;
    sb.terminationReason = reason;
    sb.terminatedAt = clock.now();
    killSandboxProcesses(sb.id);
    sb.net.close();
  }

  /** A sandbox that dies (OOM, lifetime) after it ran. */
  function die(sb: FakeSandbox, status: string, errorType: string, message: string | null): void {
    finish(sb, status, errorType, errorType.toLowerCase());
    sb.errorMessage = message ??
      (errorType === "OOM_KILLED"
        ? "Container exceeded its memory limit"
        : errorType === "TIMEOUT"
        ? "Sandbox exceeded its maximum runtime"
        : errorType);
  }

  /** Moves a sandbox along its state machine; `read` = this is a status read. */
  function refresh(sb: FakeSandbox, read: boolean): void {
    if (sb.reaped || TERMINAL.has(sb.status)) return;
    const now = clock.now();
    if (sb.status === "PENDING" || sb.status === "PROVISIONING") {
      if (!read) return;
      sb.statusReads++;
      if (sb.buildReadsLeft > 0) {
        sb.buildReadsLeft--;
        if (sb.buildReadsLeft === 0) sb.pendingImageBuildId = null;
        return;
      }
      const byReads = opts.msUntilRunning === undefined &&
        sb.statusReads > opts.readsUntilRunning + (opts.imageBuilds[sb.image] ?? 0);
      const byTime = opts.msUntilRunning !== undefined && now - sb.createdAt >= opts.msUntilRunning;
      if (!byReads && !byTime) {
        if (sb.statusReads > 1) sb.status = "PROVISIONING";
        return;
      }
      const failure = opts.failingImages[sb.image];
      if (failure) {
        sb.status = "ERROR";
        sb.errorType = failure;
        sb.errorMessage = failure === "IMAGE_PULL_FAILED"
          ? `Failed to pull image ${sb.image}`
          : "The sandbox ran out of memory";
        sb.terminatedAt = now;
        return;
      }
      sb.status = "RUNNING";
      sb.startedAt = now;
      sb.lastActivity = now;
      sb.gatewayLagLeft = opts.gatewayLag;
      return;
    }
    if (sb.status === "RUNNING" && sb.startedAt !== null) {
      if (sb.timeoutMinutes > 0 && now - sb.startedAt >= sb.timeoutMinutes * 60_000) {
        finish(sb, "TIMEOUT", "TIMEOUT", "lifetime expired");
        sb.reaped = true;
      } else if (
        sb.idleTimeoutMinutes !== null && now - sb.lastActivity >= sb.idleTimeoutMinutes * 60_000
      ) {
        finish(sb, "TERMINATED", null, "idle timeout");
        sb.reaped = true;
      }
    }
  }

  function record(sb: FakeSandbox): Record<string, unknown> {
    const iso = (t: number | null) => (t === null ? null : new Date(t).toISOString());
    const b = sb.createBody;
    return {
      id: sb.id,
      name: sb.name,
      dockerImage: sb.image,
      startCommand: b.start_command ?? null,
      cpuCores: b.cpu_cores ?? 1,
      memoryGB: b.memory_gb ?? 1,
      diskSizeGB: b.disk_size_gb ?? 5,
      diskMountPath: "/",
      gpuCount: b.gpu_count ?? 0,
      gpuType: b.gpu_type ?? null,
      vm: sb.vm,
      status: sb.status,
      timeoutMinutes: sb.timeoutMinutes,
      idleTimeoutMinutes: sb.idleTimeoutMinutes,
      terminationReason: sb.terminationReason,
      labels: sb.labels,
      createdAt: iso(sb.createdAt),
      updatedAt: iso(clock.now()),
      startedAt: iso(sb.startedAt),
      terminatedAt: iso(sb.terminatedAt),
      errorType: sb.errorType,
      errorMessage: sb.errorMessage,
      teamId: b.team_id ?? null,
      region: b.region ?? null,
      pendingImageBuildId: sb.pendingImageBuildId,
    };
  }

  function statusItem(sb: FakeSandbox) {
    return {
      sandbox_id: sb.id,
      status: sb.status,
      error_type: sb.errorType,
      error_message: sb.errorMessage,
      pending_image_build_id: sb.pendingImageBuildId,
    };
  }

  function visible(id: string): FakeSandbox | null {
    const sb = sandboxes.get(id);
    if (!sb) return null;
    if (sb.reaped && opts.afterDelete === "404") return null;
    return sb;
  }

  // ---- control plane ----
  function control(
    kind: PrimeRequestKind,
    path: string,
    body: Uint8Array,
    res: http.ServerResponse,
    rec: PrimeFakeRequest,
    query: URLSearchParams = new URLSearchParams(),
  ): void {
    const parseBody = (): Record<string, unknown> | null => {
      try {
        const j = JSON.parse(new TextDecoder().decode(body));
        return j && typeof j === "object" && !Array.isArray(j) ? j : null;
      } catch {
        return null;
      }
    };
    const idMatch = path.match(/^\/api\/v1\/sandbox\/([^/]+)/);
    const id = idMatch ? decodeURIComponent(idMatch[1]!) : "";
    switch (kind) {
      case "create": {
        const b = parseBody();
        if (!b) {
          return json(res, 422, {
            detail: [{
              loc: ["body"],
              msg: "Input should be a JSON object",
              type: "model_attributes_type",
            }],
          });
        }
        const problems = validateCreate(b);
        if (problems.length) return json(res, 422, { detail: problems });
        const key = typeof b.idempotency_key === "string" ? b.idempotency_key : null;
        if (key && idempotency.has(key)) {
          const again = sandboxes.get(idempotency.get(key)!)!;
          return json(res, 200, record(again));
        }
        const sid = `${opts.idPrefix}${randomBytes(10).toString("hex")}`;
        const root = join(rootDir, sid);
        makeSandboxRoot(root);
        const image = b.docker_image as string;
        const builds = opts.imageBuilds[image] ?? 0;
        const sb: FakeSandbox = {
          id: sid,
          name: b.name as string,
          image,
          vm: b.vm === true,
          timeoutMinutes: (b.timeout_minutes as number | undefined) ?? 60,
          idleTimeoutMinutes: (b.idle_timeout_minutes as number | undefined) ?? null,
          labels: (b.labels as string[] | undefined) ?? [],
          createBody: b,
          status: "PENDING",
          errorType: null,
          errorMessage: null,
          terminationReason: null,
          pendingImageBuildId: builds > 0 ? `build-${randomBytes(4).toString("hex")}` : null,
          createdAt: clock.now(),
          startedAt: null,
          terminatedAt: null,
          lastActivity: clock.now(),
          statusReads: 0,
          buildReadsLeft: builds,
          gatewayLagLeft: 0,
          deleted: false,
          reaped: false,
          root,
          net: new SandboxNetwork(sid),
        };
        sandboxes.set(sid, sb);
        if (key) idempotency.set(key, sid);
        if (opts.createReplyDelayMs > 0) {
          // the sandbox exists at once; only the answer is slow (a client may die waiting)
          const timer = setTimeout(() => json(res, 200, record(sb)), opts.createReplyDelayMs);
          res.on("close", () => clearTimeout(timer));
          return;
        }
        return json(res, 200, record(sb));
      }
      case "get": {
        rec.statusIds = [id];
        const sb = visible(id);
        if (!sb) return json(res, 404, { detail: "Sandbox not found" });
        refresh(sb, true);
        return json(res, 200, record(sb));
      }
      case "list": {
        // GET /api/v1/sandbox: page, per_page, status, labels (repeated: all must be
        // present), is_active (true = not terminal), team_id; FastAPI-style 422s
        const intParam = (name: string, fallback: number, max: number): number | null => {
          const raw = query.get(name);
          if (raw === null) return fallback;
          const n = Number(raw);
          return /^\d+$/.test(raw) && n >= 1 && n <= max ? n : null;
        };
        const page = intParam("page", 1, 1_000_000);
        const perPage = intParam("per_page", 50, 100);
        const active = query.get("is_active");
        if (
          page === null || perPage === null || (active !== null && !/^(true|false)$/.test(active))
        ) {
          return json(res, 422, {
            detail: [{
              loc: ["query", page === null ? "page" : perPage === null ? "per_page" : "is_active"],
              msg: "Input should be a valid integer (page >= 1, 1 <= per_page <= 100) or boolean",
              type: "value_error",
            }],
          });
        }
        const labels = query.getAll("labels");
        const status = query.get("status");
        const team = query.get("team_id");
        const all = [...sandboxes.values()].filter((s) =>
          !(s.reaped && opts.afterDelete === "404")
        );
        for (const s of all) refresh(s, false);
        const list = all.filter((s) =>
          (active === null || (active === "true") === !TERMINAL.has(s.status)) &&
          (status === null || s.status === status) &&
          labels.every((l) => s.labels.includes(l)) &&
          (team === null || s.createBody.team_id === team)
        ).sort((a, b) => b.createdAt - a.createdAt);
        const slice = list.slice((page - 1) * perPage, page * perPage);
        return json(res, 200, {
          sandboxes: slice.map(record),
          total: list.length,
          page,
          perPage,
          hasNext: page * perPage < list.length,
        });
      }
      case "batch": {
        if (opts.batchUnsupported === 404) return json(res, 404, { detail: "Not Found" });
        if (opts.batchUnsupported) return json(res, 405, { detail: "Method Not Allowed" });
        const b = parseBody();
        const ids = b?.sandbox_ids;
        if (
          !Array.isArray(ids) || ids.length < 1 || ids.length > 100 ||
          !ids.every((x) => typeof x === "string") || new Set(ids).size !== ids.length ||
          Object.keys(b!).some((k) => k !== "sandbox_ids")
        ) {
          return json(res, 422, {
            detail: [{
              loc: ["body", "sandbox_ids"],
              msg: "1 to 100 unique ids",
              type: "value_error",
            }],
          });
        }
        rec.statusIds = ids as string[];
        const statuses = [];
        const errors = [];
        for (const sid of ids as string[]) {
          const sb = visible(sid);
          if (!sb) {
            errors.push({ sandbox_id: sid, code: "NOT_FOUND", message: "Sandbox not found" });
            continue;
          }
          refresh(sb, true);
          statuses.push(statusItem(sb));
        }
        return json(res, 200, { statuses, errors });
      }
      case "delete": {
        const sb = sandboxes.get(id);
        if (!sb) return json(res, 404, { detail: "Sandbox not found" });
        refresh(sb, false);
        if (sb.reaped) return json(res, 404, { detail: "Sandbox not found" });
        sb.deleted = true;
        sb.reaped = true;
        if (!TERMINAL.has(sb.status)) finish(sb, "TERMINATED", null, "deleted");
        else killSandboxProcesses(sb.id);
        sb.net.close();
        removeSandboxRoot(sb.root);
        return json(res, 200, {});
      }
      case "error-context": {
        const sb = visible(id);
        if (!sb) return json(res, 404, { detail: "Sandbox not found" });
        refresh(sb, false);
        return json(res, 200, {
          status: sb.status,
          errorType: sb.errorType,
          errorMessage: sb.errorMessage,
        });
      }
      case "auth": {
        const sb = visible(id);
        if (!sb) return json(res, 404, { detail: "Sandbox not found" });
        refresh(sb, false);
        const token = `gwt-${randomBytes(16).toString("hex")}`;
        const expiresAt = clock.now() + opts.tokenTtlMs;
        tokens.set(token, { sandboxId: sb.id, expiresAt });
        return json(res, 200, {
          gateway_url: `${url}/gw`,
          user_ns: ns,
          job_id: jobOf(sb.id),
          token,
          expires_at: new Date(expiresAt).toISOString(),
          is_vm: sb.vm,
        });
      }
      case "expose": {
        const sb = visible(id);
        if (!sb) return json(res, 404, { detail: "Sandbox not found" });
        const b = parseBody();
        if (!b || !Number.isInteger(b.port)) {
          return json(res, 422, {
            detail: [{ loc: ["body", "port"], msg: "Field required", type: "missing" }],
          });
        }
        if (sb.vm) {
          return json(res, 400, { detail: "Port exposure is not supported for VM sandboxes" });
        }
        return json(res, 200, {
          exposure_id: `exp-${randomBytes(4).toString("hex")}`,
          sandbox_id: sb.id,
          port: b.port,
          name: b.name ?? null,
          url: `https://${sb.id}-${b.port}.fake.prime.host/`,
          tls_socket: `${sb.id}-${b.port}.fake.prime.host:443`,
          protocol: b.protocol ?? "HTTP",
        });
      }
      case "logs": {
        const sb = visible(id);
        if (!sb) return json(res, 404, { detail: "Sandbox not found" });
        return json(res, 200, { logs: "" });
      }
      default:
        return json(res, 404, { detail: "Not Found" });
    }
  }

  // ---- gateway ----
  function gatewaySandbox(
    path: string,
    headers: http.IncomingHttpHeaders,
  ): { sb?: FakeSandbox; status?: number; body?: unknown } {
    const parts = path.split("/"); // "", "gw", ns, job, ...
    const job = parts[3] ?? "";
    const auth = headers.authorization ?? "";
    const tok = tokens.get(auth.replace(/^Bearer /, ""));
    if (
      !auth.startsWith("Bearer ") || !tok || tok.expiresAt <= clock.now() ||
      jobOf(tok.sandboxId) !== job || parts[2] !== ns
    ) {
      return { status: 401, body: { detail: "Invalid or expired token" } };
    }
    const sb = sandboxes.get(tok.sandboxId)!;
    refresh(sb, false);
    const dies = opts.dieAfterRunning[sb.image];
    if (dies && sb.status === "RUNNING") die(sb, "ERROR", dies, null);
    // gone: deleted, reaped, or ended after it ran (a sandbox that never ran is "not running")
    if (
      sb.reaped || sb.status === "TERMINATED" || sb.status === "TIMEOUT" ||
      (sb.status === "ERROR" && sb.startedAt !== null)
    ) {
      return {
        status: 502,
        body: {
          error: "sandbox_not_found",
          sandboxId: sb.id,
          message: "Sandbox not found",
          code: 502,
        },
      };
    }
    if (sb.status !== "RUNNING") {
      return { status: 409, body: { detail: `Sandbox is ${sb.status}` } };
    }
    if (sb.gatewayLagLeft > 0) {
      sb.gatewayLagLeft--;
      return opts.gatewayLagStatus === 502
        ? {
          status: 502,
          body: {
            error: "sandbox_not_found",
            sandboxId: sb.id,
            message: "Sandbox not registered yet",
            code: 502,
          },
        }
        : { status: 409, body: { detail: "Sandbox gateway not ready" } };
    }
    return { sb };
  }

  async function runCommand(
    sb: FakeSandbox,
    argv: string[],
    cwd: string | null,
    env: Record<string, string>,
    timeoutMs: number,
    onEvent?: (ev: SessionEvent) => void,
    stdinPipe = false,
  ): Promise<{ stdout: Uint8Array[]; stderr: Uint8Array[]; code: number; timedOut: boolean }> {
    const stdout: Uint8Array[] = [];
    const stderr: Uint8Array[] = [];
    const proc = spawnInSandbox(argv, {
      network: sb.net,
      sandboxId: sb.id,
      root: sb.root,
      cwd,
      env,
      stdin: stdinPipe,
      onStdout: (
        c,
      ) => (onEvent ? onEvent({ kind: "data", stream: "stdout", bytes: c }) : stdout.push(c)),
      onStderr: (
        c,
      ) => (onEvent ? onEvent({ kind: "data", stream: "stderr", bytes: c }) : stderr.push(c)),
    });
    running.add(proc);
    const pid = proc.child.pid ?? 0;
    if (onEvent) {
      sessions.set(pid, { sandboxId: sb.id, proc });
      onEvent({ kind: "start", pid });
    }
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      proc.kill();
    }, Math.max(1, timeoutMs));
    const r = await proc.done;
    clearTimeout(timer);
    running.delete(proc);
    sessions.delete(pid);
    sb.lastActivity = clock.now();
    const code = r.signal
      ? 128 + (r.signal === "SIGKILL" ? 9 : r.signal === "SIGTERM" ? 15 : 1)
      : r.code ?? 1;
    return { stdout, stderr, code, timedOut };
  }

  async function gateway(
    kind: PrimeRequestKind,
    req: http.IncomingMessage,
    url: URL,
    body: Uint8Array,
    res: http.ServerResponse,
    rec: PrimeFakeRequest,
  ): Promise<void> {
    if (kind === "connect-start") return await connectStart(req, url, body, res, rec);
    if (kind === "connect-send-input" || kind === "connect-send-signal") {
      return connectUnary(kind, req, url, body, res);
    }
    const g = gatewaySandbox(url.pathname, req.headers);
    if (!g.sb) return json(res, g.status!, g.body);
    const sb = g.sb;
    const q = parseQuery(url);
    switch (kind) {
      case "exec": {
        if (req.method !== "POST") return json(res, 405, { detail: "Method Not Allowed" });
        if (sb.vm) {
          return json(res, 400, {
            detail: "exec is not available for VM sandboxes; use the command session",
          });
        }
        let b: Record<string, unknown>;
        try {
          b = JSON.parse(new TextDecoder().decode(body));
        } catch {
          return json(res, 422, {
            detail: [{ loc: ["body"], msg: "Invalid JSON", type: "json_invalid" }],
          });
        }
        const problems: string[] = [];
        for (const k of Object.keys(b)) if (!EXEC_FIELDS.has(k)) problems.push(`extra field ${k}`);
        if (typeof b.command !== "string" || b.command === "") problems.push("command is required");
        if (
          b.working_dir !== undefined && b.working_dir !== null && typeof b.working_dir !== "string"
        ) problems.push("working_dir must be a string");
        if (b.env !== undefined && !isStringMap(b.env)) {
          problems.push("env must be a map of strings");
        }
        if (b.sandbox_id !== sb.id) problems.push("sandbox_id does not match");
        if (b.timeout !== undefined && !(typeof b.timeout === "number" && b.timeout > 0)) {
          problems.push("timeout must be positive");
        }
        if (problems.length) {
          return json(res, 422, {
            detail: problems.map((m) => ({ loc: ["body"], msg: m, type: "value_error" })),
          });
        }
        const timeoutS = (b.timeout as number | undefined) ?? 300;
        const r = await runCommand(
          sb,
          ["/bin/sh", "-c", b.command as string],
          (b.working_dir as string | null) ?? null,
          (b.env as Record<string, string>) ?? {},
          timeoutS * 1000,
        );
        if (r.timedOut) return json(res, 408, { detail: `Command timed out after ${timeoutS}s` });
        const dec = (c: Uint8Array[]) => new TextDecoder().decode(Buffer.concat(c));
        return json(res, 200, { stdout: dec(r.stdout), stderr: dec(r.stderr), exit_code: r.code });
      }
      case "upload": {
        if (req.method !== "POST") return json(res, 405, { detail: "Method Not Allowed" });
        if (q.sandbox_id !== sb.id) return json(res, 422, { detail: "sandbox_id does not match" });
        const target = q.path ? hostPath(sb.root, q.path) : null;
        if (!target) return json(res, 422, { detail: "path must be absolute" });
        const parts = parseMultipart(body, req.headers["content-type"] ?? "");
        const file = parts?.find((p) => p.name === "file");
        if (!file || file.filename === null) {
          return json(res, 422, { detail: "multipart part 'file' is required" });
        }
        if (!existsSync(dirname(target)) || !statSync(dirname(target)).isDirectory()) {
          return json(res, 400, { detail: `Parent directory of ${q.path} does not exist` });
        }
        if (existsSync(target) && statSync(target).isDirectory()) {
          return json(res, 400, { detail: `${q.path} is a directory` });
        }
        writeFileSync(target, file.data);
        sb.lastActivity = clock.now();
        return json(res, 200, {
          success: true,
          path: q.path,
          size: file.data.byteLength,
          timestamp: new Date(clock.now()).toISOString(),
        });
      }
      case "download": {
        if (req.method !== "GET") return json(res, 405, { detail: "Method Not Allowed" });
        if (q.sandbox_id !== sb.id) return json(res, 422, { detail: "sandbox_id does not match" });
        const target = q.path ? hostPath(sb.root, q.path) : null;
        if (!target) return json(res, 422, { detail: "path must be absolute" });
        if (!existsSync(target)) return json(res, 404, fileNotFound(q.path));
        if (!statSync(target).isFile()) return json(res, 400, { detail: "Not a regular file" });
        const data = readFileSync(target);
        res.writeHead(200, {
          "content-type": "application/octet-stream",
          "content-length": data.byteLength,
        });
        res.end(data);
        return;
      }
      case "read-file": {
        if (req.method !== "GET") return json(res, 405, { detail: "Method Not Allowed" });
        const target = q.path ? hostPath(sb.root, q.path) : null;
        if (!target) return json(res, 422, { detail: "path must be absolute" });
        if (!existsSync(target) || !statSync(target).isFile()) {
          return json(res, 404, fileNotFound(q.path));
        }
        const data = readFileSync(target);
        const total = data.byteLength;
        if (sb.vm) {
          if (total > opts.readFileLimit) return json(res, 413, { detail: "File too large" });
          return json(res, 200, { content: data.toString("utf8"), size: total });
        }
        let offset = q.offset !== undefined ? Number(q.offset) : 0;
        const length = q.length !== undefined ? Number(q.length) : total;
        if (!Number.isInteger(offset) || !Number.isInteger(length) || length < 0) {
          return json(res, 422, { detail: "offset and length must be integers" });
        }
        if (offset < 0) offset = Math.max(0, total + offset);
        const end = Math.min(total, offset + length);
        const slice = data.subarray(Math.min(offset, total), end);
        if (slice.byteLength > opts.readFileLimit) {
          return json(res, 413, { detail: "File too large" });
        }
        return json(res, 200, {
          content: slice.toString("utf8"),
          size: slice.byteLength,
          total_size: total,
          offset: Math.min(offset, total),
          truncated: end < total || offset > 0,
        });
      }
      default:
        return json(res, 404, { detail: "Not Found" });
    }
  }

  function connectError(
    res: http.ServerResponse,
    status: number,
    code: string,
    message: string,
  ): void {
    json(res, status, { code, message });
  }

  function connectUnary(
    kind: PrimeRequestKind,
    req: http.IncomingMessage,
    url: URL,
    body: Uint8Array,
    res: http.ServerResponse,
  ): void {
    if (req.headers["content-type"] !== "application/proto") {
      return connectError(res, 415, "invalid_argument", "expected application/proto");
    }
    const g = gatewaySandbox(url.pathname, req.headers);
    if (!g.sb) {
      if (g.status === 401) {
        return connectError(res, 401, "unauthenticated", "invalid or expired token");
      }
      if (g.status === 502) return connectError(res, 404, "not_found", "sandbox not found");
      return connectError(res, 503, "unavailable", "sandbox not ready");
    }
    if (!g.sb.vm) {
      return connectError(res, 501, "unimplemented", "command sessions are VM-only");
    }
    try {
      if (kind === "connect-send-signal") {
        const r = COMMAND_SESSION_PROTO.decode("SendSignalRequest", body);
        const pid = sessionPid(r);
        const s = sessions.get(pid);
        if (!s || s.sandboxId !== g.sb.id) {
          return connectError(res, 404, "not_found", `no session with pid ${pid}`);
        }
        if (r.signal !== 9 && r.signal !== 15) {
          return connectError(res, 400, "invalid_argument", "unknown signal");
        }
        try {
          process.kill(-pid, r.signal === 9 ? "SIGKILL" : "SIGTERM");
        } catch {
          // exited meanwhile
        }
      } else {
        const r = COMMAND_SESSION_PROTO.decode("SendInputRequest", body);
        const pid = sessionPid(r);
        const s = sessions.get(pid);
        if (!s || s.sandboxId !== g.sb.id) {
          return connectError(res, 404, "not_found", `no session with pid ${pid}`);
        }
        if (!s.proc.child.stdin) {
          return connectError(
            res,
            400,
            "failed_precondition",
            "stdin is not enabled for this session",
          );
        }
        const input = (r.input ?? {}) as { stdin?: Uint8Array; pty?: Uint8Array };
        s.proc.child.stdin.write(input.stdin ?? input.pty ?? new Uint8Array());
      }
    } catch (e) {
      return connectError(
        res,
        400,
        "invalid_argument",
        `bad request message: ${(e as Error).message}`,
      );
    }
    res.writeHead(200, { "content-type": "application/proto", "content-length": 0 });
    res.end();
  }

  async function connectStart(
    req: http.IncomingMessage,
    url: URL,
    body: Uint8Array,
    res: http.ServerResponse,
    rec: PrimeFakeRequest,
  ): Promise<void> {
    if (req.headers["content-type"] !== "application/connect+proto") {
      return connectError(res, 415, "invalid_argument", "expected application/connect+proto");
    }
    if (req.headers["connect-protocol-version"] !== "1") {
      return connectError(res, 400, "invalid_argument", "missing Connect-Protocol-Version: 1");
    }
    const timeoutHeader = req.headers["connect-timeout-ms"];
    const timeoutMs = typeof timeoutHeader === "string" && /^\d{1,10}$/.test(timeoutHeader)
      ? Number(timeoutHeader)
      : 300_000;
    const frame = (flags: number, payload: Uint8Array) => {
      const out = Buffer.alloc(5 + payload.byteLength);
      out[0] = flags;
      out.writeUInt32BE(payload.byteLength, 1);
      Buffer.from(payload).copy(out, 5);
      return out;
    };
    const endStream = (error?: { code: string; message: string }) =>
      frame(0x02, new TextEncoder().encode(JSON.stringify(error ? { error } : {})));
    const g = gatewaySandbox(url.pathname, req.headers);
    if (!g.sb) {
      const [status, code] = g.status === 401
        ? [401, "unauthenticated"]
        : g.status === 502
        ? [404, "not_found"]
        : [503, "unavailable"];
      if (opts.connectRefusal === "http") {
        return connectError(res, status, code, JSON.stringify(g.body));
      }
      res.writeHead(200, { "content-type": "application/connect+proto" });
      res.end(endStream({ code, message: JSON.stringify(g.body) }));
      return;
    }
    res.writeHead(200, { "content-type": "application/connect+proto" });
    const sb = g.sb;
    if (!sb.vm) {
      res.end(
        endStream({
          code: "unimplemented",
          message: "command sessions are only available on VM sandboxes",
        }),
      );
      return;
    }
    if (
      body.byteLength < 5 || body[0] !== 0 ||
      Buffer.from(body).readUInt32BE(1) !== body.byteLength - 5
    ) {
      res.end(
        endStream({
          code: "invalid_argument",
          message: "expected exactly one uncompressed envelope",
        }),
      );
      return;
    }
    const start = COMMAND_SESSION_PROTO.decode("StartRequest", body.subarray(5)) as {
      command?: { cmd: string; args: string[]; envs: Record<string, string>; cwd?: string };
      stdin?: boolean;
    };
    rec.connectStdin = start.stdin ?? null;
    if (!start.command?.cmd) {
      res.end(endStream({ code: "invalid_argument", message: "command.cmd is required" }));
      return;
    }
    const r = await runCommand(
      sb,
      [start.command.cmd, ...start.command.args],
      start.command.cwd ?? null,
      start.command.envs,
      timeoutMs,
      (ev) => res.write(frame(0, encodeSessionEvent(ev))),
      start.stdin === true,
    );
    if (r.timedOut) {
      res.end(
        endStream({ code: "deadline_exceeded", message: `deadline of ${timeoutMs}ms exceeded` }),
      );
      return;
    }
    res.write(
      frame(
        0,
        encodeSessionEvent({
          kind: "end",
          exitCode: r.code,
          exited: true,
          status: "exited",
          ...(opts.endEventError ? { error: opts.endEventError } : {}),
        }),
      ),
    );
    res.end(endStream());
  }

  // ---- server ----
  const server = http.createServer((req, res) => {
    const chunks: Uint8Array[] = [];
    req.on("data", (c: Uint8Array) => chunks.push(c));
    req.on("end", () => {
      void handle(req, res, new Uint8Array(Buffer.concat(chunks))).catch((e) => {
        if (!res.headersSent) json(res, 500, { detail: `fake error: ${(e as Error).message}` });
        else res.destroy();
      });
    });
  });

  async function handle(
    req: http.IncomingMessage,
    res: http.ServerResponse,
    body: Uint8Array,
  ): Promise<void> {
    const u = new URL(req.url ?? "/", "http://127.0.0.1");
    const method = req.method ?? "GET";
    if (!opts.keepAlive) res.setHeader("connection", "close");
    const kind = classify(method, u.pathname);
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(req.headers)) if (typeof v === "string") headers[k] = v;
    let parsed: unknown;
    if ((headers["content-type"] ?? "").includes("json")) {
      try {
        parsed = JSON.parse(new TextDecoder().decode(body));
      } catch {
        parsed = undefined;
      }
    }
    const rec: PrimeFakeRequest = {
      kind,
      method,
      path: u.pathname,
      query: parseQuery(u),
      headers,
      json: parsed,
      bodyBytes: body.byteLength,
      at: Date.now(),
    };
    requests.push(rec);

    const text = new TextDecoder().decode(body);
    const fault = faults.find((f) =>
      f.left > 0 &&
      (f.kind === undefined || (Array.isArray(f.kind) ? f.kind.includes(kind) : f.kind === kind)) &&
      (f.path === undefined || f.path.test(u.pathname + u.search)) &&
      (f.body === undefined || f.body.test(text))
    );
    if (fault) {
      fault.left--;
      faults = faults.filter((f) => f.left > 0);
      if (fault.delayMs) await new Promise((r) => setTimeout(r, fault.delayMs));
      if (fault.reset) {
        req.socket.destroy();
        return;
      }
      if (fault.respond) return json(res, fault.respond.status, fault.respond.body ?? {});
      if (fault.readError) {
        // serve the request, but cut its body off half-way
        (res as { end: unknown }).end = (chunk?: unknown) => {
          const bytes = typeof chunk === "string"
            ? Buffer.from(chunk)
            : Buffer.from((chunk as Uint8Array | undefined) ?? []);
          // headers first, so even a 1-byte body is cut short
          res.flushHeaders();
          res.write(bytes.subarray(0, Math.floor(bytes.byteLength / 2)));
          setTimeout(() => req.socket.destroy(), 20);
          return res;
        };
      }
    }

    if (CONTROL_KINDS.has(kind) || u.pathname.startsWith("/api/")) {
      if (headers.authorization !== `Bearer ${opts.apiKey}`) {
        return json(res, 401, { detail: "Invalid API key" });
      }
      return control(kind, u.pathname, body, res, rec, u.searchParams);
    }
    if (u.pathname.startsWith("/gw/")) return await gateway(kind, req, u, body, res, rec);
    return json(res, 404, { detail: "Not Found" });
  }

  // idle keep-alive connections outlive the clients' pools, as at a real API: a server that
  // closes them first races clients reusing them (ECONNRESET on a request already sent)
  server.keepAliveTimeout = 300_000;
  server.headersTimeout = 301_000;
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const fake: PrimeFake = {
    url,
    apiKey: opts.apiKey,
    clock,
    sandboxes,
    requests,
    options: opts,
    fault(f) {
      faults.push({ ...f, left: f.times ?? 1 });
    },
    clearFaults() {
      faults = [];
    },
    kill(id, how) {
      const sb = sandboxes.get(id);
      if (!sb) throw new Error(`no fake sandbox ${id}`);
      die(sb, how.status ?? "ERROR", how.errorType, how.errorMessage ?? null);
    },
    count(kind) {
      return kind === undefined ? requests.length : requests.filter((r) => r.kind === kind).length;
    },
    liveSandboxes() {
      let n = 0;
      for (const sb of sandboxes.values()) {
        refresh(sb, false);
        if (!sb.reaped && !TERMINAL.has(sb.status)) n++;
      }
      return n;
    },
    env() {
      return {
        PRIME_API_BASE_URL: url,
        PRIME_API_KEY: opts.apiKey,
        PRIME_BASE_URL: "",
        PRIME_TEAM_ID: "",
      };
    },
    useEnv() {
      const keys = ["PRIME_API_BASE_URL", "PRIME_API_KEY", "PRIME_BASE_URL", "PRIME_TEAM_ID"];
      const saved = Object.fromEntries(keys.map((k) => [k, process.env[k]]));
      process.env.PRIME_API_BASE_URL = url;
      process.env.PRIME_API_KEY = opts.apiKey;
      delete process.env.PRIME_BASE_URL;
      delete process.env.PRIME_TEAM_ID;
      return () => {
        for (const k of keys) {
          if (saved[k] === undefined) delete process.env[k];
          else process.env[k] = saved[k];
        }
      };
    },
    async close() {
      for (const p of running) p.kill();
      for (const sb of sandboxes.values()) {
        killSandboxProcesses(sb.id);
        sb.net.close();
      }
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        (server as { closeAllConnections?: () => void }).closeAllConnections?.();
      });
      rmSync(rootDir, { recursive: true, force: true, maxRetries: 3 });
    },
  };
  mkdirSync(rootDir, { recursive: true });
  return fake;
}
