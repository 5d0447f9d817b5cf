#!/usr/bin/env -S deno run -A
/**
 * The `vf` command line: picks one command from argv and lazy-imports it. The only
 * place that exits the process: 0 ok, 1 internal error, 2 bad input (no stack trace).
 *
 * @module
 */
import { getArgs } from "./kit/_runtime/args.ts";
import { exit } from "./kit/_runtime/exit.ts";
import { formatError, InputError, VerifiersError } from "./kit/errors.ts";
import { asOutputError } from "./kit/util/fs_errors.ts";
import { disableColor, err, flushOutput, out, paint, useColor } from "./lib/cli/output.ts";
import { VERSION } from "./kit/version.ts";
import { asksForHelp, commandHelp, groupOf } from "./lib/cli/usage.ts";
import { closest } from "./kit/util/suggest.ts";
import { addHostSecrets } from "./kit/secrets.ts";
import { installBuiltins } from "./lib/plugins/builtin_catalog.ts";
import { setSelfModule } from "./lib/plugins/self_modules.ts";
import { BUILTIN_PLUGINS } from "./plugins/builtins.ts";

installBuiltins(BUILTIN_PLUGINS);
setSelfModule(() => import("./mod.ts"));

/** ANSI colour sequences. */
const ANSI_SGR = new RegExp("\u001b\\[[0-9;]*m", "g");

const USAGE = `vf ${VERSION} — run LLM evaluations and RL environments

Usage:
  vf eval [<taskset>] [@ config.toml ...] [--dotted.flags ...]
  vf validate-config [<taskset>] [@ config.toml ...] [flags]   (check only: no model, no files)
  vf plugins list
  vf plugins show <kind> <id-or-specifier> [--lock | --frozen]   (through ./vf.lock)
  vf sandboxes list [--json] | vf sandboxes gc
  vf sandbox exec --runtime <type> [--runtime.<key> <value> ...] -- <command...>
  vf harnesses list | install <id>... | prune [--all]   (agent installs on this host)
  vf init <taskset|harness|judge|runtime> <name> [--dir <dir>]   (scaffold a plugin package)
  vf bridge prime-eval <target> [args...]   (for \`prime eval\`: a v1 config or a taskset id)
  vf view <run-dir> [<run-dir>...] [--port <n>] | --out <file.html>   (runs in the browser)
  vf run <script.ts> [args...]   (a script using @verifiers/verifiers-ts, resolved to this vf)
  vf --version | --help
  vf <command> --help   (each command's usage and examples; a group alone lists its subcommands)

Examples:
  vf eval @ examples/quickstart.toml --model oracle
  vf eval reverse-text -m gpt-4.1-mini -n 20 -r 3 --sampling.temperature 0.7
  vf eval @ examples/quickstart.toml --env.agent.max-turns 4 --dry-run
  vf eval reverse-text --help          (fields of the reverse-text taskset and defaults)
  vf plugins show taskset ./my_taskset.ts
  vf eval npm:@acme/vf-mathsets@^1.2 -m oracle --lock   (fetched, cached, pinned in vf.lock)

Exit codes: 0 ok, 1 internal error, 2 bad input, 3 too many errored episodes
(--fail-on-error), 130 stopped by a signal. vf eval --resume <run-dir> continues a run.
Logs and progress go to stderr, data to stdout. NO_COLOR or --no-color turn colours off.`;

/**
 * The help a command line asks for, or null: a group alone or with `--help`, and
 * `--help`/`-h` on any command but `vf eval` (which narrows its help to the plugins named).
 * The bridge's own help is asked before its target; after it, the target's help is meant.
 */
function helpFor(command: string | undefined, rest: string[]): string | null {
  if (command === undefined || command === "eval") return null;
  if (groupOf(command) !== undefined && rest.length === 0) return commandHelp([command]);
  const own = command === "bridge" ? rest.slice(0, 2) : rest;
  return asksForHelp(own)
    ? commandHelp([command, ...rest.filter((a) => !a.startsWith("-"))])
    : null;
}

/** Runs one command and returns its exit code. */
export async function main(argv: string[]): Promise<number> {
  const args = argv.filter((a) => {
    if (a === "--no-color") {
      disableColor();
      return false;
    }
    return true;
  });
  const [command, ...rest] = args;
  const help = helpFor(command, rest);
  if (help !== null) {
    await out(help);
    return 0;
  }
  const group = groupOf(command);
  const sub = rest[0];
  if (group !== undefined && (sub === undefined || !Object.hasOwn(group, sub))) {
    const subs = Object.keys(group);
    const guess = sub === undefined ? null : closest(sub, subs);
    throw new InputError(
      "usage",
      `Cannot run \`vf ${command}\`: unknown subcommand "${sub}"` +
        (guess ? ` (did you mean "${guess}"?)` : ""),
      { hint: `subcommands: ${subs.join(", ")} (vf ${command} --help)` },
    );
  }
  switch (command) {
    case undefined:
    case "help":
    case "--help":
    case "-h":
      await (command === undefined ? err(USAGE) : out(USAGE));
      return command === undefined ? 2 : 0;
    case "--version":
    case "-V":
    case "version":
      await out(`vf ${VERSION}`);
      return 0;
    case "eval": {
      const { evalCommand } = await import("./lib/cli/eval_command.ts");
      return await evalCommand(rest);
    }
    case "validate-config": {
      const { validateConfigCommand } = await import("./lib/cli/eval_command.ts");
      return await validateConfigCommand(rest);
    }
    case "plugins": {
      const { pluginsCommand } = await import("./lib/cli/plugins_command.ts");
      return await pluginsCommand(rest);
    }
    case "sandboxes": {
      const { sandboxesCommand } = await import("./lib/cli/sandboxes_command.ts");
      return await sandboxesCommand(rest);
    }
    case "harnesses": {
      const { harnessesCommand } = await import("./lib/cli/harnesses_command.ts");
      return await harnessesCommand(rest);
    }
    case "sandbox": {
      const { sandboxCommand } = await import("./lib/cli/sandboxes_command.ts");
      return await sandboxCommand(rest);
    }
    case "init": {
      const { initCommand } = await import("./lib/cli/init_command.ts");
      return await initCommand(rest);
    }
    case "run": {
      const { runCommand } = await import("./lib/cli/run_command.ts");
      return await runCommand(rest);
    }
    case "bridge": {
      const { bridgeCommand } = await import("./lib/cli/bridge_command.ts");
      return await bridgeCommand(rest);
    }
    case "view": {
      const { viewCommand } = await import("./lib/cli/view_command.ts");
      return await viewCommand(rest);
    }
    default:
      await err(`${paint("error:", "red")} unknown command "${command}"\n\n${USAGE}`);
      return 2;
  }
}

if (import.meta.main) {
  let code: number;
  addHostSecrets(); // printed output never shows a host credential (kit/secrets.ts)
  try {
    code = await main(getArgs());
  } catch (caught) {
    const e = asOutputError(caught) ?? caught;
    if (e instanceof VerifiersError) {
      // a runtime's own text inside a message (an import error) may carry colours: drop them
      // when colours are off (--no-color, NO_COLOR, not a terminal)
      const text = useColor() ? formatError(e) : formatError(e).replace(ANSI_SGR, "");
      await err(text.replace(/^error:/, paint("error:", "red")));
      code = e.exitCode;
    } else {
      await err(
        `${paint("internal error:", "red")} ${
          e instanceof Error ? e.stack ?? e.message : String(e)
        }`,
      );
      code = 1;
    }
  }
  await flushOutput();
  exit(code);
}
