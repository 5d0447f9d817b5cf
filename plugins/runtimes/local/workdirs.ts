/**
 * Work directories of the `local` runtime: the root they go in (created and resolved once
 * per process), their names (`vf-<name>-p<pid>-XXXXXX`, or `vf-<name>-XXXXXX` when kept)
 * and their creation.
 *
 * @module
 */
import { mkdir, realpath } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, resolve, sep } from "node:path";
import { errorMessage, ownedWorkdirPrefix, randomChars, SandboxError } from "../../../kit/mod.ts";
import type { LocalRuntimeConfig } from "./config.ts";

/** Letters of a work directory's random suffix (as `mkdtemp` uses). */
const SUFFIX_LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

/**
 * Roots made and resolved in this process, by the path as configured: a root is created
 * and resolved once, not once per rollout. A failure is not kept, so it is retried.
 */
const readyRoots = new Map<string, Promise<string>>();

/** The real paths of the roots made so far, by the path as configured. */
const resolvedRoots = new Map<string, string>();

/** The OS temp folder as an absolute path, read once per process (not once per rollout). */
let defaultRoot: string | undefined;

/** The absolute folder the config puts work directories in. */
function rootOf(config: LocalRuntimeConfig): string {
  if (config.workdir_root !== null) return resolve(config.workdir_root);
  return defaultRoot ??= resolve(tmpdir());
}

/** `root` created when missing, as a real path (once per process). */
function readyRoot(root: string): Promise<string> {
  let ready = readyRoots.get(root);
  if (ready === undefined) {
    ready = mkdir(root, { recursive: true }).then(() => realpath(root));
    readyRoots.set(root, ready);
    ready.then((real) => resolvedRoots.set(root, real), () => readyRoots.delete(root));
  }
  return ready;
}

/**
 * A fresh work directory path for the runtime `name` under the config's root, which is
 * created when missing (once per process); the directory itself is not made here.
 */
export async function nameWorkdir(config: LocalRuntimeConfig, name: string): Promise<string> {
  const root = rootOf(config);
  let realRoot = resolvedRoots.get(root);
  if (realRoot === undefined) {
    try {
      realRoot = await readyRoot(root);
    } catch (e) {
      throw provisioningFailed(root, e);
    }
  }
  // a directory removed at stop names its process, so a crashed run's can be found
  const prefix = config.keep_workdir ? `vf-${safeName(name)}-` : ownedWorkdirPrefix(safeName(name));
  // realRoot is absolute and resolved (readyRoot): nothing for a join to normalize
  return realRoot + (realRoot.endsWith(sep) ? "" : sep) + prefix +
    randomChars(6, SUFFIX_LETTERS);
}

/** Makes `dir` (mode 0700, not there before); its parent again if it went missing. */
export async function makeDir(dir: string): Promise<void> {
  try {
    await mkdir(dir, { mode: 0o700 });
  } catch (e) {
    if ((e as { code?: string }).code !== "ENOENT") throw e;
    await mkdir(dirname(dir), { recursive: true });
    await mkdir(dir, { mode: 0o700 });
  }
}

/** The error of a work directory (or its root) that could not be made. */
export function provisioningFailed(root: string, cause: unknown): SandboxError {
  return new SandboxError(`local sandbox provisioning failed: ${errorMessage(cause)}`, {
    hint: `Check that "${root}" is a writable directory (runtime key workdir_root)`,
    cause,
  });
}

/** A name {@link safeName} keeps as it is. */
const SAFE_NAME = /^[A-Za-z0-9._-]{1,64}$/;

/** A runtime name made safe for a directory name. */
function safeName(name: string): string {
  if (SAFE_NAME.test(name)) return name; // a trace id always is
  const cleaned = name.replace(/[^A-Za-z0-9._-]+/g, "_").slice(0, 64);
  return cleaned === "" ? "runtime" : cleaned;
}
