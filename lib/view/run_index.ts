/**
 * An index of one run directory's `traces.jsonl`: the byte offset and length of every
 * complete line plus its compact {@link EpisodeRow}, built by streaming the file in
 * chunks and extended by {@link RunIndex.refresh} as a live run appends lines. A line
 * that is not JSON is counted and skipped; a last line without its newline waits for the
 * next refresh; a file that shrank or was replaced (a resume rewrites it) is indexed anew.
 * Episodes are read back one at a time by offset.
 *
 * @module
 */
import {
  closeSync,
  existsSync,
  fstatSync,
  openSync,
  readFileSync,
  readSync,
  statSync,
} from "node:fs";
import { basename, join, resolve } from "node:path";
import { InputError } from "../../kit/errors.ts";
import { type EpisodeRow, episodeRow } from "./episode_row.ts";
import {
  type CheckRow,
  configFile,
  readChecks,
  replaySource,
  type RunKind,
  runKind,
} from "./check_view.ts";

const CHUNK = 1 << 20;
const decoder = new TextDecoder();

/** Reads a JSON file, or null when it is missing or not JSON. */
function readJson(path: string): unknown {
  try {
    return JSON.parse(readFileSync(path, "utf8"));
  } catch {
    return null;
  }
}

/** The index of one run: its files, its episode rows and where each line lies. */
export class RunIndex {
  /** The run directory (absolute). */
  readonly dir: string;
  /** Path of its `traces.jsonl`. */
  readonly tracesPath: string;
  /** One row per readable episode line, in file order. */
  rows: EpisodeRow[] = [];
  /** `summary.json` when present and JSON (written at the end of a run). */
  summary: unknown = null;
  /** `configs/<kind>.json` (`eval.json`, `validate.json`, `replay.json`) when present. */
  config: unknown = null;
  /** Which command wrote the run. */
  readonly kind: RunKind;
  /** A validate run's task checks (`results.jsonl`), in file order. */
  checks: CheckRow[] = [];
  /** A replay run's source, when it is among the runs viewed (set by the caller). */
  sourceRun: number | null = null;
  /** Complete lines that were not JSON objects. */
  unreadable = 0;
  /** Bumps whenever anything the page shows may have changed. */
  version = 0;
  #offsets: number[] = [];
  #lengths: number[] = [];
  #indexed = 0;
  #ino = -1;
  #summaryMtime = -1;
  #checksStamp = "";

  /** Opens `path`: a run directory, or a `traces.jsonl` file directly. Exit 2 if neither. */
  constructor(path: string) {
    const abs = resolve(path);
    let isFile = false;
    try {
      isFile = statSync(abs).isFile();
    } catch {
      throw new InputError("view_no_run", `No such run directory: ${path}`, {
        hint: "pass a run directory written by `vf eval` (it holds traces.jsonl)",
      });
    }
    this.dir = isFile ? resolve(abs, "..") : abs;
    this.tracesPath = isFile ? abs : join(abs, "traces.jsonl");
    if (
      !isFile && !existsSync(this.tracesPath) && !existsSync(join(abs, "summary.json")) &&
      !existsSync(join(abs, "configs"))
    ) {
      throw new InputError("view_no_run", `Not a run directory: ${path} (no traces.jsonl)`, {
        hint: "pass a run directory written by `vf eval` or Python verifiers (<output_dir>/<run>)",
      });
    }
    this.kind = isFile ? "eval" : runKind(abs);
    this.config = readJson(configFile(this.dir, this.kind));
    this.refresh();
  }

  /** The directory's name, used as the run's default title. */
  get name(): string {
    return basename(this.dir);
  }

