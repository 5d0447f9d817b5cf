/**
 * What an ACP session told the client, as a trace records it (`trace.info.acp`): the
 * agent's reply text, its tool calls with their updates, usage, the permission requests
 * and how they were answered, and the prompt's stop reason. Updates are folded in as they
 * arrive, so a rollout cut short keeps what came before the cut.
 *
 * @module
 */
import type { SessionUpdate } from "@agentclientprotocol/sdk";

/** One tool call the agent reported (`tool_call`, then `tool_call_update`s folded in). */
export interface AcpToolCall {
  id: string;
  title: string | null;
  kind: string | null;
  status: string | null;
  /** The raw input the agent reported, when it did. */
  input: unknown;
  /** The raw output the agent reported, when it did. */
  output: unknown;
  /** Text the tool call's content and terminal output carried, in order (capped). */
  text: string;
  /** How many updates came for it, the first `tool_call` included. */
  updates: number;
}

/** One permission request and the option chosen (null: refused without an option). */
export interface AcpPermission {
  tool_call: string;
  title: string | null;
  outcome: "selected" | "cancelled";
  option: string | null;
  kind: string | null;
}

/** The ACP part of a trace's `info`. */
export interface AcpRecord {
  agent: { name: string | null; version: string | null };
  session_id: string | null;
  stop_reason: string | null;
  /** The agent's reply: the chunks of its latest message (reset when `messageId` changes). */
  text: string;
  /** Reasoning chunks of the latest message, when the agent sends them. */
  thought: string;
  tool_calls: AcpToolCall[];
  permissions: AcpPermission[];
  /** The latest `usage_update` (context used and size, cost when given). */
  usage: Record<string, unknown> | null;
  /** Counts of updates by `sessionUpdate` kind. */
  updates: Record<string, number>;
}

/** Characters kept of one tool call's text. */
const TOOL_TEXT_CHARS = 4000;

/** An empty record. */
export function newAcpRecord(): AcpRecord {
  return {
    agent: { name: null, version: null },
    session_id: null,
    stop_reason: null,
    text: "",
    thought: "",
    tool_calls: [],
    permissions: [],
    usage: null,
    updates: {},
  };
}

/**
 * Folds `session/update`s into an {@link AcpRecord}. The reply text is the chunks of one
 * message: a chunk with another `messageId` starts it again (as Python's runner does), and
 * so does a chunk after a tool call, for agents that send no `messageId` (pi), so the reply
 * is the text after the agent's last tool call.
 */
export class AcpCollector {
  readonly record: AcpRecord;
  #messageId: string | null = null;
  #toolSinceText = false;
  readonly #byId = new Map<string, AcpToolCall>();

  constructor(record: AcpRecord = newAcpRecord()) {
    this.record = record;
  }

  /** Folds one update in. */
  add(update: SessionUpdate): void {
    const kind = update.sessionUpdate;
    this.record.updates[kind] = (this.record.updates[kind] ?? 0) + 1;
    switch (update.sessionUpdate) {
      case "agent_message_chunk":
      case "agent_thought_chunk": {
        const messageId = typeof update.messageId === "string" ? update.messageId : null;
        if (
          (messageId !== null && messageId !== this.#messageId) || this.#toolSinceText
        ) {
          this.record.text = "";
          this.record.thought = "";
          this.#toolSinceText = false;
        }
        if (messageId !== null) this.#messageId = messageId;
        const text = update.content.type === "text" ? update.content.text : "";
        if (kind === "agent_message_chunk") this.record.text += text;
        else this.record.thought += text;
        return;
      }
      case "tool_call": {
        this.#toolSinceText = true;
        const call: AcpToolCall = {
          id: update.toolCallId,
          title: update.title ?? null,
          kind: update.kind ?? null,
          status: update.status ?? null,
          input: update.rawInput ?? null,
          output: update.rawOutput ?? null,
          text: "",
          updates: 1,
        };
        appendText(call, update.content);
        this.#byId.set(call.id, call);
        this.record.tool_calls.push(call);
        return;
      }
      case "tool_call_update": {
        this.#toolSinceText = true;
        let call = this.#byId.get(update.toolCallId);
        if (call === undefined) {
          call = {
            id: update.toolCallId,
            title: null,
            kind: null,
            status: null,
            input: null,
            output: null,
            text: "",
            updates: 0,
          };
          this.#byId.set(call.id, call);
          this.record.tool_calls.push(call);
        }
        call.updates += 1;
        if (update.title != null) call.title = update.title;
        if (update.kind != null) call.kind = update.kind;
        if (update.status != null) call.status = update.status;
        if (update.rawInput !== undefined) call.input = update.rawInput;
        if (update.rawOutput !== undefined) call.output = update.rawOutput;
        appendText(call, update.content ?? undefined);
        const terminal = (update._meta as Record<string, unknown> | null | undefined)
          ?.terminal_output as { data?: unknown } | undefined;
        if (typeof terminal?.data === "string") addText(call, terminal.data);
        return;
      }
      case "usage_update": {
        const { sessionUpdate: _, ...usage } = update;
        this.record.usage = usage as Record<string, unknown>;
        return;
      }
      default:
        return;
    }
  }
}

/** Appends the text of a tool call's content blocks. */
function appendText(call: AcpToolCall, content: readonly unknown[] | undefined): void {
  for (const item of content ?? []) {
    const block = item as { type?: string; content?: { type?: string; text?: string } };
    if (block.type === "content" && block.content?.type === "text") {
      addText(call, block.content.text ?? "");
    }
  }
}

function addText(call: AcpToolCall, text: string): void {
  if (call.text.length >= TOOL_TEXT_CHARS) return;
  call.text = (call.text + text).slice(0, TOOL_TEXT_CHARS);
}
