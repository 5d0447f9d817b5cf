/**
 * Bounded, strict reading of the text files a user hands us (config files, system prompt
 * files, taskset files): at most a documented number of bytes is read — a device such as
 * `/dev/zero` or a huge file is refused without being held in memory — and the bytes must
 * be UTF-8 (the first bad byte is named by its offset instead of being silently replaced).
 *
 * @module
 */
import { closeSync, fstatSync, openSync, readSync } from "node:fs";
import { type ErrorCode, InputError } from "../errors.ts";
import { quote } from "./quote.ts";

/** Largest config file (`@ file`, `--x @ file`) read: 8 MiB. */
export const MAX_CONFIG_FILE_BYTES = 8 * 1024 * 1024;
/** Largest system prompt file read: 1 MiB. */
export const MAX_PROMPT_FILE_BYTES = 1024 * 1024;
/** Largest taskset data file (`jsonl` taskset) read: 256 MiB. */
export const MAX_TASKSET_FILE_BYTES = 256 * 1024 * 1024;

/** Human size of a byte count (`8 MiB`, `512 KiB`, `17 bytes`). */
function formatBytes(n: number): string {
  if (n >= 1024 * 1024 && n % (1024 * 1024) === 0) return `${n / (1024 * 1024)} MiB`;
  if (n >= 1024 && n % 1024 === 0) return `${n / 1024} KiB`;
  return `${n} bytes`;
}

/**
 * Offset of the first byte that is not part of a well-formed UTF-8 sequence (overlongs,
 * surrogates and code points past U+10FFFF count as bad), or -1 when all is UTF-8.
 */
function firstInvalidUtf8(bytes: Uint8Array): number {
  let i = 0;
  for (let b = bytes[i]; b !== undefined; b = bytes[i]) {
    if (b < 0x80) {
      i++;
      continue;
    }
    let need: number;
    let lo = 0x80;
    let hi = 0xbf;
    if (b >= 0xc2 && b <= 0xdf) need = 1;
    else if (b >= 0xe0 && b <= 0xef) {
      need = 2;
      if (b === 0xe0) lo = 0xa0;
      if (b === 0xed) hi = 0x9f;
    } else if (b >= 0xf0 && b <= 0xf4) {
      need = 3;
      if (b === 0xf0) lo = 0x90;
      if (b === 0xf4) hi = 0x8f;
    } else return i;
    for (let k = 1; k <= need; k++) {
      const c = bytes[i + k];
      const min = k === 1 ? lo : 0x80;
      const max = k === 1 ? hi : 0xbf;
      if (c === undefined || c < min || c > max) return i;
    }
    i += need + 1;
  }
  return -1;
}

/** What a bounded read is of, for messages: `config file`, `system prompt file`, ... */
export interface ReadTextOptions {
  /** What the file is, for messages (`config file`). */
  what: string;
  /** Refuse files larger than this. */
  maxBytes: number;
  /** How the user may fix it. */
  hint?: string;
  /** The path as messages show it (as the user gave it). @default the path read */
  shownAs?: string;
  /** Error code when the file cannot be opened or read. @default "file_unreadable" */
  unreadableCode?: ErrorCode;
}

/** Reads at most `limit` bytes of an open file; returns what was read. */
function readUpTo(fd: number, limit: number): Uint8Array {
  const size = fstatSync(fd).size;
  // A regular file's size is a good first guess; devices and pipes report 0.
  let buf = new Uint8Array(Math.min(limit, size > 0 ? size + 1 : 64 * 1024));
  let used = 0;
  while (used < limit) {
    if (used === buf.length) {
      const bigger = new Uint8Array(Math.min(limit, buf.length * 2));
      bigger.set(buf);
      buf = bigger;
    }
    const got = readSync(fd, buf, used, buf.length - used, null);
    if (got === 0) break;
    used += got;
  }
  return buf.subarray(0, used);
}

/** A decoder that throws on malformed UTF-8 (and drops a leading byte-order mark). */
const STRICT_UTF8 = new TextDecoder("utf-8", { fatal: true });

/**
 * Reads a UTF-8 text file of at most `maxBytes` bytes. Throws an {@link InputError}
 * (exit 2) naming the file when it cannot be read, is larger than the limit (only the limit
 * plus one byte is ever read), or is not UTF-8 (with the offset of the first bad byte).
 * A leading byte-order mark is dropped.
 */
export function readTextFileBounded(path: string, options: ReadTextOptions): string {
  let fd: number;
  try {
    fd = openSync(path, "r");
  } catch (err) {
    throw unreadable(path, options, err);
  }
  let bytes: Uint8Array;
  try {
    bytes = readUpTo(fd, options.maxBytes + 1);
  } catch (err) {
    throw unreadable(path, options, err);
  } finally {
    closeSync(fd);
  }
  if (bytes.length > options.maxBytes) {
    throw new InputError(
      "file_too_large",
      `${shown(path, options)}: ${options.what} is larger than the limit of ${
        formatBytes(options.maxBytes)
      }`,
      { hint: options.hint ?? `give a regular file of at most ${formatBytes(options.maxBytes)}` },
    );
  }
  try {
    // one pass for well-formed text; the byte-by-byte scan runs only to name a bad byte
    return STRICT_UTF8.decode(bytes);
  } catch {
    const bad = firstInvalidUtf8(bytes);
    if (bad < 0) return new TextDecoder("utf-8").decode(bytes);
    throw new InputError(
      "file_not_utf8",
      `${shown(path, options)}: ${options.what} is not UTF-8 text: invalid byte 0x${
        (bytes[bad] ?? 0).toString(16).padStart(2, "0")
      } at byte offset ${bad}`,
      { hint: "save the file as UTF-8" },
    );
  }
}

/** The path leading a message, as its location: escaped and bounded. */
function shown(path: string, options: ReadTextOptions): string {
  return quote(options.shownAs ?? path, { bare: true });
}

function unreadable(path: string, options: ReadTextOptions, err: unknown): InputError {
  const code = (err as { code?: string }).code;
  const why = code === "ENOENT"
    ? "no such file"
    : code === "EISDIR"
    ? "is a directory"
    : code === "EACCES" || code === "EPERM"
    ? "permission denied"
    : code === "ENAMETOOLONG"
    ? "the name is too long"
    : code === "ENOTDIR"
    ? "a part of the path is not a directory"
    : code === "ELOOP"
    ? "too many symbolic links"
    : String(code ?? (err as Error).message ?? err);
  return new InputError(
    options.unreadableCode ?? "file_unreadable",
    `${shown(path, options)}: cannot read ${options.what}: ${why}`,
    {
      hint: options.hint,
      cause: err,
    },
  );
}
