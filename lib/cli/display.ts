/**
 * What a run shows while it runs, on stderr (stdout is for data only):
 *
 * - `rich`: a live view redrawn in place — progress `done/total` with a bar, rate, ETA,
 *   elapsed, mean reward (over clean traces; the all-traces mean in parentheses when some
 *   errored), error fraction, episodes in flight, and the errors seen so far by type;
 * - `plain`: one progress line every few seconds (for logs and CI);
 * - `json` and `none`: nothing live.
 *
 * `auto` is `rich` on a terminal and `plain` when stderr is not a terminal or `CI` is set.
 * Nothing here reads input: a run never prompts.
 *
 * @module
 */
import type { DISPLAY_MODES } from "../config/eval_config.ts";
import type { LiveDisplay, ProgressSnapshot, RunHeading } from "../run/progress.ts";

export type { LiveDisplay, ProgressSnapshot } from "../run/progress.ts";

/** A display mode after `auto` is resolved. */
export type DisplayMode = "rich" | "plain" | "json" | "none";

/** Resolves `auto`: rich on a terminal outside CI, else plain. */
export function resolveDisplayMode(
  mode: (typeof DISPLAY_MODES)[number],
  env: { stderrIsTTY: boolean; ci: boolean },
): DisplayMode {
  if (mode !== "auto") return mode;
  return env.stderrIsTTY && !env.ci ? "rich" : "plain";
}

/** True when a `CI` variable value means "running in CI". */
export function isCiValue(value: string | undefined): boolean {
  return value !== undefined && value !== "" && value !== "0" && value.toLowerCase() !== "false";
}

/** Options of {@link createDisplay}. */
export interface DisplayOptions {
  /** Lines shown once above the live view (run identity, model, output). */
  header: string[];
  snapshot(): ProgressSnapshot;
  /** Raw stderr writer (no newline added). */
  write(text: string): void;
  /** ANSI colours allowed. */
  color: boolean;
  /** Terminal width for the rich view. @default 100 */
  columns?(): number;
  /** Redraw (rich) or line (plain) interval. @default 250 ms rich, 5000 ms plain */
  intervalMs?: number | undefined;
}

/** A base URL as shown: without credentials, query or fragment. */
function shownUrl(url: string): string {
  try {
    const u = new URL(url);
    u.username = "";
    u.password = "";
    u.search = "";
    u.hash = "";
    return u.toString().replace(/\/$/, "");
  } catch {
    return "(invalid URL)";
  }
}

/** `1 task`, `3 tasks`. */
const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;

/** The lines above the live view: what runs, with which model, how much, and where to. */
export function headerLines(run: RunHeading): string[] {
  const model = run.model === "oracle"
    ? "oracle (reference solutions)"
    : `${run.model} via ${shownUrl(run.baseUrl)}`;
  return [
    `vf eval · ${run.envId} · ${run.harness} harness · ${run.runtime} runtime`,
    `model    ${model}`,
    `run      ${plural(run.tasks, "task")} × ${plural(run.rollouts, "rollout")} · ` +
    `≤${run.maxConcurrent} in flight` +
    (run.kept ? ` · resuming: ${run.kept} kept, ${run.owed} owed` : ""),
    `output   ${run.runDir ?? "(in memory)"}`,
  ];
}

