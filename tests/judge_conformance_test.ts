/**
 * Every built-in judge passes the judge conformance suite. The fake judge model plays a
 * fair grader: it says yes to every question about a right reply and no about a wrong one.
 */
import { join } from "node:path";
import type { JudgePlugin } from "../kit/contract.ts";
import { BUILTIN_PLUGINS } from "../plugins/builtins.ts";
import { judgeConformance, type JudgeConformanceCase } from "./conformance/judge_conformance.ts";

const RUBRIC = join(import.meta.dirname!, "fixtures", "judges", "rubric.toml");

/** A rubric grader's JSON: every criterion listed in the prompt gets the same verdict. */
function rubricVerdicts(prompt: string, correct: boolean): string {
  const names = [...prompt.matchAll(/^- ([^:\n]+): /gm)].map((m) => m[1]);
  const verdict = correct ? "yes" : "no";
  return JSON.stringify({
    verdicts: names.map((name) => ({ name, reason: "conformance", verdict })),
  });
}

/** What each built-in judge needs beyond its defaults. */
const CASES: Record<string, Omit<JudgeConformanceCase, "plugin">> = {
  match: { config: { mode: "contains" }, model: null },
  reference: { model: (_prompt, correct) => (correct ? "yes" : "no") },
  rubric: { config: { path: RUBRIC }, model: rubricVerdicts },
};

for (const [id, load] of Object.entries(BUILTIN_PLUGINS.modules.judge)) {
  const plugin = (await load()).default as JudgePlugin;
  if (!CASES[id]) throw new Error(`no conformance case for the built-in judge '${id}'`);
  judgeConformance(id, { plugin, ...CASES[id] });
}
