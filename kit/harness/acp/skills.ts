/**
 * Skill folders for agents that read them from a folder of their own: each folder the
 * config's `skills` names (holding a SKILL.md) is copied whole under the agent's skills
 * folder in the runtime, by its own name.
 *
 * @module
 */
import { basename, resolve } from "node:path";
import { HarnessError } from "../../errors.ts";
import type { Runtime } from "../../runtime/runtime.ts";

/** Copies each skill folder (host paths; relative to the current folder) into `intoDir`. */
export async function copySkills(
  runtime: Runtime,
  skills: readonly string[],
  intoDir: string,
): Promise<void> {
  for (const skill of skills.map((s) => resolve(s))) {
    const into = `${intoDir}/${basename(skill)}`;
    const copied = await runtime.run([
      "sh",
      "-c",
      'test -f "$0/SKILL.md" && mkdir -p "$1" && cp -R "$0"/. "$1"',
      skill,
      into,
    ]);
    if (copied.exitCode !== 0) {
      throw new HarnessError(
        `Cannot copy the skill folder "${skill}"${
          copied.stderr.trim() ? `: ${copied.stderr.trim()}` : ""
        }`,
        { hint: "env.agent.harness.skills names folders that each hold a SKILL.md" },
      );
    }
  }
}
