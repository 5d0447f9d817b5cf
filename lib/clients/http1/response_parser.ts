/**
 * An incremental parser of one HTTP/1.1 response (RFC 9112): the status line and header
 * fields, then the body as its framing says — `content-length`, `chunked` (extensions and
 * trailer fields read and dropped) or, with neither, everything until the connection
 * closes. Interim (1xx) responses are skipped; 204 and 304 have no body. Strict where a
 * lenient reading could frame the body wrongly: a malformed status line, header field or
 * chunk size, an obsolete line folding, `content-length` with `transfer-encoding`, or
 * two different lengths all fail the response.
 *
 * @module
 */
import { Buffer } from "node:buffer";

/** A response that is not valid HTTP/1.1; the connection it came on cannot be used again. */
export class Http1ParseError extends Error {
  /** Stable code for error messages: as Node's parser names this class of failure. */
  readonly code = "HPE_INVALID_RESPONSE";
  constructor(message: string) {
    super(`malformed HTTP response: ${message}`);
    this.name = "Http1ParseError";
  }
}

/** The status line and header fields of a response. */
export interface ResponseHead {
  status: number;
  /** Header fields by lower-case name; repeated fields joined with `, `. */
  headers: Record<string, string>;
  /** True when the connection may carry another request after this response. */
  keepAlive: boolean;
}

/** Where the parser delivers a response. */
export interface ResponseSink {
  head(head: ResponseHead): void;
  body(bytes: Uint8Array): void;
  end(): void;
}

/** Largest status line plus header fields accepted (Node's default is 16 KiB). */
export const MAX_HEAD_BYTES = 64 * 1024;

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const STATUS_LINE = /^HTTP\/1\.([01]) (\d{3})(?: [^\r\n]*)?$/;
/** The needles as bytes: a string needle is encoded again on every search. */
const CRLF_CRLF = Buffer.from("\r\n\r\n", "latin1");
const CRLF = Buffer.from("\r\n", "latin1");

type State =
  | "head"
  | "length"
  | "chunk-size"
  | "chunk-data"
  | "chunk-end"
  | "trailers"
  | "close"
  | "done";

/** Parses one response fed as byte chunks in arrival order. */
export class ResponseParser {
  readonly #sink: ResponseSink;
  #state: State = "head";
  /** Bytes of an unfinished head, chunk-size line or trailer section. */
  #pending: Buffer | null = null;
  /** Body bytes left in a length-framed body or the current chunk. */
  #remaining = 0;
  /** True once any byte of a response arrived. */
  started = false;

  constructor(sink: ResponseSink) {
    this.#sink = sink;
  }

  /** True once the whole response was read. */
  get done(): boolean {
    return this.#state === "done";
  }

  /** True when the body runs until the connection closes. */
  get untilClose(): boolean {
    return this.#state === "close";
  }

