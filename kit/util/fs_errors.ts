/**
 * Failures to write our own outputs (disk full, read-only or unwritable paths, a file where
 * a directory should be, names too long) are the user's environment, not a bug: they end
 * the CLI with exit code 2 and a message naming what failed and where, never a stack.
 *
 * @module
 */
import { InputError } from "../errors.ts";

/** What each errno means, for the operating-system failures a write of ours can meet. */
export const WRITE_ERRNOS: Record<string, string> = {
  ENOSPC: "no space left on the device",
  EDQUOT: "disk quota exceeded",
  EFBIG: "file too large for the file system",
  EROFS: "the file system is read-only",
  EACCES: "permission denied",
  EPERM: "operation not permitted",
  ENOTDIR: "a part of the path is not a directory",
  EISDIR: "the path is a directory",
  ENAMETOOLONG: "the name is too long",
  EEXIST: "the path already exists",
  ELOOP: "too many symbolic links",
  EIO: "input/output error",
};

/** An output file or directory that cannot be written. Exit code 2. */
class OutputError extends InputError {
  /** The path that could not be written. */
  readonly path: string;
  /** The operating system's error code (`ENOSPC`, ...). */
  readonly errno: string;
  constructor(path: string, what: string, errno: string, options: { cause?: unknown } = {}) {
    super(
      "output_unwritable",
      `cannot write ${what} ${path}: ${WRITE_ERRNOS[errno] ?? errno} (${errno})`,
      {
        hint: errno === "ENOSPC" || errno === "EDQUOT"
          ? "free some space (or pick another -o/--output-dir), then resume with --resume <run-dir>"
          : "pick an output directory you can write (-o/--output-dir) or fix the path",
        cause: options.cause,
      },
    );
    this.name = "OutputError";
    this.path = path;
    this.errno = errno;
  }
}

/** The errno code of an operating-system error we map, or null. */
function writeErrno(err: unknown): string | null {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === "string" && Object.hasOwn(WRITE_ERRNOS, code) ? code : null;
}

/**
 * An {@link OutputError} for an operating-system write failure (`what` names the output,
 * `path` where; the error's own path wins when it has one), or null for anything else.
 */
export function asOutputError(err: unknown, what = "", path?: string): OutputError | null {
  if (err instanceof OutputError) return err;
  const errno = writeErrno(err);
  if (errno === null) return null;
  const own = (err as { path?: unknown }).path;
  const where = path ?? (typeof own === "string" && own !== "" ? own : "(unknown path)");
  return new OutputError(where, what || "to", errno, { cause: err });
}