/** `1.5` → "1s"; 75 → "1m15s"; 3725 → "1h02m". */
export function formatDuration(seconds: number): string {
  if (!Number.isFinite(seconds) || seconds < 0) return "—";
  const s = Math.round(seconds);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, "0")}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, "0")}m`;
}

const fmt = (v: number | null, digits = 3) => (v === null ? "—" : v.toFixed(digits));

/** The figures of a snapshot as short texts. */
function progressFigures(p: ProgressSnapshot) {
  const ran = p.done - p.kept;
  const rate = p.elapsedS > 0 ? ran / p.elapsedS : 0;
  const left = Math.max(0, p.total - p.done);
  const eta = left === 0 ? "0s" : rate > 0 ? formatDuration(left / rate) : "—";
  const pct = p.total > 0 ? (100 * p.done) / p.total : 100;
  const reward = p.erroredTraces > 0
    ? `${fmt(p.reward.mean)} (${fmt(p.reward.mean_all)})`
    : fmt(p.reward.mean);
  const err = p.done > 0 ? (p.erroredEpisodes / p.done).toFixed(3) : "—";
  return {
    count: `${p.done}/${p.total}`,
    pct: `${pct.toFixed(1)}%`,
    rate: `${rate >= 10 ? rate.toFixed(0) : rate.toFixed(1)}/s`,
    eta,
    elapsed: formatDuration(p.elapsedS),
    reward,
    err,
    inFlight: String(p.inFlight),
  };
}

/** The one-line progress of the plain display. */
export function plainLine(p: ProgressSnapshot): string {
  const f = progressFigures(p);
  return `progress ${f.count} (${f.pct}) · ${f.rate} · ETA ${f.eta} · elapsed ${f.elapsed} · ` +
    `${p.rewardLabel ?? "reward"} ${f.reward} · err ${f.err} · in flight ${f.inFlight}` +
    (p.errors.length ? ` · errors ${p.errors.map((e) => `${e.type} ${e.count}`).join(", ")}` : "");
}

function paint(on: boolean, text: string, code: number): string {
  return on ? `\x1b[${code}m${text}\x1b[0m` : text;
}

/** An ANSI colour sequence at the start of a string. */
const SGR = new RegExp("^\u001b\\[[0-9;]*m");

/** Cuts a line to `width` visible characters (ANSI sequences do not count). */
function fit(line: string, width: number): string {
  let visible = 0;
  let out = "";
  for (let i = 0; i < line.length; i++) {
    if (line[i] === "\x1b") {
      const m = SGR.exec(line.slice(i));
      if (m) {
        out += m[0];
        i += m[0].length - 1;
        continue;
      }
    }
    if (visible >= width - 1) return out + "…" + (out.includes("\x1b[") ? "\x1b[0m" : "");
    out += line[i];
    visible++;
  }
  return out;
}

/** The lines of the rich live view. */
export function richLines(p: ProgressSnapshot, color: boolean, width: number): string[] {
  const f = progressFigures(p);
  const barWidth = Math.max(10, Math.min(30, width - 60));
  const filled = p.total > 0 ? Math.round((barWidth * p.done) / p.total) : barWidth;
  const bar = paint(color, "█".repeat(filled), 32) + paint(color, "░".repeat(barWidth - filled), 2);
  const lines = [
    `${bar} ${paint(color, f.count, 1)} ${f.pct} · ${f.rate} · ETA ${f.eta} · elapsed ${f.elapsed}`,
    `${p.rewardLabel ?? "reward"} ${paint(color, f.reward, 1)} · err ${
      p.erroredEpisodes > 0 ? paint(color, f.err, 31) : f.err
    } · ${f.inFlight} in flight`,
  ];
  for (const e of p.errors.slice(0, 3)) {
    lines.push(`  ${paint(color, `${e.type} ×${e.count}`, 31)} ${paint(color, e.last, 2)}`);
  }
  if (p.errors.length > 3) lines.push(`  … ${p.errors.length - 3} more error types`);
  return lines.map((l) => fit(l, width));
}

/** Makes the display of a resolved mode. */
export function createDisplay(mode: DisplayMode, options: DisplayOptions): LiveDisplay {
  if (mode === "rich") return new RichDisplay(options);
  if (mode === "plain") return new PlainDisplay(options);
  return {
    start() {},
    update() {},
    log: (line) => options.write(line.endsWith("\n") ? line : line + "\n"),
    stop() {},
  };
}

class PlainDisplay implements LiveDisplay {
  #o: DisplayOptions;
  #timer: ReturnType<typeof setInterval> | undefined;
  #stopped = false;
  constructor(o: DisplayOptions) {
    this.#o = o;
  }
  start() {
    for (const h of this.#o.header) this.#o.write(h + "\n");
    this.#timer = setInterval(() => this.#line(), this.#o.intervalMs ?? 5000);
    (this.#timer as { unref?: () => void }).unref?.();
  }
  #line() {
    this.#o.write(plainLine(this.#o.snapshot()) + "\n");
  }
  update() {}
  log(line: string) {
    this.#o.write(line.endsWith("\n") ? line : line + "\n");
  }
  stop() {
    if (this.#stopped) return;
    this.#stopped = true;
    clearInterval(this.#timer);
    this.#line();
  }
}

class RichDisplay implements LiveDisplay {
  #o: DisplayOptions;
  #timer: ReturnType<typeof setInterval> | undefined;
  #drawn = 0;
  #dirty = true;
  #lastDraw = 0;
  #stopped = false;
  constructor(o: DisplayOptions) {
    this.#o = o;
  }
  start() {
    for (const h of this.#o.header) this.#o.write(h + "\n");
    this.#draw();
    this.#timer = setInterval(() => {
      // redraw on change, and at least every second (elapsed, ETA)
      if (this.#dirty || Date.now() - this.#lastDraw >= 1000) this.#draw();
    }, this.#o.intervalMs ?? 250);
    (this.#timer as { unref?: () => void }).unref?.();
  }
  #erase(): string {
    // cursor to the start of the first drawn line, then clear to the end of the screen
    return this.#drawn > 0 ? `\x1b[${this.#drawn}F\x1b[J` : "";
  }
  #draw() {
    const width = Math.max(40, this.#o.columns?.() ?? 100);
    const lines = richLines(this.#o.snapshot(), this.#o.color, width);
    this.#o.write(this.#erase() + lines.join("\n") + "\n");
    this.#drawn = lines.length;
    this.#dirty = false;
    this.#lastDraw = Date.now();
  }
  update() {
    this.#dirty = true;
  }
  log(line: string) {
    if (this.#stopped) return this.#o.write(line.endsWith("\n") ? line : line + "\n");
    const width = Math.max(40, this.#o.columns?.() ?? 100);
    const lines = richLines(this.#o.snapshot(), this.#o.color, width);
    this.#o.write(
      this.#erase() + (line.endsWith("\n") ? line : line + "\n") + lines.join("\n") + "\n",
    );
    this.#drawn = lines.length;
  }
  stop() {
    if (this.#stopped) return;
    this.#stopped = true;
    clearInterval(this.#timer);
    this.#draw();
  }
}
