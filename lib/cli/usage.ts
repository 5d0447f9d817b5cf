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

  "sandboxes list": `Usage: vf sandboxes list [--json]

Lists the remote sandboxes (Prime, Modal) that a run created and could not yet confirm
stopped, from the ledger under the user cache dir ($VF_CACHE_DIR). Empty is good.

Examples:
  vf sandboxes list
  vf sandboxes list --json`,

  "sandboxes gc": `Usage: vf sandboxes gc

Stops every sandbox in the ledger, with confirmation from its provider, and removes the
ones confirmed gone. Exit 1 when some could not be confirmed (they stay listed).

Example:
  vf sandboxes gc`,

  "sandbox exec":
    `Usage: vf sandbox exec --runtime <type> [--runtime.<key> <value> ...] -- <command...>

Starts one sandbox of a runtime, runs one command in it (standard input is passed to the
command), prints its output, stops the sandbox with confirmation, and exits with the
command's exit code. Checks credentials and images before a run.

Examples:
  vf sandbox exec --runtime subprocess -- uname -a
  vf sandbox exec --runtime prime --runtime.image python:3.11-slim -- python3 -V
  echo hello | vf sandbox exec --runtime modal -- cat`,

  init: `Usage: vf init <taskset|harness|judge|runtime> <name> [--dir <dir>]

Scaffolds a plugin package in ./<name> (or <dir>): package.json, deno.json, mod.ts,
mod_test.ts and README.md (see docs/plugins.md). Refuses a folder that is not empty.

Examples:
  vf init taskset @acme/vf-mathsets
  vf init judge my-judge --dir plugins/my-judge`,

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
