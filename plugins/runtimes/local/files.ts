/**
 * Files of the `local` runtime: a write that notes what it created outside the work
 * directory (so the runtime can remove it at stop), and a read with a size limit.
 *
 * @module
 */
import { mkdir, open, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import { errorMessage, SandboxError } from "../../../kit/mod.ts";

/**
 * Writes `target` (parents created). When `outside` the work directory, what it creates
 * goes into `created`: the topmost folder it had to make, or the file when it was not there
 * before. A file that was there before is overwritten and not noted.
 */
export async function writeNoting(
  target: string,
  data: string | Uint8Array,
  outside: boolean,
  created: Set<string>,
): Promise<void> {
  const madeDir = await mkdir(dirname(target), { recursive: true });
  if (outside && madeDir !== undefined) created.add(madeDir);
  if (!outside || madeDir !== undefined) return await writeFile(target, data);
  try {
    await writeFile(target, data, { flag: "wx" }); // created here: removed at stop
    created.add(target);
  } catch (e) {
    if ((e as { code?: string }).code !== "EEXIST") throw e;
    await writeFile(target, data); // there before: overwritten, and kept
  }
}

/**
 * Reads the regular file `target` (`path` as the caller gave it, for messages); refuses
 * one over `max` bytes. Every failure is a SandboxError.
 */
export async function readBounded(
  path: string,
  target: string,
  max: number | undefined,
): Promise<Uint8Array> {
  let handle;
  try {
    handle = await open(target, "r");
  } catch (e) {
    const missing = (e as { code?: string }).code === "ENOENT";
    throw new SandboxError(
      missing ? `Cannot read "${path}": no such file` : `Cannot read "${path}": ${errorMessage(e)}`,
      { hint: missing ? `Looked for "${target}"` : undefined, cause: e },
    );
  }
  try {
    const info = await handle.stat();
    if (!info.isFile()) {
      throw new SandboxError(`Cannot read "${path}": not a regular file`, {
        hint: `"${target}" is a directory or a special file`,
      });
    }
    if (max !== undefined && info.size > max) throw tooLarge(path, info.size, max);
    const bytes = await handle.readFile();
    if (max !== undefined && bytes.byteLength > max) throw tooLarge(path, bytes.byteLength, max);
    return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  } catch (e) {
    if (e instanceof SandboxError) throw e;
    throw new SandboxError(`Cannot read "${path}": ${errorMessage(e)}`, { cause: e });
  } finally {
    await handle.close().catch(() => {});
  }
}

function tooLarge(path: string, size: number, max: number): SandboxError {
  return new SandboxError(
    `Cannot read "${path}": the file has ${size} bytes, more than the limit of ${max} bytes`,
    { hint: "Raise maxBytes or read a smaller file" },
  );
}
