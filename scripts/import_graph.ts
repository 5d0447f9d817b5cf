/**
 * Prints the shape of the import graph between the folders of the code (tests, benchmarks
 * and scripts excluded), and the lines of code per layer.
 *
 * Definitions (the figures mean exactly this):
 * - A **node** is a folder: `kit/<area>`, `lib/<area>` (subfolders belong to their area, so
 *   `lib/plugins/fetch` is `lib/plugins`), `plugins/<kind>/<id>`; a file directly under
 *   `kit/`, `lib/` or `plugins/` (`kit/errors.ts`, `plugins/builtins.ts`) and each composition
 *   root (`cli.ts`, `mod.ts`) is a node of its own.
 * - An **edge** u → v exists when a file of u imports a file of v (u ≠ v) through a relative
 *   specifier in `import`/`export ... from`, `import()` or `new URL(..., import.meta.url)`,
 *   type-only imports included (the same scan as scripts/check_layers.ts). Its weight is the
 *   number of (importing file, imported file) pairs it carries.
 * - **Levels**: the number of nodes on the longest path of the condensed graph, where each
 *   strongly connected component (a set of folders that import each other in a cycle) counts
 *   as one node. A folder that imports nothing is on level 1.
 * - **Imports running back up**: the fewest edges whose removal leaves the folder graph
 *   without cycles (a minimum feedback arc set, ties broken by the fewest file imports),
 *   computed exactly per strongly connected component. Each of them is an import going from
 *   a lower folder to a higher one. With them removed, the longest path is printed as
 *   "levels without them".
 * - **Lines per layer**: newline count of the `.ts` files of kit (`kit/`), the engine (`lib/`
 *   outside `lib/cli/`), the CLI (`lib/cli/`), the plugins (`plugins/`) and the roots
 *   (`cli.ts`, `mod.ts`).
 *
 * Usage: deno run -A scripts/import_graph.ts [checkout]   (default: this repository)
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import process from "node:process";
import { importsOf, tsFiles } from "./check_layers.ts";

/** The folder node a repository-relative `.ts` path belongs to. */
export function nodeOf(file: string): string {
  const parts = file.split("/");
  if (parts[0] === "plugins" && parts.length > 3) return parts.slice(0, 3).join("/");
  return parts.length <= 2 ? file : parts.slice(0, 2).join("/");
}

/** The layer a repository-relative `.ts` path counts its lines under. */
function layerOf(file: string): string {
  if (file.startsWith("kit/")) return "kit";
  if (file.startsWith("lib/cli/")) return "lib/cli";
  if (file.startsWith("lib/")) return "lib engine";
  if (file.startsWith("plugins/")) return "plugins";
  return "roots (cli.ts, mod.ts)";
}

/** Folder edges: `edges.get(u).get(v)` is the number of file imports from u into v. */
type Graph = Map<string, Map<string, number>>;

/** The strongly connected components of `graph` (Tarjan), each a list of nodes. */
function components(nodes: string[], graph: Graph): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const out: string[][] = [];
  const visit = (v: string) => {
    index.set(v, index.size);
    low.set(v, index.get(v)!);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v)!.keys()) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const comp: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        comp.push(w);
      } while (w !== v);
      out.push(comp.sort());
    }
  };
  for (const v of nodes) if (!index.has(v)) visit(v);
  return out;
}

/**
 * A minimum feedback arc set of one component: the order of its nodes (importers first)
 * with the fewest edges pointing backwards, ties broken by their weight. Exact dynamic
 * programming over the subsets of the component (2^n states; refused above 27 folders).
 */
function feedbackArcs(comp: string[], graph: Graph): Array<[string, string]> {
  const n = comp.length;
  if (n === 1) return [];
  if (n > 27) throw new Error(`a cycle through ${n} folders is too large to solve exactly`);
  // An edge counts 1024 plus its file imports: fewest edges first, then fewest imports.
  const cost = (from: number, to: number) => {
    const w = graph.get(comp[from]!)!.get(comp[to]!) ?? 0;
    return w ? 1024 + Math.min(w, 1023) : 0;
  };
  // costOf(v, set) = the cost of v's edges into `set`, from two tables of half a set each.
  const half = n >> 1;
  const lowMask = (1 << half) - 1;
  const tables = (bits: number, offset: number) =>
    comp.map((_, v) => {
      const t = new Int32Array(1 << bits);
      for (let set = 1; set < t.length; set++) {
        const u = 31 - Math.clz32(set & -set);
        t[set] = t[set & (set - 1)]! + cost(v, u + offset);
      }
      return t;
    });
  const low = tables(half, 0);
  const high = tables(n - half, half);
  const size = 1 << n;
  const best = new Int32Array(size).fill(0x7fffffff);
  const choice = new Int8Array(size);
  best[0] = 0;
  for (let set = 0; set < size - 1; set++) {
    const base = best[set]!;
    const lo = set & lowMask;
    const hi = set >>> half;
    for (let v = 0; v < n; v++) {
      const bit = 1 << v;
      if (set & bit) continue;
      // v is placed after every node of `set`: its imports of them point backwards.
      const c = base + low[v]![lo]! + high[v]![hi]!;
      const next = set | bit;
      if (c < best[next]!) {
        best[next] = c;
        choice[next] = v;
      }
    }
  }
  const order: number[] = [];
  for (let set = size - 1; set > 0; set &= ~(1 << choice[set]!)) order.unshift(choice[set]!);
  const arcs: Array<[string, string]> = [];
  order.forEach((v, i) => {
    for (const u of order.slice(0, i)) if (cost(v, u)) arcs.push([comp[v]!, comp[u]!]);
  });
  return arcs;
}

