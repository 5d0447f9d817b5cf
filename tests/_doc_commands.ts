/**
 * The commands the documentation shows, found as a reader finds them, for
 * `docs_commands_test.ts`.
 *
 * The convention for code blocks in README.md and docs/*.md:
 * - a ```` ```sh ```` block is a command block: it runs, as written, with bash (`-e -o
 *   pipefail`), and must exit 0. The sh blocks of one page run in order in one fresh temp
 *   directory, as a reader following the page would, with `vf` on the PATH;
 * - `<!-- docs-test: repo -->` on the line before a block runs it from the repository root
 *   instead (a fresh folder whose entries link to the checkout's, so that what it writes,
 *   `outputs/` or `dist/`, lands there);
 * - `<!-- docs-test: skip: <reason> -->` does not run it: for commands that install, publish,
 *   reach a public registry or run the whole suite; the reason says which test covers it;
 * - every other fence (`text`, `console`, `toml`, `ts`, `json`, none) is shown, not run.
 *   `bash` and `shell` fences are refused: a block is either `sh` (run) or something else.
 *
 * @module
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";

/** How a block runs. */
export type BlockMode = "temp" | "repo" | "skip";

/** One fenced code block of a page. */
export interface DocBlock {
  /** `README.md` or `docs/<page>.md`. */
  page: string;
  /** 1-based line of the opening fence. */
  line: number;
  lang: string;
  body: string;
  mode: BlockMode;
  /** Why a skipped block is not run. */
  reason?: string;
}

const MARKER = /^<!--\s*docs-test:\s*(.*?)\s*-->$/;
const FENCE = /^```(\S*)\s*$/;
/** Fences that look like commands but do not say whether they run. */
const AMBIGUOUS = new Set(["bash", "shell", "zsh", "console", "shell-session"]);

/** The pages whose blocks are checked: README.md and docs/*.md. */
export function docPages(root: string): string[] {
  const docs = readdirSync(join(root, "docs")).filter((f) => f.endsWith(".md")).sort();
  return ["README.md", ...docs.map((f) => `docs/${f}`)];
}

/** The fenced blocks of one page, with the marker before each; throws on a broken convention. */
export function docBlocks(root: string, page: string): DocBlock[] {
  const lines = readFileSync(join(root, page), "utf8").split("\n");
  const blocks: DocBlock[] = [];
  let marker: { text: string; line: number } | null = null;
  for (let i = 0; i < lines.length; i++) {
    const text = lines[i]!.trim();
    const m = MARKER.exec(text);
    if (m) {
      marker = { text: m[1]!, line: i + 1 };
      continue;
    }
    const fence = FENCE.exec(lines[i]!);
    if (!fence) {
      if (text !== "" && marker) {
        throw new Error(
          `${page}:${marker.line}: a docs-test marker must come right before a block`,
        );
      }
      continue;
    }
    const start = i;
    const body: string[] = [];
    for (i++; i < lines.length && !/^```\s*$/.test(lines[i]!); i++) body.push(lines[i]!);
    const lang = fence[1]!;
    if (AMBIGUOUS.has(lang)) {
      throw new Error(`${page}:${start + 1}: a \`${lang}\` block: use sh (run) or text (shown)`);
    }
    const block: DocBlock = {
      page,
      line: start + 1,
      lang,
      body: body.join("\n"),
      mode: "temp",
    };
    if (marker) {
      if (lang !== "sh") {
        throw new Error(`${page}:${marker.line}: a docs-test marker on a ${lang || "plain"} block`);
      }
      if (marker.text === "repo") block.mode = "repo";
      else {
        const skip = /^skip:\s*(\S.*)$/.exec(marker.text);
        if (!skip) throw new Error(`${page}:${marker.line}: unknown marker "${marker.text}"`);
        block.mode = "skip";
        block.reason = skip[1]!;
      }
    }
    marker = null;
    blocks.push(block);
  }
  return blocks;
}

/**
 * A fresh folder that stands for the repository root: one link per top-level entry of the
 * checkout (sources, scripts, node_modules), none for what a run or a build writes, so
 * `outputs/` and `dist/` are made in the folder, apart from the checkout and from other runs.
 */
export function repoView(root: string): string {
  const view = mkdtempSync(join(tmpdir(), "vf-docs-repo-"));
  for (const entry of readdirSync(root)) {
    if ([".git", "outputs", "dist", ".vf-cache"].includes(entry)) continue;
    symlinkSync(join(root, entry), join(view, entry));
  }
  return view;
}

/** The example command lines of a command's `--help` (the lines under `Example(s):`). */
export function helpExamples(help: string): string[] {
  const m = /^Examples?:\n((?: {2}\S.*\n?)+)/m.exec(help);
  if (!m) return [];
  return m[1]!.split("\n").filter((l) => l.trim() !== "").map((l) => l.trim());
}

/** A repository file named in backquotes: `bench/x.ts`, `tests/x_test.ts`, `docs/x.md`. */
const FILE_REF =
  /`((?:bench|bin|docs|examples|kit|lib|plugins|scripts|tests)\/[\w./-]+\.(?:ts|js|sh|md|toml|json|py|png))`/g;

/** The repository files a page names (in backquotes) that do not exist, as `line: path`. */
export function missingFileRefs(root: string, page: string): string[] {
  const lines = readFileSync(join(root, page), "utf8").split("\n");
  const missing: string[] = [];
  lines.forEach((line, i) => {
    for (const m of line.matchAll(FILE_REF)) {
      const path = m[1]!;
      if (!existsSync(join(root, path)) && !existsSync(join(root, dirname(page), path))) {
        missing.push(`${i + 1}: ${path}`);
      }
    }
  });
  return missing;
}
