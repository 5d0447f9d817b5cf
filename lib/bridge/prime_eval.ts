/**
 * The host-CLI bridge for `prime eval` (the behaviour of Python's `eval_v1_prime`): the
 * Prime CLI hands a target and its own eval arguments to `vf bridge prime-eval`. A
 * `.toml` target with an `[env.taskset]` table is a v1 config and runs as
 * `vf eval @ <abs path>` with the host's arguments translated; any other target runs as
 * `vf eval <target> <args>` untouched.
 *
 * Translation of a v1 run: the host-injected legacy options are dropped with their values
 * (`--api-base-url/-b`, `--api-key-var/-k`, `--provider/-p`, `--endpoints-path/-e`,
 * `--header`, `--header-from-state`, `--env-dir-path`, also as `--x=v`) and so are the
 * switches `--save-results/-s` and `--disable-tui`; `--model/-m` and `--output-dir/-o`
 * are kept in long form, `--dry-run`, `--verbose` and `--no-push` kept, `--skip-upload`
 * becomes `--no-push` (once). Anything else fails closed (exit 2). On any other target
 * Prime's options keep Prime's meaning (see {@link translateTargetArgs}).
 *
 * @module
 */
import { existsSync, readFileSync, statSync } from "node:fs";
import { isAbsolute, resolve } from "node:path";
import { parse as parseToml } from "smol-toml";
import { InputError } from "../../kit/errors.ts";

/** Host options dropped together with their value. */
const DROPPED_WITH_VALUE: Record<string, string> = {
  "--api-base-url": "--api-base-url",
  "-b": "--api-base-url",
  "--api-key-var": "--api-key-var",
  "-k": "--api-key-var",
  "--provider": "--provider",
  "-p": "--provider",
  "--endpoints-path": "--endpoints-path",
  "-e": "--endpoints-path",
  "--header": "--header",
  "--header-from-state": "--header-from-state",
  "--env-dir-path": "--env-dir-path",
};

/** Host switches dropped (they take no value). */
const DROPPED_SWITCHES = new Set(["--save-results", "-s", "--disable-tui"]);

/** Options kept, normalised to their long form. */
const KEPT_WITH_VALUE: Record<string, string> = {
  "--model": "--model",
  "-m": "--model",
  "--output-dir": "--output-dir",
  "-o": "--output-dir",
};

/** Switches passed through as they are. */
const KEPT_SWITCHES = new Set(["--dry-run", "--verbose"]);

function unsupported(arg: string): InputError {
  return new InputError(
    "bridge_argument_unsupported",
    `unsupported prime eval v1 bridge argument: ${arg}`,
    {
      hint: "The v1 bridge keeps --model/-m, --output-dir/-o, --dry-run, --verbose, --no-push " +
        "(--skip-upload); put everything else in the config file",
    },
  );
}

function looksLikeOption(token: string | undefined): boolean {
  return token !== undefined && (token.startsWith("--") || /^-[a-zA-Z]/.test(token));
}

/**
 * True when `target` is a `.toml` file whose parsed content has an `[env.taskset]`
 * table (a verifiers v1 config). Unreadable or malformed files are not v1 configs.
 */
export function isV1Config(target: string, cwd: string): boolean {
  if (!/\.toml$/i.test(target)) return false;
  const path = isAbsolute(target) ? target : resolve(cwd, target);
  if (!existsSync(path) || !statSync(path).isFile()) return false;
  let doc: unknown;
  try {
    doc = parseToml(readFileSync(path, "utf8"));
  } catch {
    return false;
  }
  const env = (doc as Record<string, unknown>).env;
  if (typeof env !== "object" || env === null || Array.isArray(env)) return false;
  const taskset = (env as Record<string, unknown>).taskset;
  return typeof taskset === "object" && taskset !== null && !Array.isArray(taskset);
}

/** Translates the host's arguments of a v1 run (see the module doc). Throws InputError. */
export function translateV1Args(args: readonly string[]): string[] {
  const out: string[] = [];
  let noPush = false;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    const eq = arg.startsWith("-") ? arg.indexOf("=") : -1;
    const name = eq > 0 ? arg.slice(0, eq) : arg;
    const inline = eq > 0 ? arg.slice(eq + 1) : undefined;
    const takeValue = (): string => {
      if (inline !== undefined) return inline;
      const next = args[i + 1];
      if (next === undefined || looksLikeOption(next)) {
        throw new InputError(
          "bridge_argument_missing_value",
          `prime eval v1 bridge argument ${arg} needs a value`,
          { hint: `e.g. ${name} <value> or ${name}=<value>` },
        );
      }
      i++;
      return next;
    };
    if (name in DROPPED_WITH_VALUE) {
      takeValue();
      continue;
    }
    const kept = Object.hasOwn(KEPT_WITH_VALUE, name) ? KEPT_WITH_VALUE[name] : undefined;
    if (kept !== undefined) {
      out.push(kept, takeValue());
      continue;
    }
    if (inline !== undefined) throw unsupported(arg);
    if (DROPPED_SWITCHES.has(arg)) continue;
    if (KEPT_SWITCHES.has(arg)) {
      out.push(arg);
      continue;
    }
    if (arg === "--no-push" || arg === "--skip-upload") {
      if (!noPush) out.push("--no-push");
      noPush = true;
      continue;
    }
    throw unsupported(arg);
  }
  return out;
}

