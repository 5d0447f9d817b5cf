/**
 * The background-job protocol `run()` uses (after the SDK's `start_background_job`,
 * `sandbox.py`@66fb4b70, adapted): a command is started
 * detached in the sandbox with its output, exit code and process-group id written to files
 * under `/tmp/vf-jobs/<job>/`, then the client polls `read-file` for the exit file. Jobs
 * outlive any single gateway request, so a long command never depends on one HTTP
 * exchange, and a gateway outage is ridden out by polling the same job again.
 *
 * The command runs in its own session (`setsid`, when the image has it), so a timeout or a
 * cancellation kills its whole process group with one `kill -KILL -<pgid>`.
 *
 * @module
 */

/** Where job directories live inside the sandbox. */
export const JOB_ROOT = "/tmp/vf-jobs";

/** Names allowed for environment variables (as the Prime SDK checks them). */
export const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** POSIX single-quoting: safe for any string. */
export function shellQuote(s: string): string {
  return `'${s.replaceAll("'", "'\\''")}'`;
}

/**
 * The job driver, run as `sh -c DRIVER vf-job <dir> <cwd> <argv...>`. It starts the
 * command in a new session whose leader records its pid (= the process-group id), waits,
 * and writes the exit code atomically.
 */
const DRIVER = [
  "d=$1; w=$2; shift 2",
  'if [ -f "$d/stdin" ]; then i="$d/stdin"; else i=/dev/null; fi',
  "s=; if command -v setsid >/dev/null 2>&1; then s=setsid; fi",
  `$s sh -c 'echo $$ > "$0/pgid.tmp" && mv "$0/pgid.tmp" "$0/pgid"; cd "$1" || exit 1; shift; exec "$@"' "$d" "$w" "$@" < "$i" > "$d/stdout" 2> "$d/stderr"`,
  'echo $? > "$d/exit.tmp"; mv "$d/exit.tmp" "$d/exit"',
].join("\n");

/** One job's paths. */
export interface JobPaths {
  dir: string;
  stdout: string;
  stderr: string;
  exit: string;
  stdin: string;
}

/** The paths of job `id`. */
export function jobPaths(id: string): JobPaths {
  const dir = `${JOB_ROOT}/${id}`;
  return {
    dir,
    stdout: `${dir}/stdout`,
    stderr: `${dir}/stderr`,
    exit: `${dir}/exit`,
    stdin: `${dir}/stdin`,
  };
}

/**
 * The shell command that starts a job and returns at once. `cleanup` lists directories
 * of finished jobs to remove on the way (saves a request per run).
 */
export function jobLaunchCommand(
  id: string,
  argv: readonly string[],
  cwd: string,
  env: Record<string, string>,
  cleanup: readonly string[] = [],
): string {
  const p = jobPaths(id);
  const parts: string[] = [];
  if (cleanup.length) parts.push(`rm -rf ${cleanup.map(shellQuote).join(" ")} 2>/dev/null;`);
  // `;` between steps: a trailing `&` must background the job alone, not an and-list
  // (a backgrounded and-list is a subshell that keeps the exec's output pipe open)
  parts.push(`mkdir -p ${shellQuote(p.dir)} || exit 1;`);
  for (const [k, v] of Object.entries(env)) {
    if (!ENV_NAME.test(k)) throw new RangeError(`invalid environment variable name "${k}"`);
    parts.push(`export ${k}=${shellQuote(v)};`);
  }
  parts.push(
    `nohup sh -c ${shellQuote(DRIVER)} vf-job ${shellQuote(p.dir)} ${shellQuote(cwd)} ${
      argv.map(shellQuote).join(" ")
    } </dev/null >/dev/null 2>&1 &`,
  );
  return parts.join(" ");
}

/**
 * The shell command that kills a job's process group (waiting briefly for it to record
 * its group id), then waits up to ~3 s for the job's exit file.
 */
export function jobKillCommand(id: string): string {
  const d = shellQuote(jobPaths(id).dir);
  return [
    `d=${d}; i=0`,
    'while [ ! -s "$d/pgid" ] && [ ! -f "$d/exit" ] && [ "$i" -lt 50 ]; do sleep 0.1; i=$((i+1)); done',
    'if [ ! -f "$d/exit" ] && [ -s "$d/pgid" ]; then p=$(cat "$d/pgid"); kill -KILL "-$p" 2>/dev/null || kill -KILL "$p" 2>/dev/null; fi',
    'i=0; while [ ! -f "$d/exit" ] && [ "$i" -lt 60 ]; do sleep 0.05; i=$((i+1)); done',
    "true",
  ].join("\n");
}

/** Parses an exit file's content; null while the job has not finished. */
export function parseExitFile(content: string | null | undefined): number | null {
  if (content === null || content === undefined) return null;
  const t = content.trim();
  if (!/^-?\d+$/.test(t)) return null;
  return Number(t);
}
