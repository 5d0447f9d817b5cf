/**
 * Failures to write our own outputs (disk full, read-only or unwritable paths, a file where
 * a directory should be, names too long) are the user's environment, not a bug: they end
 * the CLI with exit code 2 and a message naming what failed and where, never a stack.
 *
 * @module
 */
import { lstatSync, mkdtempSync, readlinkSync, rmdirSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { InputError } from "../errors.ts";
import { quote } from "./quote.ts";

/** What each errno means, for the operating-system failures a write of ours can meet. */
const WRITE_ERRNOS: Record<string, string> = {
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

/** The errno code of anything thrown, or `?`. */
function codeOf(err: unknown): string {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === "string" ? code : "?";
}

/** An errno in words: `permission denied (EACCES)`. */
function errnoText(code: string): string {
  return `${WRITE_ERRNOS[code] ?? "cannot be used"} (${code})`;
}

/**
 * Why an output directory cannot be made or written at `path`, or null when it can: the
 * nearest part of the path that exists is a dangling or looping symbolic link, something
 * other than a directory, or a directory this process may not write into. Checked before
 * any work, so a bad output path is bad input rather than a failure half-way.
 */
export function outputDirProblem(path: string): string | null {
  let cur = resolve(path);
  const at = () => quote(cur, { bare: true });
  for (;;) {
    let link = false;
    try {
      link = lstatSync(cur).isSymbolicLink();
    } catch (err) {
      const up = dirname(cur);
      // ENOTDIR: a part above is no directory, which the walk up names
      if (codeOf(err) !== "ENOENT" && codeOf(err) !== "ENOTDIR") {
        return `${at()}: ${errnoText(codeOf(err))}`;
      }
      if (up === cur) return null;
      cur = up;
      continue;
    }
    let isDir: boolean;
    try {
      isDir = statSync(cur).isDirectory();
    } catch (err) {
      const code = codeOf(err);
      if (link && code === "ENOENT") {
        const target = quote(readlinkSync(cur), { bare: true });
        return `${at()} is a symbolic link to ${target}, which does not exist`;
      }
      if (link && code === "ELOOP") return `${at()} is a symbolic link that loops`;
      return `${at()}: ${errnoText(code)}`;
    }
    if (!isDir) return `${at()} is not a directory`;
    try {
      // a directory made and removed at once: permission bits alone miss a read-only mount
      // (and root passes every access check)
      rmdirSync(mkdtempSync(join(cur, ".vf-probe-")));
    } catch (err) {
      return `${at()} is not writable: ${errnoText(codeOf(err))}`;
    }
    return null;
  }
}
