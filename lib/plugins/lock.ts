/**
 * `vf.lock`: the resolved version and integrity of every fetched plugin specifier
 * (`npm:`, `jsr:`, `http(s):`), kept beside the config. Opt-in: `--lock` writes and
 * updates it, `--frozen` refuses any change (a specifier missing from it, a different
 * resolution). An existing lock is honoured without flags too: a locked specifier
 * resolves to its locked version and must have its locked integrity — a mismatch fails
 * closed.
 *
 * ```json
 * { "version": 1,
 *   "plugins": { "npm:@acme/vf-mathsets@^1.2": {
 *     "resolved": "npm:@acme/vf-mathsets@1.2.3", "version": "1.2.3",
 *     "integrity": "sha512-..." } } }
 * ```
 *
 * @module
 */
import { existsSync, readFileSync } from "node:fs";
import { dirname, isAbsolute, join, resolve } from "node:path";
import { type ErrorCode, errorMessage, PluginError } from "../../kit/errors.ts";
import { writeFileAtomic } from "../../kit/util/write_atomic.ts";
import { integrityConflict, strongestHash } from "./fetch/integrity.ts";
import { quote } from "../../kit/util/quote.ts";

/** File name of the lock file. */
export const LOCK_FILE_NAME = "vf.lock";

/** Format version written in the lock file. */
const LOCK_FORMAT_VERSION = 1;

/** How a lock is used: honoured only (`read`), written (`update`), or fixed (`frozen`). */
export type LockMode = "read" | "update" | "frozen";

/** What the lock pins for one specifier. */
export interface LockEntry {
  /** The exact thing fetched: `npm:<name>@<version>`, `jsr:@s/n@<version>` or the URL. */
  resolved: string;
  /** The exact version (package specifiers only). */
  version?: string;
  /** SRI of the tarball or file (`sha512-...`). */
  integrity: string;
}

function lockError(code: ErrorCode, message: string, hint: string): PluginError {
  return new PluginError(code, message, { hint });
}

function validEntry(v: unknown): v is LockEntry {
  if (typeof v !== "object" || v === null) return false;
  const e = v as Record<string, unknown>;
  return typeof e.resolved === "string" && typeof e.integrity === "string" &&
    strongestHash(e.integrity) !== null &&
    (e.version === undefined || typeof e.version === "string");
}

/** An open lock file. */
export class PluginLock {
  /** Absolute path of `vf.lock`. */
  readonly path: string;
  /** How this run uses it. */
  readonly mode: LockMode;
  #entries: Map<string, LockEntry>;
  #changed = false;

  constructor(path: string, mode: LockMode, entries: Map<string, LockEntry>) {
    this.path = path;
    this.mode = mode;
    this.#entries = entries;
  }

  /** Reads `path` (absent = empty unless frozen). Throws when it is malformed. */
  static open(path: string, mode: LockMode): PluginLock {
    const entries = new Map<string, LockEntry>();
    if (!existsSync(path)) {
      if (mode === "frozen") {
        throw lockError(
          "plugin_lock_missing",
          `--frozen: there is no ${LOCK_FILE_NAME} at ${path}`,
          "Run once with --lock to write it, then commit it",
        );
      }
      return new PluginLock(path, mode, entries);
    }
    let doc: unknown;
    try {
      doc = JSON.parse(readFileSync(path, "utf8"));
    } catch (err) {
      throw lockError(
        "plugin_lock_invalid",
        `${path}: not valid JSON (${errorMessage(err)})`,
        `Fix or delete ${LOCK_FILE_NAME} and run with --lock to write it again`,
      );
    }
    const d = doc as { version?: unknown; plugins?: unknown };
    if (
      typeof d !== "object" || d === null || d.version !== LOCK_FORMAT_VERSION ||
      typeof d.plugins !== "object" || d.plugins === null
    ) {
      throw lockError(
        "plugin_lock_invalid",
        `${path}: expected {"version": ${LOCK_FORMAT_VERSION}, "plugins": {...}}`,
        `Fix or delete ${LOCK_FILE_NAME} and run with --lock to write it again`,
      );
    }
    for (const [spec, entry] of Object.entries(d.plugins as Record<string, unknown>)) {
      if (!validEntry(entry)) {
        throw lockError(
          "plugin_lock_invalid",
          `${path}: plugins."${spec}" needs "resolved" and an "integrity" like sha512-...`,
          `Fix or delete ${LOCK_FILE_NAME} and run with --lock to write it again`,
        );
      }
      entries.set(spec, entry);
    }
    return new PluginLock(path, mode, entries);
  }

