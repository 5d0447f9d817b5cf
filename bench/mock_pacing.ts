/**
 * How the benchmark mock (bench/mock_server.ts) streams: events written one per turn of the
 * event loop, and an answer's text cut into deltas.
 *
 * @module
 */
import type http from "node:http";

/**
 * Writes the events `next` returns (a string each, null at the end) one per turn of the event
 * loop, so that events arrive apart as a model's tokens do rather than as one burst.
 */
export function paceEvents(res: http.ServerResponse, next: () => string | null): void {
  const step = () => {
    if (res.destroyed) return;
    const event = next();
    if (event === null) return void res.end();
    res.write(event);
    setImmediate(step);
  };
  step();
}

/**
 * The answer's text as `chunks` deltas: with `split`, `content` cut into that many nearly
 * equal pieces (as a model streams a long reply); else all of it first, then one space each.
 */
export function answerDeltas(content: string, chunks: number, split: boolean): string[] {
  const n = Math.max(1, chunks);
  if (!split) return [content, ...Array.from({ length: n - 1 }, () => " ")];
  const size = Math.ceil(content.length / n);
  return Array.from({ length: n }, (_, i) => content.slice(i * size, (i + 1) * size));
}
