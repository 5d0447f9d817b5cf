/**
 * The message graph of a trace. Each request's messages are walked from the root, each
 * matched against the children of the node before it; the unmatched tail becomes unsampled
 * nodes and the model's response one sampled node. A divergent message forks a new branch.
 *
 * @module
 */
import type { Message, MessageNode } from "../../kit/trace/types.ts";

/** JSON with object keys sorted and no whitespace (a stable text for hashing). */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== "object") {
    return JSON.stringify(value === undefined ? null : value);
  }
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(",")}}`;
}

/** Tool-call arguments as canonical JSON; invalid JSON is kept as its raw text. */
function canonicalArguments(args: string): string {
  try {
    return canonicalJson(JSON.parse(args));
  } catch {
    return args;
  }
}

/** A JSON leaf as {@link canonicalJson} writes it: undefined and non-finite numbers are null. */
function leaf(value: unknown): unknown {
  return value === undefined || (typeof value === "number" && !Number.isFinite(value))
    ? null
    : value;
}

/**
 * Whether two values have the same {@link canonicalJson}, read without writing it: a
 * program sends the whole conversation again with every call, and the texts of its parts
 * are compared as they are, never copied into a canonical string.
 */
function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || a === null || typeof b !== "object" || b === null) {
    return leaf(a) === leaf(b);
  }
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const c = b as unknown[];
    if (a.length !== c.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameJson(a[i], c[i])) return false;
    return true;
  }
  const x = a as Record<string, unknown>;
  const y = b as Record<string, unknown>;
  let keys = 0;
  for (const key in x) {
    if (!Object.hasOwn(x, key) || x[key] === undefined) continue;
    keys++;
    if (!Object.hasOwn(y, key) || y[key] === undefined || !sameJson(x[key], y[key])) return false;
  }
  for (const key in y) if (Object.hasOwn(y, key) && y[key] !== undefined) keys--;
  return keys === 0;
}

/** `u ?? empty` and `v ?? empty` are the same value (strings compared as they are). */
function sameValue(u: unknown, v: unknown, empty: unknown): boolean {
  const p = u ?? empty;
  const q = v ?? empty;
  if (p === q) return true;
  if (typeof p === "string" && typeof q === "string") return false;
  return sameJson(p, q);
}

function toolCallsOf(m: Record<string, unknown>): Record<string, unknown>[] {
  return Array.isArray(m.tool_calls) ? m.tool_calls as Record<string, unknown>[] : [];
}

/** The fields of a provider item that carry state the typed message does not. */
const STATE_FIELDS = ["data", "encrypted_content", "phase", "signature"];

function isItem(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * What of a message's provider items (`provider_state`, a list of a provider's own items)
 * tells it apart, as verifiers/v1/graph.py@a60a606 `message_hash` reads it: of an item the
 * typed message represents (a message, reasoning, or a call among its tool calls) only the
 * opaque state (`encrypted_content`, `signature`, `data`, `phase`; a message's parts other
 * than text), and the item is left out when it has none; any other item whole. So an item
 * the program sends back re-shaped (its ids, statuses or null fields changed) is the same.
 * No state is no items; null when the state is no list of items (then compared as it is).
 */
function stateKey(m: Record<string, unknown>): string[] | null {
  const state = m.provider_state ?? [];
  if (!Array.isArray(state) || !state.every(isItem)) return null;
  const out: string[] = [];
  for (const item of state) {
    const kind = typeof item.type === "string" && item.type !== ""
      ? item.type
      : item.role === "assistant"
      ? "message"
      : "";
    const kept: Record<string, unknown> = {};
    for (const key of STATE_FIELDS) {
      if (item[key] !== null && item[key] !== undefined) kept[key] = item[key];
    }
    if (kind === "message" && Array.isArray(item.content)) {
      const other = item.content.filter((p) =>
        !isItem(p) || (p.type !== "input_text" && p.type !== "output_text")
      );
      if (other.length > 0) kept.content = other;
    }
    const represented = kind === "message" || kind === "reasoning" ||
      ((kind === "function_call" || kind === "custom_tool_call") &&
        toolCallsOf(m).some((c) => c.id === item.call_id));
    if (represented && Object.keys(kept).length === 0) continue;
    out.push(`${kind}:${canonicalJson(represented ? kept : item)}`);
  }
  return out;
}

function sameState(x: Record<string, unknown>, y: Record<string, unknown>): boolean {
  if (x.provider_state === y.provider_state) return true;
  const p = stateKey(x);
  const q = stateKey(y);
  if (p === null || q === null) {
    return p === null && q === null && sameValue(x.provider_state, y.provider_state, null);
  }
  return p.length === q.length && p.every((key, i) => key === q[i]);
}

/**
 * Whether two messages are the same for the graph: the same role, content (`null` ≡ `""`),
 * reasoning, provider state (what of its items {@link stateKey} keeps, else canonical JSON),
 * tool calls (id, name, arguments as canonical JSON, kept as text when invalid) and
 * tool_call_id. Compared field by field, so that a
 * message is not canonicalised to be matched (a program sends the whole conversation again
 * with every call). Never serialized.
 */
export function sameMessage(a: Message, b: Message): boolean {
  if (a === b) return true;
  const x = a as Record<string, unknown>;
  const y = b as Record<string, unknown>;
  if (
    !sameValue(x.role, y.role, undefined) || !sameValue(x.content, y.content, "") ||
    !sameValue(x.reasoning_content, y.reasoning_content, "") ||
    !sameValue(x.tool_call_id, y.tool_call_id, null) ||
    !sameState(x, y)
  ) return false;
  const xs = toolCallsOf(x);
  const ys = toolCallsOf(y);
  if (xs.length !== ys.length) return false;
  for (let i = 0; i < xs.length; i++) {
    const p = xs[i]!;
    const q = ys[i]!;
    if (!sameValue(p.id, q.id, "") || !sameValue(p.name, q.name, "")) return false;
    const pa = typeof p.arguments === "string" ? p.arguments : "";
    const qa = typeof q.arguments === "string" ? q.arguments : "";
    if (pa !== qa && canonicalArguments(pa) !== canonicalArguments(qa)) return false;
  }
  return true;
}

function nowSeconds(): number {
  return (performance.timeOrigin + performance.now()) / 1000;
}

/** A graph's children by parent node, and how many nodes it has read. */
interface GraphIndex {
  children: Map<number | null, number[]>;
  read: number;
  /** The node last read, to notice a graph changed other than by appending. */
  last: MessageNode | undefined;
}

const graphIndexes = new WeakMap<MessageNode[], GraphIndex>();

/**
 * The children of each node of a graph (oldest first), brought up to date incrementally:
 * only nodes appended since the last call are read (a graph changed otherwise is read
 * again).
 */
function childrenOf(nodes: MessageNode[]): Map<number | null, number[]> {
  let index = graphIndexes.get(nodes);
  if (
    index === undefined || index.read > nodes.length ||
    (index.read > 0 && nodes[index.read - 1] !== index.last)
  ) {
    index = { children: new Map(), read: 0, last: undefined };
    graphIndexes.set(nodes, index);
  }
  for (let i = index.read; i < nodes.length; i++) {
    const parent = nodes[i]!.parent;
    const list = index.children.get(parent);
    if (list === undefined) index.children.set(parent, [i]);
    else list.push(i);
  }
  index.read = nodes.length;
  index.last = nodes[nodes.length - 1];
  return index.children;
}

/**
 * A message as a node holds it: its `provider_state` (a provider's items, which a dialect
 * reads out of the request or answer as they are) copied, so that the graph holds nothing
 * of a body a program or a harness in this process still owns. Only messages that become
 * nodes are copied: the conversation a program sends again is matched, not copied.
 */
function ownCopy(message: Message): Message {
  const state = (message as { provider_state?: unknown }).provider_state;
  if (state === undefined || state === null || typeof state !== "object") return message;
  return { ...message, provider_state: structuredClone(state) } as Message;
}

/**
 * Adds a request's messages to the graph: matches them from the root (each against the
 * latest child of its parent that is the same message) and appends the unmatched tail as
 * unsampled nodes. Returns the index of the node of the last message (null for an empty
 * request).
 */
export function addMessages(
  nodes: MessageNode[],
  messages: Message[],
  timestamp: number = nowSeconds(),
): number | null {
  // children as the graph stood before this call
  const children = childrenOf(nodes);
  let parent: number | null = null;
  let matching = true;
  for (const message of messages) {
    if (matching) {
      const kids = children.get(parent);
      let hit = -1;
      for (let k = (kids?.length ?? 0) - 1; k >= 0 && hit < 0; k--) {
        if (sameMessage(nodes[kids![k]!]!.message, message)) hit = kids![k]!;
      }
      if (hit >= 0) {
        parent = hit;
        continue;
      }
      matching = false;
    }
    nodes.push({ parent, message: ownCopy(message), sampled: false, timestamp });
    parent = nodes.length - 1;
  }
  return parent;
}

/** Appends the model's response as a sampled node under `parent`; returns its index. */
function addSampled(
  nodes: MessageNode[],
  parent: number | null,
  message: Message,
  timestamp: number = nowSeconds(),
): number {
  nodes.push({ parent, message: ownCopy(message), sampled: true, timestamp });
  return nodes.length - 1;
}

/**
 * Commits one exchange: the request's messages, then the response as a sampled node.
 * Returns the sampled node's index.
 */
export function commitTurn(
  nodes: MessageNode[],
  request: Message[],
  response: Message,
  timestamp: number = nowSeconds(),
): number {
  return addSampled(nodes, addMessages(nodes, request, timestamp), response, timestamp);
}
