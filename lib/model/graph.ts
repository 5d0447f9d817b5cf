/**
 * The message graph of a trace. Each request's messages are walked from the root,
 * matching `(parent, messageHash)`; the unmatched tail becomes unsampled nodes and the
 * model's response one sampled node. A divergent message forks a new branch.
 *
 * @module
 */
import { createHash } from "node:crypto";
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

const hashCache = new WeakMap<object, string>();

/** Canonical texts up to this length are their own key; longer ones are hashed. */
const MAX_PLAIN_KEY = 512;

/**
 * A stable key of a message: role, content (`null` ≡ `""`), reasoning, provider state,
 * tool calls (arguments canonicalised) and tool_call_id — the canonical text itself when
 * short (no hashing for most messages), else its SHA-256. Never serialized.
 */
export function messageHash(message: Message): string {
  const cached = hashCache.get(message);
  if (cached !== undefined) return cached;
  const m = message as Record<string, unknown>;
  const calls = Array.isArray(m.tool_calls) ? m.tool_calls as Record<string, unknown>[] : [];
  const key = {
    role: m.role,
    content: m.content ?? "",
    reasoning: m.reasoning_content ?? "",
    provider_state: m.provider_state ?? null,
    tool_calls: calls.map((tc) => ({
      id: tc.id ?? "",
      name: tc.name ?? "",
      arguments: canonicalArguments(typeof tc.arguments === "string" ? tc.arguments : ""),
    })),
    tool_call_id: m.tool_call_id ?? null,
  };
  const text = canonicalJson(key);
  const hash = text.length <= MAX_PLAIN_KEY
    ? `=${text}`
    : `#${createHash("sha256").update(text).digest("hex")}`;
  hashCache.set(message, hash);
  return hash;
}

function nowSeconds(): number {
  return (performance.timeOrigin + performance.now()) / 1000;
}

/** A graph's `(parent, hash)` → latest node index, and how many nodes it has read. */
interface GraphIndex {
  keys: Map<string, number>;
  read: number;
  /** The node last read, to notice a graph changed other than by appending. */
  last: MessageNode | undefined;
}

const graphIndexes = new WeakMap<MessageNode[], GraphIndex>();

/**
 * The `(parent, hash)` index of a graph, brought up to date incrementally: only nodes
 * appended since the last call are hashed (a graph changed otherwise is read again).
 */
function indexOf(nodes: MessageNode[]): Map<string, number> {
  let index = graphIndexes.get(nodes);
  if (
    index === undefined || index.read > nodes.length ||
    (index.read > 0 && nodes[index.read - 1] !== index.last)
  ) {
    index = { keys: new Map(), read: 0, last: undefined };
    graphIndexes.set(nodes, index);
  }
  for (let i = index.read; i < nodes.length; i++) {
    const n = nodes[i]!;
    index.keys.set(`${n.parent}|${messageHash(n.message)}`, i);
  }
  index.read = nodes.length;
  index.last = nodes[nodes.length - 1];
  return index.keys;
}

/**
 * Adds a request's messages to the graph: matches them from the root and appends the
 * unmatched tail as unsampled nodes. Returns the index of the node of the last message
 * (null for an empty request).
 */
export function addMessages(
  nodes: MessageNode[],
  messages: Message[],
  timestamp: number = nowSeconds(),
): number | null {
  // (parent, hash) -> the latest node with that key, as the graph stood before this call.
  const index = indexOf(nodes);
  let parent: number | null = null;
  let matching = true;
  for (const message of messages) {
    if (matching) {
      const hit = index.get(`${parent}|${messageHash(message)}`);
      if (hit !== undefined) {
        parent = hit;
        continue;
      }
      matching = false;
    }
    nodes.push({ parent, message, sampled: false, timestamp });
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
  nodes.push({ parent, message, sampled: true, timestamp });
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
