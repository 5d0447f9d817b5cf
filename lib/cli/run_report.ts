/**
 * What the end of a run says about what went wrong, in every display mode: the top error
 * kinds with one real message each (the provider's HTTP status and message, the missing
 * command, the path), where the full log is, and the command that resumes the run when
 * episodes are still owed. Also the exit code rule for a run whose every episode errored.
 *
 * @module
 */
import { existsSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import type { RunSummary } from "../run/summary.ts";

/** Exit code of a run whose every episode errored (the same as past `--fail-on-error`). */
export const ALL_ERRORED_EXIT = 3;

/** How many error kinds the report names. */
const TOP_KINDS = 3;

/** Reads a run's `summary.json`, or null when there is none (the run never started). */
export function readRunSummary(runDir: string): RunSummary | null {
  try {
    return JSON.parse(readFileSync(join(runDir, "summary.json"), "utf8")) as RunSummary;
  } catch {
    return null;
  }
}

/** True when the run wrote episodes and every one of them errored. */
export function everyEpisodeErrored(s: RunSummary): boolean {
  return s.counts.episodes > 0 && s.counts.errored_episodes === s.counts.episodes;
}

/** Episodes the run still owes: errored ones are redone by a resume, missing ones run. */
function owedEpisodes(s: RunSummary): number {
  return Math.max(0, s.counts.expected - (s.counts.episodes - s.counts.errored_episodes));
}

/** A path as the user would type it: relative to `cwd` when inside it. */
function shown(path: string, cwd: string): string {
  const rel = relative(cwd, path);
  return rel && !rel.startsWith("..") && !rel.startsWith("/") ? rel : path;
}

/** What to try for an error kind, from its example message and status. */
function nextStep(type: string, message: string, status: number | null): string | null {
  if (type === "ProviderError") {
    if (status === 401 || status === 403) {
      return "check the API key (is the variable --client.api-key-var names set?) and the endpoint";
    }
    if (status === 404) return "check the model name (-m) and the endpoint (--client.base-url)";
    if (status === 429) return "lower -c/--max-concurrent or wait for the provider's rate limit";
    if (/ECONNREFUSED|connect|refused|ENOTFOUND|getaddrinfo|fetch failed/i.test(message)) {
      return "is the endpoint up? check --client.base-url";
    }
  }
  if (type === "HarnessError" && /not found|ENOENT|No such file/i.test(message)) {
    return "check the agent command (env.agent.harness.command) and that it is installed";
  }
  if (/timed out|timeout/i.test(message)) {
    return "raise env.timeout.episode or the agent's timeout, or lower the work per task";
  }
  return null;
}

/**
 * The lines printed after a run (stderr): nothing for a clean, complete run; otherwise the
 * error kinds with an example message each, the log file, and the resume command.
 */
export function runReport(s: RunSummary, runDir: string, cwd: string): string[] {
  const lines: string[] = [];
  const dir = shown(runDir, cwd);
  const owed = owedEpisodes(s);
  const resume = `vf eval --resume ${dir}`;
  if (s.status === "cancelled") lines.push(`stopped — resume with: ${resume}`);
  const kinds = Object.entries(s.errors_by_type ?? {}).sort((a, b) => b[1] - a[1]);
  if (kinds.length) {
    lines.push(
      `${s.counts.errored_episodes} of ${s.counts.episodes} episodes errored` +
        (everyEpisodeErrored(s) ? " (all of them)" : "") + ":",
    );
    for (const [type, count] of kinds.slice(0, TOP_KINDS)) {
      const ex = s.error_examples?.[type];
      const status = ex?.status_code ? ` [HTTP ${ex.status_code}]` : "";
      lines.push(`  ${type} ×${count}${status}: ${ex?.message || "(no message)"}`);
      const step = ex ? nextStep(type, ex.message, ex.status_code) : null;
      if (step) lines.push(`    hint: ${step}`);
    }
    if (kinds.length > TOP_KINDS) {
      lines.push(`  … and ${kinds.slice(TOP_KINDS).map(([t, n]) => `${t} ×${n}`).join(", ")}`);
    }
  }
  if (!lines.length) return lines;
  const log = join(runDir, "logs", "latest", "eval.log");
  lines.push(
    `full log: ${shown(existsSync(log) ? log : join(runDir, "logs"), cwd)} · traces: ${
      shown(join(runDir, "traces.jsonl"), cwd)
    }`,
  );
  if (owed > 0 && s.status !== "cancelled") {
    lines.push(`resume with: ${resume}   (runs the ${owed} owed episode${owed === 1 ? "" : "s"})`);
  }
  return lines;
}
