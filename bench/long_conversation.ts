/**
 * Long conversations: a program sends the whole conversation again with every model call,
 * so recording a rollout of `turns` calls reads O(turns²) messages. Prints, for 50, 100 and
 * 200 turns of 2 KiB messages, the time the message graph takes to record every call
 * (`commitTurn`, lib/interception/graph.ts) beside the time `JSON.parse` takes to read the same
 * request bodies, which the interception server does anyway.
 *
 * `deno run -A bench/long_conversation.ts` (or `bun bench/long_conversation.ts`)
 *
 * @module
 */
import process from "node:process";
import { runtimeName } from "../kit/_runtime/runtime_name.ts";
import type { Message, MessageNode } from "../kit/trace/types.ts";
import { commitTurn } from "../lib/interception/graph.ts";
import { loadAverages } from "./common.ts";

/** Records one rollout of `turns` calls; returns the milliseconds of graph work and of parsing. */
export function longConversation(
  turns: number,
  size: number,
): { graphMs: number; parseMs: number } {
  const nodes: MessageNode[] = [];
  const history: Message[] = [
    { role: "system", content: "s".repeat(200) },
    { role: "user", content: "u".repeat(size) },
  ];
  let graphMs = 0;
  let parseMs = 0;
  for (let i = 0; i < turns; i++) {
    const body = JSON.stringify({ model: "m", messages: history });
    let started = performance.now();
    const request = JSON.parse(body).messages as Message[]; // fresh objects, as every call has
    parseMs += performance.now() - started;
    const reply: Message = { role: "assistant", content: `answer ${i} `.repeat(size / 10) };
    started = performance.now();
    commitTurn(nodes, request, reply);
    graphMs += performance.now() - started;
    history.push(reply, { role: "user", content: `tool output ${i} `.repeat(size / 16) });
  }
  // one chain: the system message, then per call the message before it and the reply
  if (nodes.length !== 1 + 2 * turns) throw new Error(`graph has ${nodes.length} nodes`);
  return { graphMs, parseMs };
}

/** Prints the graph's and the parser's time for 50, 100 and 200 calls. */
export function printLongConversations(): void {
  longConversation(20, 512); // warm-up
  console.log(`long conversations on ${runtimeName()}, 2 KiB messages (${loadAverages()})`);
  for (const turns of [50, 100, 200]) {
    const { graphMs, parseMs } = longConversation(turns, 2048);
    console.log(
      `  ${String(turns).padStart(3)} calls: graph ${graphMs.toFixed(0).padStart(4)} ms, ` +
        `parsing the requests ${parseMs.toFixed(0).padStart(4)} ms (${
          (graphMs / parseMs).toFixed(2)
        }x)`,
    );
  }
}

if (import.meta.main) {
  printLongConversations();
  process.exit(0);
}
