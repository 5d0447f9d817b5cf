/**
 * `vf view --out`: the page as one self-contained HTML file. It embeds each run's view
 * and its compact episode list, and the episode lines themselves gzip-compressed in
 * chunks of {@link CHUNK} (base64), which the page decodes one chunk at a time when an
 * episode is opened. Written to a temporary file and renamed, so a failure leaves no
 * half-written report.
 *
 * @module
 */
import { Buffer } from "node:buffer";
import { gzipSync } from "node:zlib";
import { writeFileAtomic } from "../../kit/util/write_atomic.ts";
import { pageHtml, scriptJson } from "./page.ts";
import type { RunIndex } from "./run_index.ts";
import { episodeItem, runView } from "./run_view.ts";

/** Episodes per compressed chunk. */
export const CHUNK = 64;

/** The report's HTML for `runs`. */
function reportHtml(runs: RunIndex[]): string {
  const chunks: string[][] = [];
  const data = {
    chunk: CHUNK,
    runs: runs.map((run, r) => {
      const list: string[] = [];
      for (let start = 0; start < run.rows.length; start += CHUNK) {
        const lines: string[] = [];
        for (let i = start; i < Math.min(run.rows.length, start + CHUNK); i++) {
          lines.push(run.episodeText(i) ?? "null");
        }
        list.push(gzipSync(Buffer.from(lines.join("\n"), "utf8"), { level: 6 }).toString("base64"));
      }
      chunks[r] = list;
      return { view: runView(run), items: run.rows.map(episodeItem) };
    }),
  };
  return pageHtml({ mode: "file", data }, scriptJson(chunks));
}

/** Writes the report to `path` atomically; returns its size in bytes. */
export function writeReport(runs: RunIndex[], path: string): number {
  const html = reportHtml(runs);
  writeFileAtomic(path, html);
  return Buffer.byteLength(html);
}