/** Longest path in nodes through an acyclic graph given by `next`. */
function longestPath(nodes: string[], next: (v: string) => Iterable<string>): number {
  const memo = new Map<string, number>();
  const depth = (v: string): number => {
    if (memo.has(v)) return memo.get(v)!;
    let d = 1;
    for (const w of next(v)) d = Math.max(d, 1 + depth(w));
    memo.set(v, d);
    return d;
  };
  return Math.max(0, ...nodes.map(depth));
}

/** The figures for the checkout at `root`. */
export function importGraph(root: string) {
  const files = ["cli.ts", "mod.ts"].filter((f) => existsSync(join(root, f)))
    .concat(tsFiles("kit", root), tsFiles("lib", root), tsFiles("plugins", root));
  const graph: Graph = new Map();
  const carriers = new Map<string, string[]>();
  const lines = new Map<string, number>();
  for (const file of files) {
    const layer = layerOf(file);
    const text = readFileSync(join(root, file), "utf8");
    lines.set(layer, (lines.get(layer) ?? 0) + (text.match(/\n/g)?.length ?? 0));
    const from = nodeOf(file);
    if (!graph.has(from)) graph.set(from, new Map());
    for (const target of importsOf(file, root)) {
      const to = nodeOf(target);
      if (to === from || !target.endsWith(".ts")) continue;
      const out = graph.get(from)!;
      out.set(to, (out.get(to) ?? 0) + 1);
      const key = `${from} -> ${to}`;
      carriers.set(key, [...(carriers.get(key) ?? []), `${file} -> ${target}`]);
    }
  }
  for (const targets of [...graph.values()]) {
    for (const to of targets.keys()) if (!graph.has(to)) graph.set(to, new Map());
  }
  const nodes = [...graph.keys()].sort();
  const comps = components(nodes, graph);
  const compOf = new Map<string, number>();
  comps.forEach((c, i) => c.forEach((v) => compOf.set(v, i)));
  const condensed = (i: number) => {
    const out = new Set<string>();
    for (const v of comps[i]!) {
      for (const w of graph.get(v)!.keys()) {
        if (compOf.get(w) !== i) out.add(String(compOf.get(w)));
      }
    }
    return out;
  };
  const levels = longestPath(comps.map((_, i) => String(i)), (i) => condensed(Number(i)));
  const backArcs = comps.flatMap((c) => feedbackArcs(c, graph));
  const removed = new Set(backArcs.map(([u, v]) => `${u} -> ${v}`));
  const levelsWithout = longestPath(
    nodes,
    (v) => [...graph.get(v)!.keys()].filter((w) => !removed.has(`${v} -> ${w}`)),
  );
  return {
    folders: nodes.length,
    edges: [...graph.values()].reduce((n, m) => n + m.size, 0),
    levels,
    levelsWithout,
    cycles: comps.filter((c) => c.length > 1),
    backArcs: backArcs.map(([u, v]) => ({
      edge: `${u} -> ${v}`,
      imports: carriers.get(`${u} -> ${v}`)!,
    })),
    lines: Object.fromEntries(
      ["kit", "lib engine", "lib/cli", "plugins", "roots (cli.ts, mod.ts)"].map((l) => [
        l,
        lines.get(l) ?? 0,
      ]),
    ),
  };
}

if (import.meta.main) {
  const root = process.argv[2] ?? join(import.meta.dirname!, "..");
  const g = importGraph(root);
  console.log(`folders: ${g.folders}, folder edges: ${g.edges}`);
  console.log(`levels (longest path, cycles condensed): ${g.levels}`);
  console.log(`folders in cycles: ${g.cycles.map((c) => `{${c.join(", ")}}`).join(" ") || "none"}`);
  const fileImports = g.backArcs.reduce((n, a) => n + a.imports.length, 0);
  console.log(`imports running back up: ${g.backArcs.length} edges (${fileImports} file imports)`);
  for (const arc of g.backArcs) {
    console.log(`  ${arc.edge}`);
    for (const line of arc.imports) console.log(`    ${line}`);
  }
  console.log(`levels without them: ${g.levelsWithout}`);
  console.log("lines per layer:");
  for (const [layer, n] of Object.entries(g.lines)) console.log(`  ${layer}: ${n}`);
}
