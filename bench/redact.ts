/**
 * Redaction: every `traces.jsonl` line, log line and message goes through `redact`
 * (kit/secrets.ts) before it is written. Prints the CPU time per line of it, for a
 * 3 KiB and a 100 KiB line of a trace's JSON and a 100 KiB line of an agent's prose (a long
 * reply), none holding a secret, with 1 and 10 registered credentials (each searched for in
 * its forms, raw, JSON-escaped and URL-encoded: kit/secrets.ts formsOf), beside a search per
 * form (`includes` for each, the way to do it without one pattern for all) on the same
 * lines in the same run, and their ratio.
 *
 * `deno run -A bench/redact.ts` (or `bun bench/redact.ts`)
 *
 * @module
 */
import process from "node:process";
import { runtimeName } from "../kit/_runtime/runtime_name.ts";
import { addSecret, clearSecretsForTests, formsOf, MASK, redact } from "../kit/secrets.ts";
import { loadAverages } from "./common.ts";
import { reasoningPad } from "./mock_server.ts";
import { credentialVariables } from "./user_env.ts";

/** A line shaped like a trace's JSON: keys, short strings, numbers, some non-ASCII. */
function traceLikeLine(chars: number, variant: number): string {
  const parts: string[] = [];
  let size = 0;
  for (let i = 0; size < chars; i++) {
    const part = `{"role":"tool","content":"step ${i}: wrote out/file_${i}.txt (${
      i * 37 + variant
    } bytes) é","timestamp":${1796176275 + i / 10}}`;
    parts.push(part);
    size += part.length + 1;
  }
  return `{"id":"e${variant}","nodes":[${parts.join(",")}]}`;
}

/** A line holding an agent's long reply: prose, quotes and newlines escaped. */
function proseLine(chars: number, variant: number): string {
  return `{"id":"e${variant}","content":${JSON.stringify(reasoningPad(chars + variant))}}`;
}

/**
 * The credentials registered: `count` of them, shaped as a user's keys are (bench/user_env.ts):
 * different prefixes and lengths. Keys that all begin alike would flatter the one-pass search,
 * which an engine then scans for one prefix rather than a set of first characters.
 */
function credentials(count: number): string[] {
  return Object.values(credentialVariables(count));
}

/**
 * Microseconds of CPU per call of `scrub` over `lines` in turn (distinct texts, so no
 * engine can answer from the previous call's result); the median of 5 batches.
 */
function cpuPerLine(scrub: (text: string) => string, lines: string[], calls: number): number {
  let kept = 0;
  for (let i = 0; i < calls / 10; i++) kept += scrub(lines[i % lines.length]!).length; // warm-up
  const batches: number[] = [];
  for (let b = 0; b < 5; b++) {
    const started = process.cpuUsage();
    for (let i = 0; i < calls; i++) kept += scrub(lines[i % lines.length]!).length;
    const used = process.cpuUsage(started);
    batches.push((used.user + used.system) / calls);
  }
  if (kept === 0) throw new Error("nothing was scrubbed");
  return batches.sort((a, b) => a - b)[2]!;
}

/** Prints the table. */
export function printRedact(): void {
  console.log(`redaction on ${runtimeName()}, CPU per line (${loadAverages()})`);
  for (const count of [1, 10]) {
    clearSecretsForTests();
    const values = credentials(count);
    for (const v of values) addSecret(v);
    // the forms addSecret registers, longest first, searched one after another
    const forms = [...new Set(values.flatMap(formsOf))].sort((a, b) => b.length - a.length);
    const perForm = (text: string): string => {
      let out = text;
      for (const form of forms) if (out.includes(form)) out = out.split(form).join(MASK);
      return out;
    };
    const kinds = [
      ["3 KiB", (i: number) => traceLikeLine(3 << 10, i), 20_000],
      ["100 KiB", (i: number) => traceLikeLine(100 << 10, i), 500],
      ["100 KiB prose", (i: number) => proseLine(100 << 10, i), 500],
    ] as const;
    for (const [label, make, calls] of kinds) {
      const lines = Array.from({ length: 16 }, (_, i) => make(i));
      const line = lines[0]!;
      const withSecret = `${line.slice(0, -1)},"k":"${values[0]}"}`;
      if (redact(withSecret) !== perForm(withSecret) || redact(line) !== line) {
        throw new Error("the two scrubs differ");
      }
      const ours = cpuPerLine(redact, lines, calls);
      const baseline = cpuPerLine(perForm, lines, calls);
      console.log(
        `  ${String(count).padStart(2)} credential(s) (${forms.length} forms), ${
          label.padEnd(13)
        } line: ` +
          `redact ${ours.toFixed(2)} µs, a search per form ${baseline.toFixed(2)} µs = ${
            (ours / baseline).toFixed(2)
          }x`,
      );
    }
  }
  clearSecretsForTests();
}

if (import.meta.main) {
  printRedact();
  process.exit(0);
}
