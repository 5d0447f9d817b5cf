/**
 * `vf bridge prime-eval <target> [args...]`: the entry point a host CLI (Prime's
 * `prime eval`) calls. The target and arguments are translated by
 * `lib/bridge/prime_eval.ts`, then run exactly as `vf eval` would run them.
 *
 * @module
 */
import process from "node:process";
import { InputError } from "../../kit/errors.ts";
import { primeEvalArgv } from "../bridge/prime_eval.ts";
import { evalCommand } from "./eval_command.ts";
import { quote } from "../../kit/util/quote.ts";

const USAGE = "vf bridge prime-eval <target> [args...]";

/** Runs `vf bridge ...`; returns the exit code. */
export async function bridgeCommand(argv: string[]): Promise<number> {
  const [bridge, target, ...rest] = argv;
  if (bridge !== "prime-eval") {
    throw new InputError(
      "usage",
      bridge === undefined
        ? "Cannot run `vf bridge`: name a bridge"
        : `Cannot run \`vf bridge\`: unknown bridge ${quote(bridge)}`,
      { hint: `Bridges: prime-eval (${USAGE})` },
    );
  }
  if (target === undefined || target === "") {
    throw new InputError("usage", "Cannot run `vf bridge prime-eval`: no target was given", {
      hint: `${USAGE}: a v1 config (.toml with [env.taskset]) or a taskset id`,
    });
  }
  return await evalCommand(primeEvalArgv(target, rest, process.cwd()));
}
