/**
 * A loopback fake of Modal's gRPC services, for tests: one h2c server on
 * 127.0.0.1 hosts both the control plane (`modal.client.ModalClient`) and the task command
 * router (`modal.task_command_router.TaskCommandRouter`). It is reached exactly like the
 * real service: `MODAL_SERVER_URL`, `MODAL_TOKEN_ID`, `MODAL_TOKEN_SECRET` (see
 * {@link ModalFake.env}).
 *
 * What it models:
 * - auth: the token pair on every control-plane call, a JWT from `AuthTokenGet` whose `exp`
 *   follows the fake clock on every other call, a per-task router JWT (`authorization:
 *   Bearer`) on router calls; UNAUTHENTICATED otherwise;
 * - apps, registry images (a build followed through `ImageJoinStreaming`), ephemeral
 *   secrets, sandboxes with the `created → running → finished` state machine, lifetimes
 *   (`timeout_secs`) and idle timeouts on a controllable clock;
 * - exec through the router for real: each sandbox has a temporary directory and its
 *   declared workdir maps onto it (paths in argv and the exec workdir are rewritten), the
 *   commands run on this machine, in a network namespace of the sandbox's own where one
 *   can be made (sandbox_netns.ts), with stdin, stdout and stderr over the router's
 *   offset-addressed RPCs;
 * - strict validation (missing fields, bad values, unknown ids) and fault injection
 *   (status codes, delays, stream resets, connection drops, errors after messages).
 *
 * Every call is recorded (method, metadata, decoded request, field paths on the wire).
 *
 * @module
 */
import { randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import type * as M from "../../plugins/runtimes/modal/messages.ts";
import { GrpcStatusError, startGrpcServer } from "./grpc_server.ts";
import type { GrpcCall, GrpcHandler } from "./grpc_server.ts";
import { FakeProcess, killTagged, SANDBOX_TAG_VAR } from "./modal_processes.ts";
import { SandboxNetwork } from "./sandbox_netns.ts";
import type { ExitStatus } from "./modal_processes.ts";
import {
  CONTROL_PROTO,
  GenericStatus,
  ObjectCreationType,
  ROUTER_PROTO,
  StdioConfig,
  StdioFd,
} from "./modal_proto.ts";
import { wirePaths } from "./protobuf_wire.ts";

/** gRPC codes used by the fake. */
export const Code = {
  OK: 0,
  CANCELLED: 1,
  UNKNOWN: 2,
  INVALID_ARGUMENT: 3,
  DEADLINE_EXCEEDED: 4,
  NOT_FOUND: 5,
  ALREADY_EXISTS: 6,
  FAILED_PRECONDITION: 9,
  INTERNAL: 13,
  UNAVAILABLE: 14,
  UNAUTHENTICATED: 16,
} as const;

/** One recorded call. */
export interface RecordedCall {
  /** `control` or `router`. */
  service: "control" | "router";
  method: string;
  metadata: Record<string, string>;
  /** The request decoded with the runtime's schema. */
  request: Record<string, unknown>;
  /** Field paths present on the wire (see `wirePaths`). */
  wire: string[];
  /** The status the call ended with (null while running). */
  status: number | null;
}

/** A fault to inject into the next matching calls. */
export interface Fault {
  /** Method name, e.g. `SandboxTerminate`. */
  method: string;
  /** How many calls it applies to. @default 1 */
  times?: number;
  /** End the call with this status (after `afterMessages` messages of a stream). */
  code?: number;
  message?: string;
  /** For streams: let this many messages through first, then fail in the trailers. */
  afterMessages?: number;
  /** Wait this long (real time) before handling the call. */
  delayMs?: number;
  /** Reset the stream (no status) or destroy the whole connection. */
  drop?: "stream" | "connection";
}

/** Behaviour switches (mutable at any time). */
export interface ModalFakeKnobs {
  /** `SandboxGetTaskId` answers without a task id this many times per sandbox first. */
  taskIdAfterPolls: number;
  /** Never answer a task id (the sandbox looks stuck before scheduling). */
  omitTaskId: boolean;
  /** `SandboxCreate` answers without `sandbox_id`. */
  omitSandboxId: boolean;
  /** `TaskGetCommandRouterAccess` fails FAILED_PRECONDITION (router not enabled). */
  routerDisabled: boolean;
  /** Scheme of the router URL handed out (the real service uses https). */
  routerUrlScheme: "https" | "http";
  /** Log items streamed by a fresh image build before its result. */
  imageBuildLogItems: number;
  /** Image tags whose build fails (FAILURE with an exception). */
  failImageTags: Set<string>;
  /** The next N `ImageJoinStreaming` calls end after their logs without a result. */
  joinEndsWithoutResult: number;
  /** Real-time delay before `SandboxCreate` answers (slow creation). */
  createDelayMs: number;
  /**
   * Real-time delay of the `SandboxCreate` answer after the sandbox exists (a client may die
   * waiting for it; the sandbox runs on, as at Modal). Ends early when the client cancels.
   */
  createReplyDelayMs: number;
  /** `TaskExecWait` gives up with DEADLINE_EXCEEDED after this long (a server-side cap). */
  execWaitCapMs: number | null;
  /** The next stdout/stderr stream aborts with UNAVAILABLE after this many bytes (once). */
  stdioAbortAfterBytes: number | null;
  /** The next router call fails UNAUTHENTICATED (an expired router JWT), once. */
  expireRouterJwtOnce: boolean;
  /** Finished sandboxes are forgotten: later calls about them get NOT_FOUND. */
  forgetFinished: boolean;
  /** `SandboxGetTunnels` answers `result.status = TIMEOUT`. */
  tunnelsTimeout: boolean;
  /** Max bytes per `TaskExecStdioRead` message. */
  stdioChunkBytes: number;
}

interface ExecState {
  execId: string;
  process: FakeProcess;
}

interface SandboxState {
  id: string;
  appId: string;
  name: string | undefined;
  definition: M.SandboxDefinition;
  createdAt: number;
  lastActivity: number;
  taskId: string;
  polls: number;
  result: M.GenericResult | null;
  dir: string;
  /** Host directory the declared workdir maps to. */
  hostWorkdir: string;
  execs: Map<string, ExecState>;
  routerJwts: Set<string>;
  /** Its own network: commands reach its loopback, not this host's (sandbox_netns.ts). */
  net: SandboxNetwork;
}

/** Options of {@link startModalFake}. */
export interface ModalFakeOptions {
  tokenId?: string;
  tokenSecret?: string;
  /** Lifetime of `AuthTokenGet` tokens on the fake clock. @default 1200 s */
  authTokenLifetimeS?: number;
  /** Lifetime of router JWTs on the fake clock. @default 3600 s */
  routerJwtLifetimeS?: number;
  knobs?: Partial<ModalFakeKnobs>;
}

/** A running Modal fake. */
export interface ModalFake {
  readonly url: string;
  readonly port: number;
  /** The variables that point a client (ours or the official SDK) at the fake. */
  readonly env: Record<string, string>;
  readonly knobs: ModalFakeKnobs;
  readonly calls: RecordedCall[];
  /** The fake clock: real time plus an offset. */
  readonly clock: { now(): number; advance(ms: number): void };
  /** Queues a fault. */
  inject(fault: Fault): void;
  /** Sandboxes not finished (lifetimes are applied first). */
  liveSandboxes(): number;
  /** The ids of all sandboxes ever created. */
  sandboxIds(): string[];
  /** A sandbox's definition and status, for assertions. */
  sandbox(id: string):
    | { definition: M.SandboxDefinition; result: M.GenericResult | null; name?: string | undefined }
    | undefined;
  /** How each exec of a sandbox ended so far (null while it runs), in start order. */
  execExits(id: string): (ExitStatus | null)[];
  /** Calls of one method. */
  callsOf(method: string): RecordedCall[];
  /** Resolves once `method` has been called `count` times in all. */
  waitForCalls(method: string, count: number): Promise<void>;
  /** Ends every sandbox (and its processes) and stops the server. */
  close(): Promise<void>;
}

const CONTROL = "/modal.client.ModalClient/";
const ROUTER = "/modal.task_command_router.TaskCommandRouter/";

/** Request/response message names of the methods the fake serves. */
const CONTROL_TYPES: Record<string, [string, string]> = {
  AuthTokenGet: ["AuthTokenGetRequest", "AuthTokenGetResponse"],
  AppGetOrCreate: ["AppGetOrCreateRequest", "AppGetOrCreateResponse"],
  ImageGetOrCreate: ["ImageGetOrCreateRequest", "ImageGetOrCreateResponse"],
  ImageJoinStreaming: ["ImageJoinStreamingRequest", "ImageJoinStreamingResponse"],
  SecretGetOrCreate: ["SecretGetOrCreateRequest", "SecretGetOrCreateResponse"],
  SandboxCreate: ["SandboxCreateRequest", "SandboxCreateResponse"],
  SandboxGetTaskId: ["SandboxGetTaskIdRequest", "SandboxGetTaskIdResponse"],
  SandboxGetFromName: ["SandboxGetFromNameRequest", "SandboxGetFromNameResponse"],
  TaskGetCommandRouterAccess: [
    "TaskGetCommandRouterAccessRequest",
    "TaskGetCommandRouterAccessResponse",
  ],
  SandboxWait: ["SandboxWaitRequest", "SandboxWaitResponse"],
  SandboxTerminate: ["SandboxTerminateRequest", "SandboxTerminateResponse"],
  SandboxGetTunnels: ["SandboxGetTunnelsRequest", "SandboxGetTunnelsResponse"],
};
const ROUTER_TYPES: Record<string, [string, string]> = {
  TaskExecStart: ["TaskExecStartRequest", "TaskExecStartResponse"],
  TaskExecStdinWrite: ["TaskExecStdinWriteRequest", "TaskExecStdinWriteResponse"],
  TaskExecStdioRead: ["TaskExecStdioReadRequest", "TaskExecStdioReadResponse"],
  TaskExecWait: ["TaskExecWaitRequest", "TaskExecWaitResponse"],
  TaskExecPoll: ["TaskExecWaitRequest", "TaskExecWaitResponse"],
};

function fail(code: number, message: string): never {
  throw new GrpcStatusError(code, message);
}

function b64url(s: string): string {
  return btoa(s).replace(/=+$/, "").replace(/\+/g, "-").replace(/\//g, "_");
}

function makeJwt(claims: Record<string, unknown>): string {
  return `${b64url('{"alg":"none","typ":"JWT"}')}.${b64url(JSON.stringify(claims))}.c2ln`;
}

function jwtClaims(token: string): Record<string, unknown> | null {
  const parts = token.split(".");
  if (parts.length !== 3) return null;
  try {
    let p = parts[1]!.replace(/-/g, "+").replace(/_/g, "/");
    while (p.length % 4) p += "=";
    return JSON.parse(atob(p));
  } catch {
    return null;
  }
}

function newId(prefix: string): string {
  return `${prefix}-${randomBytes(10).toString("hex")}`;
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** Starts the fake on 127.0.0.1 with an OS-chosen port. */
export async function startModalFake(options: ModalFakeOptions = {}): Promise<ModalFake> {
  const tokenId = options.tokenId ?? "ak-fake-token-id";
  const tokenSecret = options.tokenSecret ?? "as-fake-token-secret";
  const authLifetimeS = options.authTokenLifetimeS ?? 1200;
  const routerLifetimeS = options.routerJwtLifetimeS ?? 3600;
  const knobs: ModalFakeKnobs = {
    taskIdAfterPolls: 0,
    omitTaskId: false,
    omitSandboxId: false,
    routerDisabled: false,
    routerUrlScheme: "https",
    imageBuildLogItems: 2,
    failImageTags: new Set(),
    joinEndsWithoutResult: 0,
    createDelayMs: 0,
    createReplyDelayMs: 0,
    execWaitCapMs: null,
    stdioAbortAfterBytes: null,
    expireRouterJwtOnce: false,
    forgetFinished: false,
    tunnelsTimeout: false,
    stdioChunkBytes: 16 * 1024,
    ...options.knobs,
  };
  let offsetMs = 0;
  const clock = {
    now: () => Date.now() + offsetMs,
    advance: (ms: number) => {
      offsetMs += ms;
      sweepLifetimes();
    },
  };
  const root = mkdtempSync(join(tmpdir(), "vf-modal-fake-"));
  const calls: RecordedCall[] = [];
  const faults: Fault[] = [];
  const callWaiters: { method: string; count: number; resolve: () => void }[] = [];
  const authTokens = new Set<string>();
  const apps = new Map<string, string>(); // `${env}\n${name}` -> app id
  const appIds = new Set<string>();
  const images = new Map<string, { id: string; tag: string; result: M.GenericResult | null }>();
  const imageById = new Map<string, { id: string; tag: string; result: M.GenericResult | null }>();
  const secrets = new Map<string, Record<string, string>>();
  const sandboxes = new Map<string, SandboxState>();
  const byTask = new Map<string, SandboxState>();
  /** The port of the server, known once it listens (the router URL names it). */
  let routerPort = 0;

  // ------------------------------------------------------------------ helpers

  const notifyWaiters = () => {
    for (const w of [...callWaiters]) {
      if (calls.filter((c) => c.method === w.method).length >= w.count) {
        callWaiters.splice(callWaiters.indexOf(w), 1);
        w.resolve();
      }
    }
  };

  const takeFault = (method: string): Fault | null => {
    const i = faults.findIndex((f) => f.method === method);
    if (i < 0) return null;
    const f = faults[i]!;
    const left = (f.times ?? 1) - 1;
    if (left <= 0) faults.splice(i, 1);
    else faults[i] = { ...f, times: left };
    return f;
  };

  const finishSandbox = (sb: SandboxState, result: M.GenericResult) => {
    if (sb.result !== null) return;
    sb.result = result;
    for (const e of sb.execs.values()) e.process.killGroup();
    killTagged(sb.id);
    sb.net.close();
    for (const e of sb.execs.values()) {
      e.process.done.then(() => {}, () => {});
    }
    rmSync(sb.dir, { recursive: true, force: true });
  };

  /** Applies the lifetime and idle timeout of a sandbox on the fake clock. */
  const refresh = (sb: SandboxState) => {
    if (sb.result !== null) return;
    const now = clock.now();
    const d = sb.definition;
    if (d.timeoutSecs > 0 && now - sb.createdAt >= d.timeoutSecs * 1000) {
      finishSandbox(sb, result(GenericStatus.TIMEOUT, "sandbox lifetime exceeded"));
    } else if (
      d.idleTimeoutSecs !== undefined && now - sb.lastActivity >= d.idleTimeoutSecs * 1000
    ) {
      finishSandbox(sb, result(GenericStatus.IDLE_TIMEOUT, "sandbox idle timeout"));
    }
  };

  /**
   * As at Modal, a sandbox ends when its lifetime (or idle timeout) runs out, whether or not
   * a call arrives: its processes are killed then (an exec waiting on one sees SIGKILL, 137
   * through the SDK), not when the next call happens to look.
   */
  function sweepLifetimes(): void {
    for (const sb of sandboxes.values()) refresh(sb);
  }
  const lifetimeTimer = setInterval(sweepLifetimes, 25);
  (lifetimeTimer as { unref?: () => void }).unref?.();

  const result = (status: number, exception = ""): M.GenericResult => ({
    status,
    exception,
    exitcode: 0,
    traceback: "",
  });

  const sandboxOrFail = (id: string): SandboxState => {
    if (!id) fail(Code.INVALID_ARGUMENT, "sandbox_id is required");
    const sb = sandboxes.get(id);
    if (sb === undefined) fail(Code.NOT_FOUND, `Sandbox ${id} not found`);
    refresh(sb);
    if (sb.result !== null && knobs.forgetFinished) fail(Code.NOT_FOUND, `Sandbox ${id} not found`);
    return sb;
  };

  const mapper = (sb: SandboxState) => {
    const w = sb.definition.workdir;
    if (w === undefined || w === "/" || w === "") return (s: string) => s;
    const re = new RegExp(`(^|[^A-Za-z0-9._/-])${escapeRegExp(w)}(?=$|/|[^A-Za-z0-9._-])`, "g");
    return (s: string) => s.replace(re, (_m, pre: string) => pre + sb.hostWorkdir);
  };

  // ------------------------------------------------------------- control plane

  const checkControlAuth = (method: string, md: Record<string, string>) => {
    if (md["x-modal-token-id"] !== tokenId || md["x-modal-token-secret"] !== tokenSecret) {
      fail(Code.UNAUTHENTICATED, "invalid or missing token id/secret");
    }
    if (!md["x-modal-client-type"] || !md["x-modal-client-version"]) {
      fail(Code.INVALID_ARGUMENT, "missing x-modal-client-type or x-modal-client-version");
    }
    if (method === "AuthTokenGet") return;
    const token = md["x-modal-auth-token"];
    if (!token || !authTokens.has(token)) {
      fail(Code.UNAUTHENTICATED, "missing or unknown auth token");
    }
    const exp = Number(jwtClaims(token)?.exp ?? 0);
    if (clock.now() / 1000 >= exp) fail(Code.UNAUTHENTICATED, "auth token expired");
  };

  type Handler<Req> = (
    req: Req,
    call: GrpcCall,
    send: (msg: object) => void,
  ) => Promise<object | void> | object | void;
  const control: Record<string, Handler<never>> = {
    AuthTokenGet: () => {
      const token = makeJwt({ exp: Math.floor(clock.now() / 1000) + authLifetimeS, sub: tokenId });
      authTokens.add(token);
      return { token };
    },
    AppGetOrCreate: (req: M.AppGetOrCreateRequest) => {
      if (!req.appName) fail(Code.INVALID_ARGUMENT, "app_name is required");
      const key = `${req.environmentName}\n${req.appName}`;
      let id = apps.get(key);
      if (id === undefined) {
        if (req.objectCreationType !== ObjectCreationType.CREATE_IF_MISSING) {
          fail(Code.NOT_FOUND, `App '${req.appName}' not found`);
        }
        id = newId("ap");
        apps.set(key, id);
        appIds.add(id);
      }
      return { appId: id };
    },
    ImageGetOrCreate: (req: M.ImageGetOrCreateRequest) => {
      if (!appIds.has(req.appId)) fail(Code.NOT_FOUND, `App ${req.appId} not found`);
      const img = req.image;
      if (!img || img.dockerfileCommands.length === 0) {
        fail(Code.INVALID_ARGUMENT, "image.dockerfile_commands is required");
      }
      const first = img.dockerfileCommands[0]!;
      if (!/^FROM \S+/.test(first)) {
        fail(Code.INVALID_ARGUMENT, `first command must be FROM: "${first}"`);
      }
      if (!req.builderVersion) fail(Code.INVALID_ARGUMENT, "builder_version is required");
      for (const base of img.baseImages) {
        const b = imageById.get(base.imageId);
        if (!b) fail(Code.NOT_FOUND, `base image ${base.imageId} not found`);
        if (b.result?.status !== GenericStatus.SUCCESS) {
          fail(Code.FAILED_PRECONDITION, `base image ${base.imageId} is not built`);
        }
        if (first !== `FROM ${base.dockerTag}`) {
          fail(Code.INVALID_ARGUMENT, `base image tag "${base.dockerTag}" is not the FROM`);
        }
      }
      const key = JSON.stringify([img.dockerfileCommands, img.baseImages, req.builderVersion]);
      let entry = images.get(key);
      if (entry === undefined) {
        const tag = img.baseImages.length > 0
          ? (imageById.get(img.baseImages[0]!.imageId)?.tag ?? "")
          : first.slice(5).trim();
        entry = { id: newId("im"), tag, result: null };
        images.set(key, entry);
        imageById.set(entry.id, entry);
        return { imageId: entry.id };
      }
      return { imageId: entry.id, result: entry.result ?? undefined };
    },
    ImageJoinStreaming: (req: M.ImageJoinStreamingRequest, _call, send) => {
      const entry = imageById.get(req.imageId);
      if (!entry) fail(Code.NOT_FOUND, `Image ${req.imageId} not found`);
      if (!(req.timeout > 0)) fail(Code.INVALID_ARGUMENT, "timeout must be positive");
      const last = req.lastEntryId ? Number(req.lastEntryId) : 0;
      for (let i = last + 1; i <= knobs.imageBuildLogItems; i++) {
        send({
          taskLogs: [{ data: `step ${i}: building ${entry.tag}\n`, fileDescriptor: 1 }],
          entryId: String(i),
        });
      }
      if (knobs.joinEndsWithoutResult > 0) {
        knobs.joinEndsWithoutResult--;
        return;
      }
      if (entry.result === null) {
        entry.result = knobs.failImageTags.has(entry.tag)
          ? { ...result(GenericStatus.FAILURE, `pull access denied for ${entry.tag}`) }
          : result(GenericStatus.SUCCESS);
      }
      send({ result: entry.result, entryId: String(knobs.imageBuildLogItems + 1), eof: true });
    },
    SecretGetOrCreate: (req: M.SecretGetOrCreateRequest) => {
      if (req.objectCreationType === ObjectCreationType.EPHEMERAL) {
        if (req.deploymentName) fail(Code.INVALID_ARGUMENT, "an ephemeral secret has no name");
        const id = newId("st");
        secrets.set(id, { ...req.envDict });
        return { secretId: id };
      }
      fail(Code.NOT_FOUND, `Secret '${req.deploymentName}' not found`);
    },
    SandboxCreate: async (req: M.SandboxCreateRequest, call) => {
      if (!appIds.has(req.appId)) fail(Code.NOT_FOUND, `App ${req.appId} not found`);
      const d = req.definition;
      if (!d) fail(Code.INVALID_ARGUMENT, "definition is required");
      const img = imageById.get(d.imageId);
      if (!img) fail(Code.NOT_FOUND, `Image ${d.imageId} not found`);
      if (img.result?.status !== GenericStatus.SUCCESS) {
        fail(Code.FAILED_PRECONDITION, `Image ${d.imageId} is not built`);
      }
      if (d.timeoutSecs === 0) fail(Code.INVALID_ARGUMENT, "timeout_secs must be positive");
      if (d.workdir !== undefined && !d.workdir.startsWith("/")) {
        fail(Code.INVALID_ARGUMENT, `workdir must be absolute: "${d.workdir}"`);
      }
      for (const s of d.secretIds) {
        if (!secrets.has(s)) fail(Code.NOT_FOUND, `Secret ${s} not found`);
      }
      if (d.name !== undefined) {
        if (!/^[A-Za-z0-9._-]{1,64}$/.test(d.name)) {
          fail(Code.INVALID_ARGUMENT, `invalid sandbox name "${d.name}"`);
        }
        for (const other of sandboxes.values()) {
          refresh(other);
          if (other.appId === req.appId && other.name === d.name && other.result === null) {
            fail(Code.ALREADY_EXISTS, `Sandbox with name '${d.name}' already exists`);
          }
        }
      }
      if (knobs.createDelayMs > 0) await new Promise((r) => setTimeout(r, knobs.createDelayMs));
      const id = newId("sb");
      const dir = join(root, id);
      const hostWorkdir = d.workdir ? join(dir, "fs", d.workdir) : join(dir, "fs");
      mkdirSync(hostWorkdir, { recursive: true });
      const sb: SandboxState = {
        id,
        appId: req.appId,
        name: d.name,
        definition: d,
        createdAt: clock.now(),
        lastActivity: clock.now(),
        taskId: newId("ta"),
        polls: 0,
        result: null,
        dir,
        hostWorkdir,
        execs: new Map(),
        routerJwts: new Set(),
        net: new SandboxNetwork(id),
      };
      sandboxes.set(id, sb);
      byTask.set(sb.taskId, sb);
      const answerAt = Date.now() + knobs.createReplyDelayMs;
      while (Date.now() < answerAt && !call.cancelled) {
        await new Promise((r) => setTimeout(r, 20));
      }
      return knobs.omitSandboxId ? {} : { sandboxId: id };
    },
    SandboxGetTaskId: (req: M.SandboxGetTaskIdRequest) => {
      const sb = sandboxOrFail(req.sandboxId);
      if (sb.result !== null) return { taskResult: sb.result };
      sb.polls++;
      if (knobs.omitTaskId || sb.polls <= knobs.taskIdAfterPolls) return {};
      return { taskId: sb.taskId };
    },
    SandboxGetFromName: (req: M.SandboxGetFromNameRequest) => {
      const appId = apps.get(`${req.environmentName}\n${req.appName}`);
      for (const sb of sandboxes.values()) {
        refresh(sb);
        if (sb.appId === appId && sb.name === req.sandboxName && sb.result === null) {
          return { sandboxId: sb.id };
        }
      }
      fail(Code.NOT_FOUND, `Sandbox '${req.sandboxName}' not found`);
    },
    TaskGetCommandRouterAccess: (req: M.TaskGetCommandRouterAccessRequest) => {
      const sb = byTask.get(req.taskId);
      if (!sb) fail(Code.NOT_FOUND, `Task ${req.taskId} not found`);
      refresh(sb);
      if (sb.result !== null) fail(Code.NOT_FOUND, `Task ${req.taskId} has finished`);
      if (knobs.routerDisabled) fail(Code.FAILED_PRECONDITION, "command router is not enabled");
      const jwt = makeJwt({
        exp: Math.floor(clock.now() / 1000) + routerLifetimeS,
        task_id: sb.taskId,
        n: newId("j"),
      });
      sb.routerJwts.add(jwt);
      return { jwt, url: `${knobs.routerUrlScheme}://127.0.0.1:${routerPort}` };
    },
    SandboxWait: async (req: M.SandboxWaitRequest, call) => {
      const sb = sandboxOrFail(req.sandboxId);
      const until = Date.now() + Math.max(0, req.timeout) * 1000;
      while (sb.result === null && Date.now() < until && !call.cancelled) {
        await new Promise((r) => setTimeout(r, 20));
        refresh(sb);
      }
      return sb.result !== null ? { result: sb.result } : {};
    },
    SandboxTerminate: (req: M.SandboxTerminateRequest) => {
      const sb = sandboxOrFail(req.sandboxId);
      if (sb.result !== null) return { existingResult: sb.result };
      finishSandbox(sb, result(GenericStatus.TERMINATED));
      return {};
    },
    SandboxGetTunnels: (req: M.SandboxGetTunnelsRequest) => {
      const sb = sandboxOrFail(req.sandboxId);
      if (knobs.tunnelsTimeout) return { result: result(GenericStatus.TIMEOUT), tunnels: [] };
      const ports = sb.definition.openPorts?.ports ?? [];
      return {
        result: result(GenericStatus.SUCCESS),
        tunnels: ports.map((p) => ({
          host: `${sb.id}.fake.modal.host`,
          port: 443,
          containerPort: p.port,
          unencryptedHost: p.unencrypted ? `${sb.id}.fake.modal.host` : undefined,
          unencryptedPort: p.unencrypted ? 40000 + p.port : undefined,
        })),
      };
    },
  };

  // -------------------------------------------------------------------- router

  const routerSandbox = (taskId: string, md: Record<string, string>): SandboxState => {
    const auth = md["authorization"] ?? "";
    if (!auth.startsWith("Bearer ")) fail(Code.UNAUTHENTICATED, "missing router bearer token");
    if (knobs.expireRouterJwtOnce) {
      knobs.expireRouterJwtOnce = false;
      fail(Code.UNAUTHENTICATED, "router token expired");
    }
    const jwt = auth.slice(7);
    const claims = jwtClaims(jwt);
    if (!claims) fail(Code.UNAUTHENTICATED, "malformed router token");
    if (!taskId) fail(Code.INVALID_ARGUMENT, "task_id is required");
    const sb = byTask.get(taskId);
    if (!sb || !sb.routerJwts.has(jwt)) {
      fail(Code.UNAUTHENTICATED, "router token is not valid for this task");
    }
    if (clock.now() / 1000 >= Number(claims.exp)) {
      fail(Code.UNAUTHENTICATED, "router token expired");
    }
    refresh(sb);
    if (sb.result !== null) fail(Code.NOT_FOUND, `Task ${taskId} has finished`);
    sb.lastActivity = clock.now();
    return sb;
  };

  const execOf = (sb: SandboxState, execId: string): ExecState => {
    if (!execId) fail(Code.INVALID_ARGUMENT, "exec_id is required");
    const e = sb.execs.get(execId);
    if (!e) fail(Code.NOT_FOUND, `Exec ${execId} not found`);
    return e;
  };

  const router: Record<string, Handler<never>> = {
    TaskExecStart: (req: M.TaskExecStartRequest, call) => {
      const sb = routerSandbox(req.taskId, call.metadata);
      if (!req.execId) fail(Code.INVALID_ARGUMENT, "exec_id is required");
      if (sb.execs.has(req.execId)) return {}; // idempotent
      if (req.commandArgs.length === 0) fail(Code.INVALID_ARGUMENT, "command_args is required");
      if (req.workdir !== undefined && !req.workdir.startsWith("/")) {
        fail(Code.INVALID_ARGUMENT, `workdir must be absolute: "${req.workdir}"`);
      }
      const env: Record<string, string> = {
        PATH: process.env.PATH ?? "/usr/local/bin:/usr/bin:/bin",
        HOME: join(sb.dir, "fs"),
        LANG: "C.UTF-8",
      };
      for (const s of req.secretIds) {
        const vars = secrets.get(s);
        if (!vars) fail(Code.NOT_FOUND, `Secret ${s} not found`);
        Object.assign(env, vars);
      }
      env[SANDBOX_TAG_VAR] = sb.id;
      const map = mapper(sb);
      const cwd = req.workdir !== undefined ? map(req.workdir) : sb.hostWorkdir;
      const proc = new FakeProcess(req.commandArgs.map(map), {
        network: (argv) => sb.net.wrap(argv),
        cwd,
        env,
        stdout: req.stdoutConfig === StdioConfig.PIPE ? "pipe" : "devnull",
        stderr: req.stderrConfig === StdioConfig.PIPE
          ? "pipe"
          : req.stderrConfig === StdioConfig.STDOUT
          ? "stdout"
          : "devnull",
        timeoutS: req.timeoutSecs,
      });
      sb.execs.set(req.execId, { execId: req.execId, process: proc });
      return {};
    },
    TaskExecStdinWrite: (req: M.TaskExecStdinWriteRequest, call) => {
      const sb = routerSandbox(req.taskId, call.metadata);
      const e = execOf(sb, req.execId);
      if (!e.process.writeStdin(req.offset, req.data, req.eof)) {
        fail(Code.INVALID_ARGUMENT, `stdin offset ${req.offset} is past ${e.process.stdinOffset}`);
      }
      return {};
    },
    TaskExecStdioRead: async (req: M.TaskExecStdioReadRequest, call, send) => {
      const sb = routerSandbox(req.taskId, call.metadata);
      const e = execOf(sb, req.execId);
      if (req.fileDescriptor !== StdioFd.STDOUT && req.fileDescriptor !== StdioFd.STDERR) {
        fail(Code.INVALID_ARGUMENT, `bad file_descriptor ${req.fileDescriptor}`);
      }
      const log = req.fileDescriptor === StdioFd.STDOUT ? e.process.stdout : e.process.stderr;
      let offset = req.offset;
      let abortAt = knobs.stdioAbortAfterBytes !== null
        ? offset + knobs.stdioAbortAfterBytes
        : null;
      if (abortAt !== null) knobs.stdioAbortAfterBytes = null;
      for (;;) {
        if (call.cancelled) return;
        if (sb.result !== null) fail(Code.UNAVAILABLE, "task finished");
        const changed = log.changed();
        const pending = log.slice(offset);
        let pos = 0;
        while (pos < pending.byteLength) {
          let n = Math.min(knobs.stdioChunkBytes, pending.byteLength - pos);
          if (abortAt !== null) n = Math.min(n, abortAt - offset);
          if (n > 0) {
            send({ data: pending.subarray(pos, pos + n) });
            pos += n;
            offset += n;
          }
          if (abortAt !== null && offset >= abortAt) {
            abortAt = null;
            fail(Code.UNAVAILABLE, "stdio stream interrupted");
          }
        }
        if (log.closed && offset >= log.length) return;
        await Promise.race([changed, call.closed]);
      }
    },
    TaskExecWait: async (req: M.TaskExecWaitRequest, call) => {
      const sb = routerSandbox(req.taskId, call.metadata);
      const e = execOf(sb, req.execId);
      const cap = knobs.execWaitCapMs;
      const timers: ReturnType<typeof setTimeout>[] = [];
      const capped = cap === null
        ? new Promise<never>(() => {})
        : new Promise<"cap">((r) => timers.push(setTimeout(() => r("cap"), cap)));
      const outcome = await Promise.race([
        e.process.done,
        capped,
        call.closed.then(() => "gone" as const),
      ]);
      for (const t of timers) clearTimeout(t);
      if (outcome === "cap") fail(Code.DEADLINE_EXCEEDED, "exec wait timed out on the server");
      if (outcome === "gone") return;
      // killed with its sandbox: no exit status, as the stdio streams (the task is gone)
      if (sb.result !== null) fail(Code.UNAVAILABLE, "task finished");
      return outcome;
    },
    TaskExecPoll: (req: M.TaskExecWaitRequest, call) => {
      const sb = routerSandbox(req.taskId, call.metadata);
      const e = execOf(sb, req.execId);
      return e.process.exit ?? {};
    },
  };

  // ------------------------------------------------------------------- serving

  const route = (path: string): GrpcHandler | null => {
    const isControl = path.startsWith(CONTROL);
    const isRouter = path.startsWith(ROUTER);
    if (!isControl && !isRouter) return null;
    const method = path.slice((isControl ? CONTROL : ROUTER).length);
    const types = (isControl ? CONTROL_TYPES : ROUTER_TYPES)[method];
    const handler = (isControl ? control : router)[method];
    if (!types || !handler) return null;
    const [reqType, resType] = types;
    const proto = isControl ? CONTROL_PROTO : ROUTER_PROTO;
    return async (body: Uint8Array, call: GrpcCall) => {
      const request = proto.decode(reqType, body);
      const rec: RecordedCall = {
        service: isControl ? "control" : "router",
        method,
        metadata: { ...call.metadata },
        request,
        wire: wirePaths(body, proto.message(reqType)),
        status: null,
      };
      calls.push(rec);
      notifyWaiters();
      const end = call.end.bind(call);
      (call as { end: GrpcCall["end"] }).end = (code = 0, message = "") => {
        if (rec.status === null) rec.status = code;
        end(code, message);
      };
      const fault = takeFault(method);
      if (fault?.delayMs) await new Promise((r) => setTimeout(r, fault.delayMs));
      if (fault?.drop === "connection") {
        rec.status = -1;
        call.destroyConnection();
        return;
      }
      if (fault?.drop === "stream") {
        rec.status = -1;
        call.reset();
        return;
      }
      if (fault?.code !== undefined && !fault.afterMessages) {
        fail(fault.code, fault.message ?? `injected ${fault.code}`);
      }
      if (isControl) checkControlAuth(method, call.metadata);
      let sent = 0;
      const send = (msg: object) => {
        if (fault?.code !== undefined && fault.afterMessages && sent >= fault.afterMessages) {
          fail(fault.code, fault.message ?? `injected ${fault.code} after ${sent} messages`);
        }
        sent++;
        call.send(proto.encode(resType, msg as Record<string, unknown>));
      };
      const out = await (handler as unknown as Handler<Record<string, unknown>>)(
        request,
        call,
        send,
      );
      if (fault?.code !== undefined && fault.afterMessages) {
        fail(fault.code, fault.message ?? `injected ${fault.code} after ${sent} messages`);
      }
      if (out !== undefined) call.send(proto.encode(resType, out as Record<string, unknown>));
    };
  };

  const server = await startGrpcServer(route, {
    validate: (_path, md) => {
      if (md["te"] !== "trailers") fail(Code.INTERNAL, 'missing "te: trailers"');
    },
  });
  routerPort = server.port;

  return {
    url: server.url,
    port: server.port,
    env: {
      MODAL_SERVER_URL: server.url,
      MODAL_TOKEN_ID: tokenId,
      MODAL_TOKEN_SECRET: tokenSecret,
    },
    knobs,
    calls,
    clock,
    inject: (f) => faults.push(f),
    liveSandboxes: () => {
      let n = 0;
      for (const sb of sandboxes.values()) {
        refresh(sb);
        if (sb.result === null) n++;
      }
      return n;
    },
    sandboxIds: () => [...sandboxes.keys()],
    sandbox: (id) => {
      const sb = sandboxes.get(id);
      if (!sb) return undefined;
      refresh(sb);
      return { definition: sb.definition, result: sb.result, name: sb.name };
    },
    execExits: (id) => [...(sandboxes.get(id)?.execs.values() ?? [])].map((e) => e.process.exit),
    callsOf: (method) => calls.filter((c) => c.method === method),
    waitForCalls: (method, count) =>
      new Promise<void>((resolve) => {
        callWaiters.push({ method, count, resolve });
        notifyWaiters();
      }),
    close: async () => {
      clearInterval(lifetimeTimer);
      for (const sb of sandboxes.values()) {
        if (sb.result === null) finishSandbox(sb, result(GenericStatus.TERMINATED));
        else killTagged(sb.id);
        sb.net.close();
      }
      await server.close();
      rmSync(root, { recursive: true, force: true });
    },
  };
}
