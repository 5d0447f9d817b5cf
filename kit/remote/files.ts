/**
 * Moving files in and out of a remote sandbox: through the provider's own transfer
 * ({@link SandboxFiles}) when it has one, else through exec with two small POSIX `sh`
 * programs that take their inputs as positional arguments (binary-safe: bytes go through
 * stdin and stdout).
 *
 * @module
 */
import { posix } from "node:path";
import { SandboxError } from "../errors.ts";
import type { SandboxProvider } from "./provider.ts";
import { quote } from "../util/quote.ts";

/** `sh -c WRITE_SCRIPT vf-write <path>`: writes stdin to path, creating parent directories. */
const WRITE_SCRIPT = `mkdir -p "$(dirname "$1")" && cat > "$1"`;

/** Exit codes of {@link READ_SCRIPT}: missing, not a regular file, over the limit. */
const READ_MISSING = 3;
const READ_NOT_FILE = 4;
const READ_TOO_LARGE = 5;

/**
 * `sh -c READ_SCRIPT vf-read <path> [<maxBytes>]`: prints the file's bytes, or exits with
 * one of the codes above (the size on stderr when too large).
 */
const READ_SCRIPT = `f=$1
[ -e "$f" ] || { echo "no such file" >&2; exit ${READ_MISSING}; }
[ -f "$f" ] || { echo "not a regular file" >&2; exit ${READ_NOT_FILE}; }
if [ -n "$2" ]; then
  n=$(wc -c < "$f") || exit 1
  n=$((n + 0))
  if [ "$n" -gt "$2" ]; then echo "$n" >&2; exit ${READ_TOO_LARGE}; fi
fi
exec cat "$f"`;

/** Decodes UTF-8 output (a BOM is kept, as a byte of the output). */
export function decodeText(bytes: Uint8Array): string {
  return new TextDecoder("utf-8", { ignoreBOM: true }).decode(bytes);
}

/** A file over a read limit. */
export function tooLarge(path: string, size: number, max: number): SandboxError {
  return new SandboxError(
    `Cannot read ${quote(path)}: the file has ${size} bytes, more than the limit of ${max} bytes`,
    { hint: "Raise maxBytes or read a smaller file" },
  );
}

/**
 * Writes `bytes` to absolute `target` once (no retry): `mkdir -p` of the parent, then the
 * provider's upload; or the write program. A refusal inside the sandbox is a SandboxError
 * naming `path`; a provider failure is thrown as it is.
 */
export async function putFile<H>(
  provider: SandboxProvider<H>,
  handle: H,
  path: string,
  target: string,
  bytes: Uint8Array,
): Promise<void> {
  const argv = provider.files
    ? ["mkdir", "-p", posix.dirname(target)]
    : ["sh", "-c", WRITE_SCRIPT, "vf-write", target];
  const r = await provider.exec(handle, {
    argv,
    timeoutS: 60,
    ...(provider.files ? {} : { stdin: bytes }),
  });
  if (r.exitCode !== 0) {
    throw new SandboxError(
      `Cannot write ${quote(path)}: ${provider.files ? `mkdir exited ${r.exitCode}: ` : ""}${
        decodeText(r.stderr).trim()
      }`,
      { hint: "Check that the path is a file path the sandbox user may write" },
    );
  }
  await provider.files?.upload(handle, target, bytes);
}

/**
 * Reads absolute `target`, refusing more than `maxBytes`. A missing file, a directory or
 * an oversized file is a SandboxError naming `path`; a provider failure is thrown as it is.
 */
export async function getFile<H>(
  provider: SandboxProvider<H>,
  handle: H,
  path: string,
  target: string,
  maxBytes: number | undefined,
): Promise<Uint8Array> {
  let bytes: Uint8Array | null;
  if (provider.files) {
    bytes = await provider.files.download(handle, target);
  } else {
    const argv = ["sh", "-c", READ_SCRIPT, "vf-read", target];
    if (maxBytes !== undefined) argv.push(String(Math.max(0, Math.floor(maxBytes))));
    const r = await provider.exec(handle, { argv });
    const stderr = decodeText(r.stderr).trim();
    if (r.exitCode === READ_NOT_FILE) {
      throw new SandboxError(`Cannot read ${quote(path)}: not a regular file`, {
        hint: `${quote(target)} is a directory or a special file`,
      });
    }
    if (r.exitCode === READ_TOO_LARGE) throw tooLarge(path, Number(stderr), maxBytes!);
    if (r.exitCode !== 0 && r.exitCode !== READ_MISSING) {
      throw new SandboxError(`Cannot read ${quote(path)}: ${stderr}`);
    }
    bytes = r.exitCode === READ_MISSING ? null : r.stdout;
  }
  if (bytes === null) {
    throw new SandboxError(`Cannot read ${quote(path)}: no such file`, {
      statusCode: 404,
      hint: `Looked for ${quote(target)}`,
    });
  }
  if (maxBytes !== undefined && bytes.byteLength > maxBytes) {
    throw tooLarge(path, bytes.byteLength, maxBytes);
  }
  return bytes;
}
