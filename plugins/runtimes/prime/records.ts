/**
 * What the Prime API answers, as this client reads it: the camelCase `Sandbox` record,
 * batch statuses, gateway credentials, command results, file windows and the error context,
 * with the lenient field readers that turn JSON into them.
 *
 * @module
 */

/** The camelCase `Sandbox` record (fields this client reads; the rest kept in `raw`). */
export interface SandboxRecord {
  id: string;
  name: string;
  status: string;
  vm: boolean | null;
  timeoutMinutes: number | null;
  idleTimeoutMinutes: number | null;
  pendingImageBuildId: string | null;
  errorType: string | null;
  errorMessage: string | null;
  raw: Record<string, unknown>;
}

/** One page of `GET /sandbox`. */
export interface SandboxPage {
  sandboxes: SandboxRecord[];
  hasNext: boolean;
}

/** One sandbox's status from the batch endpoint (or a GET fallback). */
export interface StatusItem {
  sandboxId: string;
  status: string;
  errorType: string | null;
  errorMessage: string | null;
  pendingImageBuildId: string | null;
}

/** What `PrimeClient.batchStatus` returns. */
export interface BatchStatusResult {
  statuses: Map<string, StatusItem>;
  /** Per-id errors: code `NOT_FOUND`, `FORBIDDEN`, `MANAGED`. */
  errors: Map<string, { code: string; message: string }>;
  /**
   * Per-id request failures of the GET fallback (batch status unsupported): they belong
   * to that sandbox alone, as in the SDK's `_BatchItemError` (sandbox.py@66fb4b70).
   */
  failures: Map<string, unknown>;
}

/** Gateway credentials of one sandbox. `token` is secret. */
export interface SandboxAuth {
  gatewayUrl: string;
  userNs: string;
  jobId: string;
  token: string;
  /** Epoch ms. */
  expiresAt: number;
}

/** What a finished command returned. */
export interface ExecResult {
  stdout: string;
  stderr: string;
  exitCode: number;
}

/** Options of `PrimeClient.exec`. */
export interface ExecOptions {
  cwd?: string | null;
  env?: Record<string, string>;
  /** Command timeout in seconds. @default 300 */
  timeoutS?: number | undefined;
  signal?: AbortSignal | undefined;
}

/** What `read-file` returns. */
export interface ReadFileResult {
  content: string;
  size: number;
  totalSize: number | null;
  offset: number | null;
  truncated: boolean;
}

/**
 * What `/error-context` says about a sandbox. All fields are null when the call itself
 * failed: like the SDK (`_get_sandbox_error_context`, sandbox.py@66fb4b70) we carry on
 * with an empty context instead of replacing the error being classified.
 */
export interface ErrorContext {
  status: string | null;
  errorType: string | null;
  errorMessage: string | null;
}

/** A string field, else null. */
export function str(v: unknown): string | null {
  return typeof v === "string" ? v : null;
}

/** A finite number field, else null. */
export function num(v: unknown): number | null {
  return typeof v === "number" && Number.isFinite(v) ? v : null;
}

/** A JSON object's fields (an empty record for anything else). */
export function fieldsOf(j: unknown): Record<string, unknown> {
  return (j && typeof j === "object" ? j : {}) as Record<string, unknown>;
}

/** A `Sandbox` record from its JSON. */
export function parseRecord(j: unknown): SandboxRecord {
  const o = fieldsOf(j);
  return {
    id: str(o.id) ?? "",
    name: str(o.name) ?? "",
    status: str(o.status) ?? "UNKNOWN",
    vm: typeof o.vm === "boolean" ? o.vm : null,
    timeoutMinutes: num(o.timeoutMinutes),
    idleTimeoutMinutes: num(o.idleTimeoutMinutes),
    pendingImageBuildId: str(o.pendingImageBuildId),
    errorType: str(o.errorType),
    errorMessage: str(o.errorMessage),
    raw: o,
  };
}

/** A sandbox id as one URL path segment. */
export function enc(id: string): string {
  return encodeURIComponent(id);
}
