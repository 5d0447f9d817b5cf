/**
 * Plugged scoring functions: `env.taskset.task.{rewards,metrics,stops}` map a name to
 * `{fn, priority[, weight]}`. A plug with `fn` replaces the taskset's hook of that name
 * (or adds one); an `fn`-less plug only overrides the priority/weight of an existing hook.
 *
 * `fn` names a function exported by a module, loaded through the plugin loader's module
 * import: `path/to/file.ts:name`, `file:`/`https:` URL `:name`, `npm:pkg[@range][/sub]:name`,
 * `jsr:@scope/pkg[/sub]:name`, `pkg/sub:name` (an installed package), or a module alone
 * (its default export). The function name follows the last `:` that is followed by an
 * identifier to the end, so URL ports and schemes stay part of the module.
 *
 * A plugged function is called like a taskset hook, with the {@link HookContext}: rewards
 * and metrics return a number or keyed numbers, stops a boolean.
 *
 * @module
 */
import process from "node:process";
import { InputError, PluginError, TaskError } from "../../kit/errors.ts";
import { type HookContext, PLUGIN_KINDS, type PluginKind } from "../../kit/contract.ts";
import { builtinCatalog } from "./builtin_catalog.ts";
import { importPluginModule } from "./load.ts";
import type { PluginLock } from "./lock.ts";
import { mayBeBuiltin, normalizeId } from "./specifier.ts";
import { quote } from "../../kit/util/quote.ts";

/** The kinds of pluggable hook. */
export type PlugKind = "reward" | "metric" | "stop";

/** One plug as configured: `{fn, priority[, weight]}` (null = unset). */
export interface PlugEntry {
  fn: string | null;
  priority: number | null;
  weight?: number | null;
}

/** A `fn` specifier split into its module and export name. */
export interface FnSpecifier {
  module: string;
  /** The export name (`default` for a module given alone). */
  name: string;
}

/** Options of {@link loadPluggedFn} and {@link applyPlugs}. */
export interface PlugOptions {
  /** Base directory for relative module paths and installed packages. @default process.cwd() */
  cwd?: string;
  /** The launch's `vf.lock`: `npm:`/`jsr:`/URL modules resolve through it. */
  lock?: PluginLock | undefined;
}

const SCHEME_ONLY = /^(npm|jsr|file|https?|data|node)$/i;

function mustBe(p: string): InputError {
  return new InputError(
    "plugged_fn_invalid",
    `fn ${
      quote(p)
    } must be \`path/to/file.ts:name\`, \`npm:pkg/sub:name\`, \`jsr:@scope/pkg:name\`, ` +
      `\`https://host/mod.ts:name\`, \`pkg/module:name\`, or a module path (its default export)`,
    { hint: "name the function after the module's path, separated by `:`" },
  );
}

/**
 * Splits a `fn` specifier on its last `:` followed by an identifier (the export name);
 * without one the module's default export is meant. Throws {@link InputError}
 * "fn '<p>' must be ..." for an empty module or a stray `:` in the module's last segment.
 */
export function parseFnSpecifier(p: string): FnSpecifier {
  const [, head, tail] = /^(.+):([A-Za-z_$][\w$]*)$/.exec(p) ?? [];
  const [module, name] = head !== undefined && tail !== undefined && !SCHEME_ONLY.test(head)
    ? [head, tail]
    : [p, "default"];
  if (!module.trim() || module !== module.trim()) throw mustBe(p);
  const rest = module.replace(/^(npm|jsr|file|https?):/i, "");
  const segment = rest.split(/[\\/]/).pop() ?? "";
  if (!rest || segment.includes(":")) throw mustBe(p);
  return { module, name };
}

/** A plugin kind whose built-in ids do not include `module`, so the loader imports the module. */
function loaderKind(module: string): PluginKind {
  if (!mayBeBuiltin(module)) return "taskset";
  const id = normalizeId(module);
  return PLUGIN_KINDS.find((k) => !(id in builtinCatalog().modules[k])) ?? "taskset";
}

/**
 * Imports the function a `fn` specifier names. Throws "fn '<p>' must be ..." for a
 * malformed specifier, a {@link PluginError} when the module cannot be imported, and
 * "fn '<p>' is not a function" when the export is missing or not callable.
 */
