/**
 * The small POSIX `sh` programs the Modal runtime execs inside a sandbox for what the
 * command router has no RPC for: killing a command's whole process group (on timeout or
 * abort), writing a file from stdin, and reading a file with a size limit ({@link writeFile},
 * {@link readFile}). Each takes its inputs as positional arguments (never spliced into the
 * script text).
 *
 * @module
 */
import { SandboxError } from "../../../kit/mod.ts";
import type { ExecOptions, ExecResult } from "./exec.ts";

/**
 * `sh -c RUN_WRAPPER vf-run <pidfile> <argv...>`: runs argv in its own session and process
 * group (`setsid`, when the image has it), with the exec's stdin, records the group id in
 * `<pidfile>` and exits with the command's status (128+N when a signal N killed it).
 */
export const RUN_WRAPPER = `f=$1; shift
exec 3<&0
if command -v setsid >/dev/null 2>&1; then setsid "$@" <&3 3<&- & else "$@" <&3 3<&- & fi
p=$!
echo "$p" > "$f"
wait "$p" 2>/dev/null; s=$?
rm -f "$f"
exit "$s"`;

/**
 * `sh -c KILL_SCRIPT vf-kill <pidfile>`: SIGKILLs the process group recorded by
 * {@link RUN_WRAPPER} (waiting up to 2 s for the file to appear). Always exits 0.
 */
export const KILL_SCRIPT = `i=0
while [ ! -s "$1" ]; do i=$((i+1)); [ "$i" -gt 100 ] && exit 0; sleep 0.02; done
p=$(cat "$1") || exit 0
kill -KILL "-$p" 2>/dev/null || kill -KILL -- "-$p" 2>/dev/null || kill -KILL "$p" 2>/dev/null
exit 0`;

/** `sh -c WRITE_SCRIPT vf-write <path>`: writes stdin to path, creating parent directories. */
export const WRITE_SCRIPT = `mkdir -p "$(dirname "$1")" && cat > "$1"`;

/** Exit code of {@link READ_SCRIPT} for a missing file. */
export const READ_MISSING = 3;
/** Exit code of {@link READ_SCRIPT} for something that is not a regular file. */
export const READ_NOT_FILE = 4;
/** Exit code of {@link READ_SCRIPT} for a file over the limit (its size on stderr). */
export const READ_TOO_LARGE = 5;

/**
 * `sh -c READ_SCRIPT vf-read <path> [<maxBytes>]`: prints the file's bytes, or exits
 * {@link READ_MISSING}, {@link READ_NOT_FILE}, or {@link READ_TOO_LARGE} (size on stderr).
 */
export const READ_SCRIPT = `f=$1
[ -e "$f" ] || { echo "no such file" >&2; exit ${READ_MISSING}; }
[ -f "$f" ] || { echo "not a regular file" >&2; exit ${READ_NOT_FILE}; }
if [ -n "$2" ]; then
  n=$(wc -c < "$f") || exit 1
  n=$((n + 0))
  if [ "$n" -gt "$2" ]; then echo "$n" >&2; exit ${READ_TOO_LARGE}; fi
fi
exec cat "$f"`;

/** Runs one command in the sandbox. */
export type Exec = (argv: string[], options?: ExecOptions) => Promise<ExecResult>;

/** Writes `bytes` to absolute `target` (parents created); errors name `path`. */
export async function writeFile(
  exec: Exec,
  path: string,
  target: string,
  bytes: Uint8Array,
): Promise<void> {
  const r = await exec(["sh", "-c", WRITE_SCRIPT, "vf-write", target], { stdin: bytes });
  if (r.exitCode !== 0) {
    throw new SandboxError(`Cannot write "${path}": ${decodeText(r.stderr).trim()}`, {
      hint: "Check that the path is a file path the sandbox's user may write",
    });
  }
}

/** The bytes of absolute `target`, refusing more than `max`; errors name `path`. */
export async function readFile(
  exec: Exec,
  path: string,
  target: string,
  max: number | undefined,
): Promise<Uint8Array> {
  const argv = ["sh", "-c", READ_SCRIPT, "vf-read", target];
  if (max !== undefined) argv.push(String(Math.max(0, Math.floor(max))));
  const r = await exec(argv);
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

/** Decodes a command's UTF-8 output (a BOM is kept). */
export function decodeText(bytes: Uint8Array): string {
  return new TextDecoder("utf-8", { ignoreBOM: true }).decode(bytes);
}

/** The error for a file over a read limit. */
function tooLarge(path: string, size: number, max: number): SandboxError {
  return new SandboxError(
    `Cannot read "${path}": the file has ${size} bytes, more than the limit of ${max} bytes`,
    { hint: "Raise maxBytes or read a smaller file" },
  );
}