/** Prime's own options on a non-v1 target, as the `vf eval` config paths they mean. */
const PRIME_TO_CLIENT: Record<string, string> = {
  "--api-base-url": "--client.base-url",
  "-b": "--client.base-url",
  "--api-key-var": "--client.api-key-var",
  "-k": "--client.api-key-var",
};

/**
 * Translates the host's arguments for a non-v1 target (a taskset id): Prime's options keep
 * Prime's meaning — `-b/--api-base-url` is `--client.base-url`, `-k/--api-key-var` is
 * `--client.api-key-var`, each `--header "K: V"` adds a client header, `-s/--save-results`
 * and `--disable-tui` are dropped (a run always saves), `--skip-upload` is `--no-push`,
 * `--env-dir-path` is dropped with its value, `--provider/-p` is accepted only beside a base
 * URL (which it would otherwise choose) — and every other argument is `vf eval`'s.
 * Throws InputError.
 */
function translateTargetArgs(args: readonly string[]): string[] {
  const out: string[] = [];
  const headers: Record<string, string> = {};
  let baseUrl = false;
  let provider: string | null = null;
  let noPush = false;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    const eq = arg.startsWith("-") ? arg.indexOf("=") : -1;
    const name = eq > 0 ? arg.slice(0, eq) : arg;
    const takeValue = (): string => {
      if (eq > 0) return arg.slice(eq + 1);
      const next = args[i + 1];
      if (next === undefined || looksLikeOption(next)) {
        throw new InputError(
          "bridge_argument_missing_value",
          `prime eval bridge argument ${arg} needs a value`,
          { hint: `e.g. ${name} <value> or ${name}=<value>` },
        );
      }
      i++;
      return next;
    };
    const client = Object.hasOwn(PRIME_TO_CLIENT, name) ? PRIME_TO_CLIENT[name] : undefined;
    if (client !== undefined) {
      if (client === "--client.base-url") baseUrl = true;
      out.push(client, takeValue());
    } else if (name === "--header") {
      const header = takeValue();
      const colon = header.indexOf(":");
      if (colon <= 0) {
        throw new InputError("bridge_header_invalid", `--header "${header}" is not "Name: value"`, {
          hint: 'e.g. --header "X-Team: acme"',
        });
      }
      headers[header.slice(0, colon).trim()] = header.slice(colon + 1).trim();
    } else if (name === "--provider" || name === "-p") {
      provider = takeValue();
    } else if (name === "--env-dir-path") {
      takeValue();
    } else if (DROPPED_SWITCHES.has(arg)) {
      continue;
    } else if (arg === "--skip-upload" || arg === "--no-push") {
      if (!noPush) out.push("--no-push");
      noPush = true;
    } else if (name === "--header-from-state" || name === "--endpoints-path" || name === "-e") {
      throw new InputError(
        "bridge_argument_unsupported",
        `unsupported prime eval bridge argument: ${name}`,
        { hint: "give the endpoint with -b <base-url> and -k <api-key-var>" },
      );
    } else out.push(arg);
  }
  if (provider !== null && !baseUrl) {
    throw new InputError(
      "bridge_provider_without_url",
      `--provider ${provider} needs a base URL: verifiers-ts has no provider table`,
      { hint: "pass the provider's endpoint with -b/--api-base-url <url>" },
    );
  }
  if (Object.keys(headers).length) out.push("--client.headers", JSON.stringify(headers));
  return out;
}

/**
 * The `vf eval` arguments for `vf bridge prime-eval <target> [args...]`: a v1 config
 * becomes `@ <abs path>` plus the translated arguments; any other target is `vf eval`'s
 * taskset, with Prime's options translated by {@link translateTargetArgs}.
 */
export function primeEvalArgv(target: string, args: readonly string[], cwd: string): string[] {
  if (!isV1Config(target, cwd)) return [target, ...translateTargetArgs(args)];
  const abs = isAbsolute(target) ? target : resolve(cwd, target);
  return ["@", abs, ...translateV1Args(args)];
}