export async function loadPluggedFn(
  p: string,
  options: PlugOptions = {},
): Promise<(ctx: HookContext) => unknown> {
  const spec = parseFnSpecifier(p);
  let exports: Record<string, unknown>;
  try {
    const mod = await importPluginModule(loaderKind(spec.module), spec.module, {
      cwd: options.cwd ?? process.cwd(),
      ...(options.lock === undefined ? {} : { lock: options.lock }),
    });
    exports = mod.exports;
  } catch (err) {
    if (err instanceof PluginError && err.code === "plugin_not_found") {
      throw new PluginError(
        "plugged_fn_not_found",
        `fn ${quote(p)}: module ${quote(spec.module)} not found`,
        {
          hint: "give a path (relative to the working directory), a file: or https: URL, an npm: " +
            "or jsr: specifier, or an installed package",
          cause: err,
        },
      );
    }
    const e = err instanceof PluginError ? err : null;
    const why = (e?.message ?? String(err)).replace(/^Cannot load \w+ "[^"]*": /, "");
    throw new PluginError(
      "plugged_fn_import_failed",
      `fn ${quote(p)}: cannot import ${quote(spec.module)}: ${why}`,
      {
        hint: e?.hint,
        cause: err,
      },
    );
  }
  const fn = exports[spec.name];
  if (typeof fn !== "function") {
    const names = Object.keys(exports).filter((k) => typeof exports[k] === "function").sort();
    throw new InputError("plugged_fn_not_function", `fn ${quote(p)} is not a function`, {
      hint: `${quote(spec.module)} exports ${fn === undefined ? "no" : "a non-function"} ${
        quote(spec.name)
      }; its functions: ${names.join(", ") || "none"}`,
    });
  }
  return fn as (ctx: HookContext) => unknown;
}

/** A hook with optional priority/weight, as tasksets declare them. */
type Hook = { fn(ctx: HookContext): unknown; priority?: number; weight?: number };

function plugged<H extends Hook>(
  kind: PlugKind,
  name: string,
  p: string,
  loading: Promise<(ctx: HookContext) => unknown>,
): H["fn"] {
  return (async (ctx: HookContext) => {
    const fn = await loading;
    const value = await fn(ctx);
    if (kind === "stop" && typeof value !== "boolean") {
      throw new TaskError(
        `stop ${quote(name)} (fn ${quote(p)}) returned ${typeof value}, not a boolean`,
      );
    }
    return value;
  }) as H["fn"];
}

/**
 * The hooks of one kind after plugging: the taskset's own hooks, with every plug applied
 * by name. A plug with `fn` replaces (or adds) the hook; its unset priority/weight inherit
 * the replaced hook's (else 0 / 1). An `fn`-less plug overrides the priority/weight of an
 * existing hook and throws {@link InputError} when there is none. Specifiers are checked
 * now and their modules imported right away; a module that fails to import or export the
 * function fails each call of the hook (and is reported once through `onLoadError`).
 */
export function applyPlugs<H extends Hook>(
  kind: PlugKind,
  own: Record<string, H> | undefined,
  plugs: Record<string, PlugEntry>,
  options: PlugOptions & {
    onLoadError?: (message: string) => void;
    /** Receives each plugged function's loading promise (await them to refuse a run early). */
    loads?: Promise<unknown>[];
  } = {},
): (H & { name: string })[] {
  const out = new Map<string, H & { name: string }>();
  for (const [name, hook] of Object.entries(own ?? {})) out.set(name, { ...hook, name });
  for (const [name, plug] of Object.entries(plugs)) {
    const hook = out.get(name);
    const weight = plug.weight ?? undefined;
    if (plug.fn !== null) {
      parseFnSpecifier(plug.fn);
      const loading = loadPluggedFn(plug.fn, options);
      options.loads?.push(loading);
      loading.catch((err) =>
        options.onLoadError?.(`${kind} '${name}': ${err instanceof Error ? err.message : err}`)
      );
      const replaced: H & { name: string } = {
        ...(hook ?? {}),
        name,
        fn: plugged<H>(kind, name, plug.fn, loading),
      } as H & { name: string };
      replaced.priority = plug.priority ?? hook?.priority ?? 0;
      if (kind === "reward") replaced.weight = weight ?? hook?.weight ?? 1;
      out.set(name, replaced);
      continue;
    }
    if (!hook) {
      throw new InputError(
        "plugged_hook_unknown",
        `${kind} ${quote(name)} plugs no \`fn\` and the task has no ${kind} named ${
          quote(name)
        } to override`,
        { hint: `the taskset's ${kind}s: ${[...out.keys()].join(", ") || "none"}` },
      );
    }
    out.set(name, {
      ...hook,
      priority: plug.priority ?? hook.priority,
      ...(weight !== undefined ? { weight } : {}),
    });
  }
  return [...out.values()];
}
