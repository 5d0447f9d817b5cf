/**
 * The help of every `vf` command and subcommand other than `vf eval` (whose help lists the
 * config fields of the plugins it names, see `eval_command.ts`): each with its own usage and
 * examples. A group (`vf plugins`, `vf sandboxes`, `vf sandbox`, `vf bridge`) lists its
 * subcommands.
 *
 * @module
 */

/** Commands made of subcommands, with each subcommand's one-line summary. */
export const GROUPS: Record<string, Record<string, string>> = {
  plugins: {
    list: "built-in tasksets, harnesses, judges and runtimes",
    show: "a plugin's description and config fields",
  },
  sandboxes: {
    list: "remote sandboxes not yet confirmed stopped (the ledger)",
    gc: "stop them, with confirmation, and forget them",
  },
  harnesses: {
    list: "the harnesses that install agents, and whether this host has them",
    install: "install agents ahead of a run (once per version per host)",
    prune: "remove agent installs of other versions (--all: every one)",
  },
  sandbox: {
    exec: "start a sandbox, run one command in it, confirm-stop it",
  },
  shards: {
    status: "done / owed / errored slots of each shard of a sharded run",
    k8s: "print a Kubernetes Indexed Job of the shards and its merge Job",
    slurm: "print an sbatch --array submission of the shards with a merge step",
  },
  bridge: {
    "prime-eval": "run a `prime eval` call (a v1 config or a taskset id) as vf eval",
  },
};

