/**
 * `vf plugins list` and `vf plugins show <kind> <id>`.
 *
 * @module
 */
import { InputError } from "../errors.ts";
import { describeFields, renderFields } from "../config/help.ts";
import { PLUGIN_KINDS, type PluginKind } from "../plugins/contract.ts";
import { loadBuiltins, loadPlugin } from "../plugins/load.ts";
import { out } from "./output.ts";

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
  if (sub === "show" && rest.length === 2) {
    const [kind, id] = rest;
    if (!(PLUGIN_KINDS as readonly string[]).includes(kind)) {
      throw new InputError("plugin_kind_unknown", `Cannot show plugin: unknown kind "${kind}"`, {
        hint: `Kinds: ${PLUGIN_KINDS.join(", ")}`,
      });
    }
    const plugin = await loadPlugin(kind as PluginKind, id);
    const rows = describeFields(plugin.config);
    const lines = [
      `${plugin.kind} "${plugin.id}" (abi ${plugin.abi})`,
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
    hint: "vf plugins list | vf plugins show taskset reverse-text",
  });
}