  /** Feeds the next bytes received; throws {@link Http1ParseError}. Bytes past the response are refused. */
  feed(chunk: Uint8Array): void {
    if (chunk.byteLength === 0) return;
    this.started = true;
    // sockets hand over Buffers; a view of anything else is made without copying
    let buf = Buffer.isBuffer(chunk)
      ? chunk
      : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    if (this.#pending !== null) {
      buf = Buffer.concat([this.#pending, buf]);
      this.#pending = null;
    }
    let at = 0;
    while (at < buf.length) {
      switch (this.#state) {
        case "head": {
          const end = buf.indexOf(CRLF_CRLF, at);
          if (end === -1) {
            this.#keep(buf, at, "response head");
            return;
          }
          this.#head(buf.toString("latin1", at, end));
          at = end + 4;
          break;
        }
        case "length":
        case "chunk-data": {
          const n = Math.min(this.#remaining, buf.length - at);
          this.#sink.body(buf.subarray(at, at + n));
          at += n;
          this.#remaining -= n;
          if (this.#remaining === 0) {
            if (this.#state === "length") this.#finish();
            else this.#state = "chunk-end";
          }
          break;
        }
        case "chunk-end": {
          // the CRLF after a chunk's data, which may arrive split
          if (buf[at] !== 13 || (at + 1 < buf.length && buf[at + 1] !== 10)) {
            throw new Http1ParseError("chunk data not followed by CRLF");
          }
          if (at + 1 === buf.length) {
            this.#keep(buf, at, "chunk end");
            return;
          }
          at += 2;
          this.#state = "chunk-size";
          break;
        }
        case "chunk-size": {
          const eol = buf.indexOf(CRLF, at);
          if (eol === -1) {
            this.#keep(buf, at, "chunk size line");
            return;
          }
          const size = chunkSize(buf, at, eol);
          if (size < 0) {
            const line = buf.toString("latin1", at, Math.min(eol, at + 40));
            throw new Http1ParseError(`bad chunk size ${JSON.stringify(line)}`);
          }
          at = eol + 2;
          this.#remaining = size;
          this.#state = this.#remaining === 0 ? "trailers" : "chunk-data";
          break;
        }
        case "trailers": {
          if (buf.length - at >= 2 && buf[at] === 13 && buf[at + 1] === 10) {
            at += 2;
            this.#finish();
            break;
          }
          const end = buf.indexOf(CRLF_CRLF, at);
          if (end === -1) {
            this.#keep(buf, at, "trailer section");
            return;
          }
          at = end + 4;
          this.#finish();
          break;
        }
        case "close":
          this.#sink.body(buf.subarray(at));
          return;
        case "done":
          throw new Http1ParseError("bytes after the end of the response");
      }
    }
  }

  /** The connection closed: ends a body that runs until close, else throws. */
  closed(): void {
    if (this.#state === "close") return this.#finish();
    if (this.#state !== "done") {
      throw new Error(
        this.started
          ? "connection closed before the response ended"
          : "socket hang up: the connection closed before any response",
      );
    }
  }

  #keep(buf: Buffer, from: number, what: string): void {
    if (buf.length - from > MAX_HEAD_BYTES) throw new Http1ParseError(`${what} too large`);
    this.#pending = Buffer.from(buf.subarray(from)); // a copy: the socket may reuse its buffer
  }

  #finish(): void {
    this.#state = "done";
    this.#sink.end();
  }

  #head(text: string): void {
    const lines = text.split("\r\n");
    const status = STATUS_LINE.exec(lines[0]!);
    if (status === null) {
      throw new Http1ParseError(`bad status line ${JSON.stringify(lines[0]!.slice(0, 60))}`);
    }
    const code = Number(status[2]);
    const headers: Record<string, string> = {};
    for (let i = 1; i < lines.length; i++) {
      const line = lines[i]!;
      const colon = line.indexOf(":");
      const name = colon > 0 ? line.slice(0, colon) : "";
      if (!TOKEN.test(name)) {
        throw new Http1ParseError(`bad header line ${JSON.stringify(line.slice(0, 60))}`);
      }
      const value = line.slice(colon + 1).trim();
      if (/[\0\r\n]/.test(value)) throw new Http1ParseError(`bad value of header ${name}`);
      const key = name.toLowerCase();
      const seen = headers[key];
      headers[key] = seen === undefined ? value : `${seen}, ${value}`;
    }
    if (code < 200) {
      if (code === 101) throw new Http1ParseError("unexpected protocol switch (101)");
      return; // interim response: the final one follows
    }
    const http11 = status[1] === "1";
    const connection = (headers["connection"] ?? "").toLowerCase();
    let keepAlive = http11 ? !/(^|,)\s*close\s*(,|$)/.test(connection) : false;
    const te = headers["transfer-encoding"];
    const cl = headers["content-length"];
    if (te !== undefined && cl !== undefined) {
      throw new Http1ParseError("both content-length and transfer-encoding");
    }
    let framing: State;
    if (code === 204 || code === 304) {
      framing = "done";
    } else if (te !== undefined) {
      framing = te.split(",").at(-1)!.trim().toLowerCase() === "chunked" ? "chunk-size" : "close";
    } else if (cl !== undefined) {
      const lengths = new Set(cl.split(",").map((v) => v.trim()));
      const only = [...lengths][0]!;
      if (lengths.size !== 1 || !/^\d{1,15}$/.test(only)) {
        throw new Http1ParseError(`bad content-length ${JSON.stringify(cl.slice(0, 40))}`);
      }
      this.#remaining = Number(only);
      framing = this.#remaining === 0 ? "done" : "length";
    } else {
      framing = "close";
    }
    if (framing === "close") keepAlive = false;
    this.#state = framing === "done" ? "head" : framing;
    this.#sink.head({ status: code, headers, keepAlive });
    if (framing === "done") this.#finish();
  }
}

/** True for the bytes of space and horizontal tab. */
const isBlank = (byte: number | undefined) => byte === 32 || byte === 9;

/**
 * The size a chunk-size line (`buf` from `at` to its CRLF at `eol`) gives: 1 to 12 hex
 * digits, blanks around them allowed, then nothing or `;` and extensions (ignored); -1 when
 * the line is anything else. Read from the bytes: a streamed answer has a line per event.
 */
function chunkSize(buf: Uint8Array, at: number, eol: number): number {
  let i = at;
  while (i < eol && isBlank(buf[i])) i++;
  let size = 0;
  const first = i;
  for (; i < eol; i++) {
    const c = buf[i]!;
    const digit = c >= 48 && c <= 57
      ? c - 48
      : c >= 97 && c <= 102
      ? c - 87
      : c >= 65 && c <= 70
      ? c - 55
      : -1;
    if (digit < 0) break;
    size = size * 16 + digit;
  }
  const digits = i - first;
  if (digits === 0 || digits > 12) return -1;
  while (i < eol && isBlank(buf[i])) i++;
  return i === eol || buf[i] === 59 ? size : -1;
}
