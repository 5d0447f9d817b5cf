/**
 * `vf plugins list` and `vf plugins show <kind> <id>`.
 *
 * @module
 */
import { InputError } from "../../kit/errors.ts";
import { describeFields, renderFields } from "../config/help.ts";
import { PLUGIN_KINDS, type PluginKind } from "../../kit/contract.ts";
import process from "node:process";
import { importPluginModule, loadBuiltins, pickPlugin } from "../plugins/load.ts";
import { lockPathFor, openPluginLock } from "../plugins/lock.ts";
import { out } from "./output.ts";
import { quote } from "../../kit/util/quote.ts";

/** Runs `vf plugins ...`; returns the exit code. */
export async function pluginsCommand(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub === "list" && rest.length === 0) {
    const plugins = await loadBuiltins();
    const w = Math.max(...plugins.map((p) => p.id.length));
    const lines = plugins.map((p) => `${p.kind.padEnd(8)} ${p.id.padEnd(w)}  ${p.description}`);
    await out(lines.join("\n"));
    return 0;
  }
  const switches = rest.filter((a) => a === "--lock" || a === "--frozen");
  const positional = rest.filter((a) => a !== "--lock" && a !== "--frozen");
  const [kind, id, ...extra] = positional;
  if (sub === "show" && kind !== undefined && id !== undefined && extra.length === 0) {
    if (!(PLUGIN_KINDS as readonly string[]).includes(kind)) {
      throw new InputError(
        "plugin_kind_unknown",
        `Cannot show plugin: unknown kind ${quote(kind)}`,
        {
          hint: `Kinds: ${PLUGIN_KINDS.join(", ")}`,
        },
      );
    }
    // the same vf.lock as `vf eval` run here: honoured when present, --lock / --frozen as there
    const cwd = process.cwd();
    const lock = openPluginLock(lockPathFor([], cwd), {
      lock: switches.includes("--lock"),
      frozen: switches.includes("--frozen"),
    });
    const mod = await importPluginModule(kind as PluginKind, id, {
      cwd,
      ...(lock === undefined ? {} : { lock }),
    });
    const plugin = pickPlugin(kind as PluginKind, id, mod.exports);
    lock?.save();
    const rows = plugin.config ? describeFields(plugin.config) : []; // a plain-object plugin may have none
    const lines = [
      `${plugin.kind} "${plugin.id}" (abi ${plugin.abi})`,
      ...(mod.resolved
        ? [`from ${mod.resolved}${lock?.lookup(id) ? ` (pinned by ${lock.path})` : ""}`]
        : []),
      plugin.description,
      "",
      rows.length ? "Config fields:" : "Config fields: none of its own",
    ];
    if (rows.length) {
      lines.push(renderFields(rows.map((r) => ({ ...r, flag: r.flag.replace(/^--/, "") }))));
    }
    await out(lines.join("\n"));
    return 0;
  }
  throw new InputError("usage", "Cannot run `vf plugins`: expected `list` or `show <kind> <id>`", {
    hint: "vf plugins list | vf plugins show taskset reverse-text [--lock | --frozen]",
  });
}