  /** Reads what was appended since the last call; true when something changed. */
  refresh(): boolean {
    let changed = this.#refreshSummary();
    if (this.kind === "validate" && this.#refreshChecks()) changed = true;
    let st;
    try {
      st = statSync(this.tracesPath);
    } catch {
      if (changed) this.version++;
      return changed;
    }
    if (st.ino !== this.#ino || st.size < this.#indexed) {
      if (this.#ino !== -1) changed = true;
      this.#ino = st.ino;
      this.#reset();
    }
    if (st.size > this.#indexed && this.#scan()) changed = true;
    if (changed) this.version++;
    return changed;
  }

  #refreshSummary(): boolean {
    const path = join(this.dir, "summary.json");
    let mtime = -2;
    try {
      mtime = statSync(path).mtimeMs;
    } catch { /* no summary yet */ }
    if (mtime === this.#summaryMtime) return false;
    this.#summaryMtime = mtime;
    this.summary = mtime === -2 ? null : readJson(path);
    return true;
  }

  /** Re-reads a validate run's `results.jsonl` when its size or mtime changed. */
  #refreshChecks(): boolean {
    let stamp = "none";
    try {
      const st = statSync(join(this.dir, "results.jsonl"));
      stamp = `${st.ino}:${st.size}:${st.mtimeMs}`;
    } catch { /* not written yet */ }
    if (stamp === this.#checksStamp) return false;
    this.#checksStamp = stamp;
    this.checks = readChecks(this.dir);
    return true;
  }

  #reset() {
    this.rows = [];
    this.#offsets = [];
    this.#lengths = [];
    this.#indexed = 0;
    this.unreadable = 0;
  }

  /** Indexes complete lines from `#indexed` on; true when a line was added. */
  #scan(): boolean {
    const fd = openSync(this.tracesPath, "r");
    let added = false;
    try {
      const size = fstatSync(fd).size;
      let pos = this.#indexed;
      let carry: Uint8Array | null = null;
      let carryStart = pos;
      const buf = new Uint8Array(CHUNK);
      while (pos < size) {
        const got = readSync(fd, buf, 0, Math.min(CHUNK, size - pos), pos);
        if (got <= 0) break;
        let data = buf.subarray(0, got);
        let dataStart = pos;
        if (carry) {
          const joined = new Uint8Array(carry.length + got);
          joined.set(carry);
          joined.set(data, carry.length);
          data = joined;
          dataStart = carryStart;
          carry = null;
        }
        let lineStart = 0;
        for (let nl = data.indexOf(10); nl !== -1; nl = data.indexOf(10, lineStart)) {
          if (this.#addLine(data.subarray(lineStart, nl), dataStart + lineStart)) added = true;
          lineStart = nl + 1;
        }
        this.#indexed = dataStart + lineStart;
        if (lineStart < data.length) {
          carry = data.slice(lineStart);
          carryStart = dataStart + lineStart;
        }
        pos += got;
      }
    } finally {
      closeSync(fd);
    }
    return added;
  }

  #addLine(bytes: Uint8Array, offset: number): boolean {
    if (bytes.length === 0 || (bytes.length === 1 && bytes[0] === 13)) return false;
    let value: unknown;
    try {
      value = JSON.parse(decoder.decode(bytes));
    } catch {
      this.unreadable++;
      return true;
    }
    if (typeof value !== "object" || value === null || Array.isArray(value)) {
      this.unreadable++;
      return true;
    }
    this.rows.push(episodeRow(value));
    this.#offsets.push(offset);
    this.#lengths.push(bytes.length);
    return true;
  }

  /** The raw JSON text of episode `i` (file order), or null when there is none. */
  episodeText(i: number): string | null {
    if (!Number.isInteger(i) || i < 0 || i >= this.rows.length) return null;
    const length = this.#lengths[i];
    const offset = this.#offsets[i];
    if (length === undefined || offset === undefined) return null;
    const fd = openSync(this.tracesPath, "r");
    try {
      const buf = new Uint8Array(length);
      readSync(fd, buf, 0, buf.length, offset);
      return decoder.decode(buf);
    } finally {
      closeSync(fd);
    }
  }
}

/**
 * Opens the runs in `paths`, then, for each replay among them, its source run (appended
 * unless it is already open), setting the replay's {@link RunIndex.sourceRun}.
 */
export function openRuns(paths: string[]): RunIndex[] {
  const runs = paths.map((p) => new RunIndex(p));
  for (const run of [...runs]) {
    if (run.kind !== "replay") continue;
    const source = replaySource(run.dir, run.summary);
    if (source === null) continue;
    let at = runs.findIndex((r) => r.dir === source);
    if (at === -1) {
      try {
        runs.push(new RunIndex(source));
        at = runs.length - 1;
      } catch {
        continue; // no longer a run folder: the replay is shown alone
      }
    }
    run.sourceRun = at;
  }
  return runs;
}
