/**
 * File transfer through a sandbox's gateway: upload (multipart, one `file` part),
 * download, and the text window of `read-file` (sandbox.py@66fb4b70).
 *
 * @module
 */
import { PrimeApiError } from "./errors.ts";
import { errInit } from "./failures.ts";
import type { PrimeGateway } from "./gateway.ts";
import { bodyJson, type HttpResponse } from "./http.ts";
import { fieldsOf, num, type ReadFileResult, str } from "./records.ts";

/** Which part of a text file `read-file` returns, and how long it may take. */
export interface ReadFileWindow {
  /** Negative: from the end. */
  offset?: number;
  length?: number;
  /** @default 30 */
  timeoutS?: number;
}

/** The file calls of one client. */
export class PrimeFiles {
  readonly #gateway: PrimeGateway;
  readonly #transferTimeoutMs: number;

  constructor(gateway: PrimeGateway, transferTimeoutMs: number) {
    this.#gateway = gateway;
    this.#transferTimeoutMs = transferTimeoutMs;
  }

  /** Uploads bytes to `path` (multipart, one `file` part). Parents must exist. */
  async upload(id: string, path: string, data: Uint8Array, signal?: AbortSignal): Promise<void> {
    const name = path.split("/").pop() || "file";
    await this.#gateway.request(id, {
      kind: "upload",
      method: "POST",
      sub: "upload",
      query: { path, sandbox_id: id },
      body: () => {
        const fd = new FormData();
        fd.append("file", new Blob([data as BlobPart]), name);
        return fd;
      },
      timeoutMs: this.#transferTimeoutMs,
      signal,
    });
  }

  /** Downloads a file's bytes; a missing file rejects with `httpStatus === 404`. */
  async download(id: string, path: string, signal?: AbortSignal): Promise<Uint8Array> {
    const res = await this.#gateway.request(id, {
      kind: "get",
      method: "GET",
      sub: "download",
      query: { path, sandbox_id: id },
      timeoutMs: this.#transferTimeoutMs,
      signal,
    });
    return res.body;
  }

  /**
   * Reads a text file window (`offset` may be negative: from the end). Every 404 is a
   * missing file and resolves to null, whatever the body says, as in the SDK (`read_file`
   * raises SandboxFileNotFoundError, sandbox.py@66fb4b70); 413 rejects.
   */
  async readFile(
    id: string,
    path: string,
    window: ReadFileWindow = {},
    signal?: AbortSignal,
  ): Promise<ReadFileResult | null> {
    const timeoutS = window.timeoutS ?? 30;
    const query: Record<string, string> = { path };
    if (window.offset !== undefined) query.offset = String(window.offset);
    if (window.length !== undefined) query.length = String(window.length);
    let res: HttpResponse;
    try {
      res = await this.#gateway.request(id, {
        kind: "read_file",
        method: "GET",
        sub: "read-file",
        query,
        timeoutMs: timeoutS * 1000,
        signal,
      });
    } catch (e) {
      if (e instanceof PrimeApiError && e.transport === "http" && e.httpStatus === 404) return null;
      if (e instanceof PrimeApiError && e.transport === "timeout" && !signal?.aborted) {
        // the SDK names the file and the timeout (`read_file`, sandbox.py@66fb4b70)
        throw new PrimeApiError(`Read file timed out after ${timeoutS}s: ${path}`, {
          ...errInit(e),
          cause: e,
        });
      }
      throw e;
    }
    const j = fieldsOf(bodyJson(res));
    return {
      content: str(j.content) ?? "",
      size: num(j.size) ?? 0,
      totalSize: num(j.total_size),
      offset: num(j.offset),
      truncated: j.truncated === true,
    };
  }
}