const TEXTS: Record<string, string> = {
  "validate-config":
    `Usage: vf validate-config [<taskset>] [@ config.toml|eval.json ...] [--dotted.flags ...]

Checks a config the way vf eval would read it — TOML or JSON files (a Python verifiers
eval.json too), flags, and every plugin section against its plugin's schema — without a
model, without writing anything and without running a rollout. Exit 0 when valid, 2 with
every problem otherwise. Takes the same sources and flags as vf eval (vf eval <taskset>
--help lists them).

Examples:
  vf validate-config @ examples/quickstart.toml
  vf validate-config @ outputs/<run>/configs/eval.json
  vf validate-config addition --env.taskset.digits 5
  vf validate-config ./vf-mathsets/mod.ts --env.taskset.count 3   # a plugin module`,

  validate: `Usage: vf validate [<taskset>] [--only-setup | --only-gold] [@ config.toml ...] [flags]
       vf validate --resume <run-dir>   (re-runs missing, errored and timed-out tasks)

Checks a taskset without a model: for each task, a fresh runtime, the task's setup, then
its gold \`validate\` hook (a taskset without one passes), and again setup alone.
--only-gold runs setup + validate only, --only-setup setup only. --timeout.setup <s> bounds
setup (default: the task's own), --timeout.total <s> the validate hook; a check past its
timeout is cut and reported. Runtime flags as eval's under --runtime.* (--runtime.type
docker); -n, -s, -c, -o, --run.name, --clean, --json (or --display) as in vf eval. Writes
<output_dir>/<taskset>--validate--<id>/ with configs/validate.json, results.jsonl (one row
per task), summary.json and logs/validate.log. Exit 0 all valid, 3 some task not valid,
2 bad input, 130 stopped.

Examples:
  vf validate shell-basics
  vf validate reverse-text --only-gold -n 5 --json
  vf validate shell-basics --only-setup --timeout.setup 30 --runtime.type subprocess`,

  replay: `Usage: vf replay <run-dir> [@ config.toml ...] [flags]

Re-scores a finished run's saved traces — a vf eval run or a Python verifiers one — with
the rewards, metrics and judges of the layered config, without sampling again. The run's
saved config is the base; @ files and flags go over it, and --taskset.task.judges '[...]'
replaces its judges (built-in, plugged or from a specifier). Hooks get no runtime; a
rollout that errored is kept as it was. -n <count> re-scores the first traces only,
-r <count> scores each trace that many times (judge variance, reported per task as mean ±
standard deviation). Writes a new folder, outputs/<taskset>--replay/<uuid> (or -o <dir>),
with configs/replay.json, traces.jsonl, summary.json and logs/replay.log; the source is
never written. --dry-run writes the config only; --json prints the summary as JSON.

Examples:
  vf replay outputs/<run>
  vf replay outputs/<run> -n 2 -r 3 --json
  vf replay outputs/<run> --dry-run`,

  debug:
    `Usage: vf debug [<taskset>] (--command <cmd> | --script-path <file>) [@ config.toml ...] [flags]

Opens each selected task's runtime as a rollout would — a fresh runtime, then the task's
setup — and runs one action there: --command as \`sh -lc <cmd>\`, or --script-path, a host
script uploaded to /tmp and run. Prints each task's exit code and output. --timeout.setup
<s> bounds setup (default: the task's own), --timeout.total <s> the action. Runtime flags
under --runtime.* (--runtime.type docker); -n, -s, -c, --json as in vf eval. Writes
outputs/<taskset>--debug/<uuid>/ (or -o <dir>) with configs/debug.json and traces.jsonl, one
trace per task with info.debug. Exit 0 when every action exited 0, 3 otherwise.

Examples:
  vf debug shell-basics -n 2 --command 'ls -la'
  vf debug shell-basics -n 1 --command 'ls -R; pwd' --timeout.total 30 --json`,

  "plugins list": `Usage: vf plugins list

Lists the built-in plugins: kind, id and a one-line description.

Example:
  vf plugins list`,

  "plugins show":
    `Usage: vf plugins show <taskset|harness|judge|runtime> <id-or-specifier> [--lock | --frozen]

Prints a plugin's description and its config fields (type, default, description). The id
may be a built-in id, a path to a plugin module, a file: or https: URL, or an npm:/jsr:
specifier. A fetched specifier resolves through ./vf.lock as \`vf eval\` does (the line
"from <resolved>" says what was loaded); --lock records it, --frozen refuses a change.

Examples:
  vf plugins show taskset addition
  vf plugins show runtime prime
  vf plugins show taskset ./vf-mathsets/mod.ts   # the one vf init taskset @acme/vf-mathsets made`,

  "harnesses list": `Usage: vf harnesses list

Lists the built-in harnesses that run an agent from npm packages (the ACP agents), the
agent version each installs, and whether it is installed in this host's agent cache
(<user cache>/agents, shared by every run).

Example:
  vf harnesses list`,

  "harnesses install": `Usage: vf harnesses install <id>...

Installs the agents of the named harnesses into the host's agent cache, as their first
rollout would: pinned versions, checked against the registry's integrity. Installing what is
there already does nothing, so CI can run it before each test run with the folder cached.

Examples:
  vf harnesses install pi
  vf harnesses install pi claude-code`,

  "harnesses prune": `Usage: vf harnesses prune [--all]

Removes agent installs from the host's agent cache: those of versions the built-in harnesses
no longer pin, or with --all every one (the next rollout installs again). An install
another process is making is left alone.

Examples:
  vf harnesses prune
  vf harnesses prune --all`,

  "sandboxes list": `Usage: vf sandboxes list [--json] [--run <shard dir>]

Lists the remote sandboxes (Prime, Modal) that a run created and could not yet confirm
stopped, from the ledger under the user cache dir ($VF_CACHE_DIR), or with --run from the
ledger a shard of a sharded run keeps in its folder. Empty is good.

Examples:
  vf sandboxes list
  vf sandboxes list --json`,

  "sandboxes gc": `Usage: vf sandboxes gc [--run <shard dir>]

Stops every sandbox in the ledger (with --run, a shard's own), with confirmation from its
provider, and removes the ones confirmed gone. Exit 1 when some could not be confirmed
(they stay listed).

Example:
  vf sandboxes gc`,

  "sandbox exec":
    `Usage: vf sandbox exec [-i] --runtime <type> [--runtime.<key> <value> ...] -- <command...>

Starts one sandbox of a runtime, runs one command in it, prints its output, stops the
sandbox with confirmation, and exits with the command's exit code. Checks credentials and
images before a run. SIGINT or SIGTERM kills the command and stops the sandbox.

  -i, --interactive  pass standard input to the command as it arrives (as docker exec -i);
                     without it the command's stdin is empty and vf does not read its own.
                     A runtime whose commands take stdin whole (prime) starts the command
                     once standard input ends.

Examples:
  vf sandbox exec --runtime subprocess -- uname -a
  vf sandbox exec --runtime prime --runtime.image python:3.11-slim -- python3 -V
  echo hello | vf sandbox exec -i --runtime subprocess -- cat`,

  init: `Usage: vf init <taskset|harness|judge|runtime> <name> [--dir <dir>]

Scaffolds a plugin package in ./<name> (or <dir>): package.json, deno.json, mod.ts,
mod_test.ts and README.md (see docs/plugins.md). Refuses a folder that is not empty.

Examples:
  vf init taskset @acme/vf-mathsets
  vf init judge my-judge --dir plugins/my-judge`,

  merge: `Usage: vf merge <run dir> [-o <dir>] [--allow-partial]

Merges the shard folders (shard-<i>-of-<n>) that vf eval --shard wrote into one run
directory (default <run dir>/merged): its config without the shard key, one episode per
slot (an ok one first) in traces.jsonl, summary.json, and merge.json, the report. Refuses
shards whose configs or shard counts differ. Surplus lines (a process run twice) are
dropped and counted. Slots still owed are named with the shard that owes each: exit 4
unless --allow-partial; vf eval --resume <merged dir> runs them on one machine.
See docs/shards.md.

Examples:
  vf eval reverse-text -m oracle -n 6 -r 2 --run.name demo-shards --shard 0/2 --display none
  vf eval reverse-text -m oracle -n 6 -r 2 --run.name demo-shards --shard 1/2 --display none
  vf merge outputs/demo-shards
  vf merge outputs/demo-shards -o outputs/demo-merged --allow-partial`,

  "shards status": `Usage: vf shards status <run dir>

Shows each shard of a sharded run: its slots, done (kept) and errored episodes, owed slots,
surplus, foreign and torn lines, and who holds its lease (running, stale, not started).
Reads the folders as they are, so it works while the shards run. See docs/shards.md.

Example:
  vf eval reverse-text -m oracle -n 4 --run.name demo-status --shard 0/2 --display none
  vf shards status outputs/demo-status`,

  "shards k8s":
    `Usage: vf shards k8s @ <config.toml> --shards <n> [--parallelism <p>] [--name <run>]
       [--image <ref>] [--pvc <claim>] [--secret <name>] [--secret-env <VAR> ...]
       [--backoff-per-index <k>] [--grace-period <s>] [--slurm]

Checks the config, then prints the Kubernetes objects of a sharded run (apply them with
kubectl; nothing is sent from here): a ConfigMap with the config, a batch/v1 Indexed Job
whose pods run vf eval --shard auto/<n> (JOB_COMPLETION_INDEX picks the shard; per-index
backoff; podReplacementPolicy Failed, so two pods never hold one index; exit 2 fails the
Job, disruptions are not counted; a grace period for confirmed sandbox teardown), and a
merge Job created suspended. Secrets come from a Secret by name: the client's api_key_var,
the judges' and each --secret-env. Outputs go to the PVC (default vf-outputs). --slurm
prints the Slurm submission instead (vf shards slurm). See docs/shards.md.

Examples:
  vf shards k8s @ examples/quickstart.toml --shards 4 --parallelism 2 --name quick
  vf shards k8s @ examples/quickstart.toml --shards 64 --parallelism 8 --image ghcr.io/acme/vf:1 --secret-env PRIME_API_KEY`,

  "shards slurm":
    `Usage: vf shards slurm @ <config.toml> --shards <n> [--parallelism <p>] [--name <run>]
       [--output-dir <dir>] [--secret-env <VAR> ...]

Checks the config, then prints a bash script that submits the shards as an sbatch --array
(at most <p> at once, requeued on node failure; SLURM_ARRAY_TASK_ID picks the shard) and
a merge job that runs after every array task ended (--dependency=afterany). The jobs
inherit the submitting shell's environment, so export the secrets first. See docs/shards.md.

Examples:
  vf shards slurm @ examples/quickstart.toml --shards 16 --parallelism 4 --name quick
  vf shards slurm @ examples/quickstart.toml --shards 4 --output-dir /shared/outputs`,

  "bridge prime-eval": `Usage: vf bridge prime-eval <target> [args...]

The entry point \`prime eval\` calls. A .toml target with an [env.taskset] table is a v1
config and runs as \`vf eval @ <target>\`, keeping --model/-m, --output-dir/-o, --dry-run,
--verbose and --no-push/--skip-upload, dropping what Prime injects (-b, -k, --provider,
--header, -s/--save-results, --disable-tui, ...) and refusing anything else. Any other
target runs as \`vf eval <target> [args...]\`, where Prime's flags keep Prime's meaning:
-b/--api-base-url is --client.base-url, -k/--api-key-var is --client.api-key-var,
--header "K: V" adds a client header, -s/--save-results and --disable-tui are dropped
(vf always saves), --skip-upload is --no-push.

Examples:
  vf bridge prime-eval examples/quickstart.toml -m openai/gpt-4.1-mini
  vf bridge prime-eval reverse-text -m my-model -b http://localhost:8000/v1 -n 5`,
};

