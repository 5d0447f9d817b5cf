/**
 * The key a judge's reward is recorded under, decided from the judge entry: config
 * checks refuse two judges with one key, and scoring records under it.
 *
 * @module
 */
import type { JudgePlugin } from "../../kit/contract.ts";
import { specifierKind } from "../plugins/specifier.ts";
import type { JudgeEntry } from "./eval_config.ts";

/**
 * The reward key of a judge entry: its `name`; else, for a built-in or hub-style id, the
 * id's package name (`org/my-judge@1.0` -> `my-judge`); else (a path, URL or `npm:`/`jsr:`
 * specifier) the id the plugin declares.
 */
export function judgeRewardKey(
  entry: Pick<JudgeEntry, "name" | "id">,
  plugin?: Pick<JudgePlugin, "id">,
): string {
  if (entry.name) return entry.name;
  if (specifierKind(entry.id) === "bare") {
    const last = entry.id.slice(entry.id.lastIndexOf("/") + 1);
    const at = last.indexOf("@");
    const name = at >= 0 ? last.slice(0, at) : last;
    if (name) return name;
  }
  return plugin?.id || entry.id;
}
