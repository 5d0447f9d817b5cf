/**
 * Values derived from a trace and never serialized: branches, the last conversation,
 * the last reply, turn count, reward.
 *
 * @module
 */
import type { Message, MessageNode, Trace } from "./types.ts";

/** Root-to-leaf paths of the message graph (leaves in node order). */
export function branches(nodes: MessageNode[]): number[][] {
  const hasChild = new Set<number>();
  for (const n of nodes) if (n.parent !== null) hasChild.add(n.parent);
  const out: number[][] = [];
  for (let i = 0; i < nodes.length; i++) {
    if (hasChild.has(i)) continue;
    const path: number[] = [];
    for (let j: number | null = i; j !== null; j = nodes[j]?.parent ?? null) path.push(j);
    out.push(path.reverse());
  }
  return out;
}

/** A trace as the derived values read it: its nodes, and its calls when it has them. */
export type TraceView = Pick<Trace, "nodes"> & Partial<Pick<Trace, "calls">>;

/**
 * The nodes committed by auxiliary calls (an agent's own calls: a session title), which are
 * neither turns nor the conversation's end; empty for a trace without such calls.
 */
export function auxiliaryNodes(trace: TraceView): Set<number> {
  const out = new Set<number>();
  for (const c of trace.calls ?? []) {
    if (c.auxiliary !== undefined && c.node !== null) out.add(c.node);
  }
  return out;
}

/** The messages of the last branch (the conversation as it ended). */
export function lastMessages(trace: TraceView): Message[] {
  const aux = auxiliaryNodes(trace);
  if (aux.size > 0) {
    // the last branch whose leaf is the agent's own turn, not an auxiliary call's answer
    const all = branches(trace.nodes).filter((b) => !aux.has(b[b.length - 1]!));
    return (all[all.length - 1] ?? []).flatMap((j) => trace.nodes[j]?.message ?? []);
  }
  const nodes = trace.nodes;
  // A node's parent comes before it (the graph only appends), so the last node is the leaf
  // of the last branch: walk up from it, with no list of every branch. A graph whose
  // parents point forward takes the general way.
  for (let i = 0; i < nodes.length; i++) {
    const parent = nodes[i]!.parent;
    if (parent !== null && parent >= i) {
      const all = branches(nodes);
      return (all[all.length - 1] ?? []).flatMap((j) => nodes[j]?.message ?? []);
    }
  }
  const out: Message[] = [];
  for (let j: number | null = nodes.length - 1; j !== null && j >= 0; j = nodes[j]!.parent) {
    const message = nodes[j]!.message;
    if (message !== undefined) out.push(message);
  }
  return out.reverse();
}

/** Text of the last assistant message of the last branch ("" when none). */
export function lastReply(trace: TraceView): string {
  const msgs = lastMessages(trace);
  const m = msgs.findLast((m) => m.role === "assistant");
  return typeof m?.content === "string" ? m.content : "";
}

/** Number of model turns: sampled nodes, but those of auxiliary calls. */
export function numTurns(trace: TraceView): number {
  const aux = auxiliaryNodes(trace);
  let n = 0;
  for (let i = 0; i < trace.nodes.length; i++) if (trace.nodes[i]!.sampled && !aux.has(i)) n++;
  return n;
}

/** `Σ score × weight` over non-null rewards (no normalisation). */
export function traceReward(trace: Pick<Trace, "rewards">): number {
  let sum = 0;
  for (const r of Object.values(trace.rewards)) if (r) sum += r.score * r.weight;
  return sum;
}
