/**
 * The in-sandbox process-group protocol of remote runtimes: every command a remote runtime
 * may have to kill runs in its own session (`setsid`, when the image has it) whose leader
 * records its process-group id in a file, so a timeout or a cancellation kills the whole
 * group with one `kill -KILL -<pgid>` sent by a second, short command ({@link killCommand}).
 *
 * Two ways to run such a command, for the two kinds of provider exec:
 * - attached ({@link groupWrapperArgv}): the provider's exec lasts as long as the command
 *   (a stream, e.g. Modal's task command router); the wrapper waits and exits with the
 *   command's status.
 * - detached ({@link jobLaunchArgv}, after the Prime SDK's `start_background_job`,
 *   `packages/prime-sandboxes/src/prime_sandboxes/sandbox.py@66fb4b70`, adapted): the
 *   provider's exec is one short request, so the command starts in the background with its
 *   output, exit code and group id written to files under `/tmp/vf-jobs/<job>/`, and the
 *   runtime polls the exit file. A gateway outage is ridden out by polling the same job again.
 *
 * Every script takes its inputs as positional arguments, never spliced into its text.
 *
 * @module
 */

/** Names allowed for environment variables (as the Prime SDK checks them). */
export const ENV_NAME: RegExp = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** POSIX single-quoting: safe for any string. */
export function shellQuote(s: string): string {
  return `'${s.replaceAll("'", "'\\''")}'`;
}

/** One shell command line for `argv`: words quoted only when the shell would change them. */
export function shellJoin(argv: readonly string[]): string {
  return argv.map((a) => /^[A-Za-z0-9_./=:@%+,-]+$/.test(a) ? a : shellQuote(a)).join(" ");
}

/**
 * `sh -c GROUP_WRAPPER vf-run <pgidfile> <argv...>`: runs argv in its own session with the
 * wrapper's stdin, records the group id in `<pgidfile>`, and exits with the command's status
 * (128+N when signal N killed it).
 */
const GROUP_WRAPPER = `f=$1; shift
exec 3<&0
if command -v setsid >/dev/null 2>&1; then setsid "$@" <&3 3<&- & else "$@" <&3 3<&- & fi
p=$!
echo "$p" > "$f"
wait "$p" 2>/dev/null; s=$?
rm -f "$f"
exit "$s"`;

/** The argv that runs `argv` attached, killable through `pgidFile` by {@link killCommand}. */
export function groupWrapperArgv(pgidFile: string, argv: readonly string[]): string[] {
  return ["sh", "-c", GROUP_WRAPPER, "vf-run", pgidFile, ...argv];
}

/**
 * `sh -c KILL_GROUP vf-kill <pgidfile> [<exitfile>]`: waits up to 5 s for the group id
 * (or the exit file), SIGKILLs the group, then waits up to 3 s for the exit file when one is
 * named. Always exits 0.
 */
const KILL_GROUP = `f=$1; x=$2; i=0
while [ ! -s "$f" ] && { [ -z "$x" ] || [ ! -f "$x" ]; } && [ "$i" -lt 100 ]; do sleep 0.05; i=$((i+1)); done
if { [ -z "$x" ] || [ ! -f "$x" ]; } && [ -s "$f" ]; then
  p=$(cat "$f") && { kill -KILL "-$p" 2>/dev/null || kill -KILL -- "-$p" 2>/dev/null || kill -KILL "$p" 2>/dev/null; }
fi
if [ -n "$x" ]; then i=0; while [ ! -f "$x" ] && [ "$i" -lt 60 ]; do sleep 0.05; i=$((i+1)); done; fi
exit 0`;

/** The argv that kills the group recorded in `pgidFile` (and waits for `exitFile`, if given). */
export function killCommand(pgidFile: string, exitFile?: string): string[] {
  return ["sh", "-c", KILL_GROUP, "vf-kill", pgidFile, ...(exitFile ? [exitFile] : [])];
}

/** Where job directories live inside the sandbox. */
const JOB_ROOT = "/tmp/vf-jobs";

/**
 * The job driver, `sh -c JOB_DRIVER vf-job <dir> <cwd> <argv...>`: starts the command in a
 * new session whose leader records its pid (= the group id), waits, and writes the exit
 * code atomically.
 */
const JOB_DRIVER = [
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
  pgid: string;
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
    pgid: `${dir}/pgid`,
  };
}

/**
 * The shell line that starts a job and returns at once. `cleanup` lists directories of
 * finished jobs to remove on the way (saves a request per run).
 */
function jobLaunchLine(
  id: string,
  argv: readonly string[],
  cwd: string,
  env: Record<string, string>,
  cleanup: readonly string[],
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
    `nohup sh -c ${shellQuote(JOB_DRIVER)} vf-job ${shellQuote(p.dir)} ${shellQuote(cwd)} ${
      argv.map(shellQuote).join(" ")
    } </dev/null >/dev/null 2>&1 &`,
  );
  return parts.join(" ");
}

/** The argv that starts job `id` detached and returns at once (see {@link jobLaunchLine}). */
export function jobLaunchArgv(
  id: string,
  argv: readonly string[],
  cwd: string,
  env: Record<string, string>,
  cleanup: readonly string[] = [],
): string[] {
  return ["sh", "-c", jobLaunchLine(id, argv, cwd, env, cleanup)];
}

/** Parses an exit file's content; null while the job has not finished. */
export function parseExitFile(content: string | null | undefined): number | null {
  if (content === null || content === undefined) return null;
  const t = content.trim();
  if (!/^-?\d+$/.test(t)) return null;
  return Number(t);
}