  /** The specifiers the lock holds, sorted. */
  specifiers(): string[] {
    return [...this.#entries.keys()].sort();
  }

  /**
   * The entry of a specifier. Under `--frozen` a specifier that is not locked is refused
   * (naming the locked specifiers of the same package, e.g. after a range change).
   */
  lookup(specifier: string): LockEntry | undefined {
    const entry = this.#entries.get(specifier);
    if (!entry && this.mode === "frozen") {
      const base = specifier.replace(/^((?:npm|jsr):@?[^@]+)@.*$/, "$1");
      const near = this.specifiers().filter((s) => s === base || s.startsWith(`${base}@`));
      throw lockError(
        "plugin_lock_frozen",
        `--frozen: ${this.path} has no entry for ${quote(specifier)}` +
          (near.length ? ` (it locks ${near.map((s) => `"${s}"`).join(", ")})` : ""),
        "Run with --lock (not --frozen) to update the lock file, then commit it",
      );
    }
    return entry;
  }

  /**
   * Records how a specifier resolved. A different integrity than the locked one fails
   * closed; under `--frozen` so does any difference; under `--lock` new entries are kept
   * for {@link save}.
   */
  record(specifier: string, entry: LockEntry): void {
    const prev = this.#entries.get(specifier);
    if (prev) {
      if (integrityConflict(prev.integrity, entry.integrity) || prev.resolved !== entry.resolved) {
        throw lockError(
          "plugin_lock_mismatch",
          `${
            quote(specifier)
          } resolved to ${entry.resolved} (${entry.integrity}), but ${this.path} ` +
            `locks ${prev.resolved} (${prev.integrity})`,
          "The content changed since it was locked. If that is expected, delete the entry and " +
            "run with --lock",
        );
      }
      return;
    }
    if (this.mode === "frozen") {
      this.lookup(specifier);
      return;
    }
    if (this.mode === "update") {
      this.#entries.set(specifier, entry);
      this.#changed = true;
    }
  }

  /** Writes the lock file when `--lock` added entries; returns true when it wrote. */
  save(): boolean {
    if (this.mode !== "update" || (!this.#changed && existsSync(this.path))) return false;
    const plugins: Record<string, LockEntry> = {};
    for (const spec of this.specifiers()) {
      const e = this.#entries.get(spec)!;
      plugins[spec] = e.version === undefined
        ? { resolved: e.resolved, integrity: e.integrity }
        : { resolved: e.resolved, version: e.version, integrity: e.integrity };
    }
    writeFileAtomic(
      this.path,
      JSON.stringify({ version: LOCK_FORMAT_VERSION, plugins }, null, 2) + "\n",
    );
    this.#changed = false;
    return true;
  }
}

/** Where `vf.lock` lives: beside the first config file, else in `cwd`. */
export function lockPathFor(configFiles: readonly string[], cwd: string): string {
  const first = configFiles[0];
  const dir = first === undefined ? cwd : dirname(isAbsolute(first) ? first : resolve(cwd, first));
  return join(dir, LOCK_FILE_NAME);
}

/**
 * Opens the lock of a launch: `frozen` wins over `lock`; without either, an existing
 * lock file is honoured read-only and a missing one means no lock (undefined).
 */
export function openPluginLock(
  path: string,
  switches: { lock?: boolean; frozen?: boolean },
): PluginLock | undefined {
  const mode: LockMode = switches.frozen ? "frozen" : switches.lock ? "update" : "read";
  if (mode === "read" && !existsSync(path)) return undefined;
  return PluginLock.open(path, mode);
}
