/**
 * The plain-`fetch` floor as a whole process: the requests a `vf eval` of the addition
 * taskset (seed 0, 3 digits) sends, posted straight to the mock with `c` in flight and
 * checked, and nothing else. What a runtime costs at the least for the same exchanges.
 *
 * `bun bench/fetch_floor.ts <url> <n> <c>` (or `deno run -A ...`); prints `{n, wallMs}`.
 *
 * @module
 */
import process from "node:process";
import { seededRandom } from "../kit/taskset_view.ts";
import { askMock } from "./ask_mock.ts";

/** The system prompt of the addition taskset (plugins/tasksets/addition/mod.ts). */
const SYSTEM_PROMPT = "Answer with the final number only.";

/** Posts `n` addition questions to `url` with `c` in flight; throws on a wrong answer. */
export async function fetchFloor(url: string, n: number, c: number): Promise<void> {
  const rand = seededRandom(0);
  let next = 0;
  const worker = async () => {
    while (next < n) {
      next++;
      const a = 100 + Math.floor(rand() * 900);
      const b = 100 + Math.floor(rand() * 900);
      await askMock(url, SYSTEM_PROMPT, `What is ${a} + ${b}?`, String(a + b));
    }
  };
  await Promise.all(Array.from({ length: c }, worker));
}

if (import.meta.main) {
  const [url, n, c] = process.argv.slice(-3);
  if (url === undefined) throw new Error("usage: fetch_floor.ts <url> <n> <c>");
  const started = performance.now();
  await fetchFloor(url, Number(n), Number(c));
  process.stdout.write(
    JSON.stringify({ n: Number(n), wallMs: performance.now() - started }) + "\n",
  );
  process.exit(0);
}