/** The subcommands of `command` (name → description), or undefined when it is not a group. */
export function groupOf(command: string | undefined): Record<string, string> | undefined {
  return command !== undefined && Object.hasOwn(GROUPS, command) ? GROUPS[command] : undefined;
}

/** The help of a group: its usage and subcommands. */
function groupHelp(group: string, subs: Record<string, string>): string {
  const w = Math.max(...Object.keys(subs).map((s) => s.length));
  return `Usage: vf ${group} <${Object.keys(subs).join("|")}> ...\n\nSubcommands:\n` +
    Object.entries(subs).map(([s, d]) => `  ${s.padEnd(w)}  ${d}`).join("\n") +
    `\n\nvf ${group} <subcommand> --help shows the subcommand's usage and examples.`;
}

/**
 * The help text of a command path (`["plugins", "show"]`), or null when it has none here.
 * A group with an unknown or missing subcommand gets the group's help.
 */
export function commandHelp(path: string[]): string | null {
  const [command, sub] = path;
  if (command === undefined) return null;
  const subs = groupOf(command);
  if (subs !== undefined) {
    return (sub !== undefined && TEXTS[`${command} ${sub}`]) || groupHelp(command, subs);
  }
  return TEXTS[command] ?? null;
}

/** True when `--help` or `-h` comes before any `--` (after it, they belong to a command). */
export function asksForHelp(argv: readonly string[]): boolean {
  for (const a of argv) {
    if (a === "--") return false;
    if (a === "--help" || a === "-h") return true;
  }
  return false;
}
