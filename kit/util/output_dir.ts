/**
 * Whether a path can hold an output directory, checked before any work so that a bad output
 * path is bad input (exit 2) rather than a failure half-way. Kept apart from
 * kit/util/fs_errors.ts, which the CLI loads at start and which needs no file system.
 *
 * @module
 */
import { lstatSync, mkdtempSync, readlinkSync, rmdirSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { WRITE_ERRNOS } from "./fs_errors.ts";
import { quote } from "./quote.ts";

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
