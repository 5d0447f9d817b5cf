/**
 * Relaying a streamed answer: the provider's server-sent events go to the program as they
 * arrive (events the dialect hides excepted), each read once by the dialect's stream
 * reader; at the end the answer is recorded and the terminal event sent. A stream that
 * breaks, carries an error or a malformed event, or ends early fails the call and cuts the
 * program's stream off, so it never passes for a complete answer.
 *
 * @module
 */
import { ProviderError } from "../../kit/errors.ts";
import { redact } from "../../kit/secrets.ts";
import type {
  AnswerDelta,
  DialectOutcome,
  DialectStreamReader,
  DialectStreamRenderer,
} from "../../kit/wire/dialect.ts";
import type { WireReply } from "../../kit/wire/http.ts";
import { formatSseEvent, type SseEvent, SseSplitter } from "../../kit/wire/sse.ts";
import type { ProviderResponse, ProviderStreamResponse } from "../clients/provider_client.ts";
import { relayHeaders } from "./headers.ts";
import type { Recorded, Session } from "./session.ts";

/** One streamed call being relayed. */
export interface StreamCall {
  reply: WireReply;
  session: Session;
  response: ProviderStreamResponse;
  /** Records the answer (`finish`: the trace's finish reason, when set here). */
  commit(outcome: DialectOutcome, finish?: "stop"): void;
  /**
   * Set when the task's response hooks must see the answer first: the stream is held until
   * it ended, then goes on unchanged, is replaced (`events`, the answer `outcome`), or was
   * answered already (null: an error or a stop, the call recorded).
   */
  hold?(
    read: DialectOutcome,
  ): Promise<"unchanged" | null | { outcome: DialectOutcome; events: string }>;
  /** Records the call's failure. */
  fail(err: ProviderError): void;
  /** Records a call cut off by its session's end. */
  closedMidway(): null;
  /** The stream's terminal event, as said in errors. */
  terminalEvent: string;
}

/**
 * A stream translated for the program: the provider's events are read, not relayed; the
 * pieces of the answer they carry (`pending`, filled by the reader) go to the program as
 * the renderer says them, event by event, and the end is rendered from the whole answer.
 */
export interface StreamTranslation {
  renderer: DialectStreamRenderer;
  /** The pieces read from the events not rendered yet (the reader's `onDelta` adds them). */
  pending: AnswerDelta[];
  /** The answer read as the program's renderer takes it. */
  outcome(read: DialectOutcome): DialectOutcome;
  /** The answer read as the trace records it (see translate.ts `recordedOutcome`). */
  recorded(read: DialectOutcome): DialectOutcome;
}

/** Relays a stream event by event; commits and sends the terminal event at the end. */
export async function relayStream(
  call: StreamCall,
  reader: DialectStreamReader,
  translation: StreamTranslation | null = null,
): Promise<Recorded | null> {
  const { reply, session, response } = call;
  const headers = {
    ...relayHeaders(response.headers),
    "content-type": response.headers["content-type"] ?? "text/event-stream",
    "cache-control": "no-cache",
  };
  // held for the response hooks: nothing reaches the program before they ran
  let held = call.hold !== undefined;
  if (!held) reply.head(response.status, headers);
  const written: (string | Uint8Array)[] = [];
  const write = (chunk: string | Uint8Array) => {
    written.push(chunk);
    if (!held) reply.write(chunk);
  };
  /** Sends what was held, and what comes next as it comes. */
  const release = () => {
    if (!held) return;
    held = false;
    reply.head(response.status, headers);
    for (const chunk of written) reply.write(chunk);
  };
  if (translation !== null) write(translation.renderer.start().join(""));
  const splitter = new SseSplitter();
  let done: string | null = null;
  let upstreamError: string | null = null;
  let malformed: string | null = null;
  /**
   * Reads the events of one upstream chunk; relays them. `bytes` is the chunk when the
   * events are exactly it: if every event is relayed unchanged (no secret to scrub), the
   * chunk goes on as it came, with no re-encoding.
   */
  const handle = (events: SseEvent[], bytes: Uint8Array | null) => {
    let relayed: string[] | null = null;
    let whole = bytes !== null;
    for (const event of events) {
      if (done !== null || malformed !== null) {
        whole = false;
        continue;
      }
      const verdict = reader.read(event);
      switch (verdict.kind) {
        case "terminal":
          done = formatSseEvent(event);
          whole = false;
          continue;
        case "malformed":
          malformed = redact(verdict.data);
          whole = false;
          continue;
        case "hide":
          whole = false;
          continue;
        case "error":
          upstreamError = redact(verdict.message);
      }
      if (translation !== null) continue;
      const safe = redact(event.raw);
      if (safe !== event.raw) whole = false;
      (relayed ??= []).push(safe);
    }
    if (translation !== null) {
      // the pieces of this read, rendered in the program's dialect, in one write
      const pieces = translation.pending.splice(0);
      const text = pieces.flatMap((d) => translation.renderer.delta(d)).join("");
      if (text !== "") write(redact(text));
      return;
    }
    if (whole && bytes !== null) return write(bytes);
    // one write for the events of one upstream read, however many there are
    if (relayed !== null) write(relayed.map((raw) => formatSseEvent({ raw })).join(""));
  };
  try {
    for await (const bytes of response.body) {
      const events = splitter.push(bytes);
      handle(events, splitter.verbatim ? bytes : null);
    }
    handle(splitter.end(), null);
  } catch (err) {
    if (session.closed) return call.closedMidway();
    call.fail(
      err instanceof ProviderError ? err : new ProviderError(
        `model stream failed: ${err instanceof Error ? err.message : err}`,
        502,
      ),
    );
    reply.destroy();
    return null;
  }
  if (upstreamError !== null) {
    release();
    call.fail(new ProviderError(`provider stream reported an error: ${upstreamError}`, 502));
    if (translation !== null) write(translation.renderer.error(upstreamError).join(""));
    reply.end();
    return null;
  }
  const broken = malformed !== null
    ? `provider stream carried a malformed event: ${JSON.stringify(malformed)}`
    : !reader.answered
    ? "provider stream ended without a completion"
    : done === null
    ? `provider stream ended before its terminal event (${call.terminalEvent})`
    : null;
  if (broken !== null) {
    // Cut the program's stream off: ended cleanly it would pass for a complete answer.
    call.fail(new ProviderError(broken, 502));
    response.cancel();
    reply.destroy();
    return null;
  }
  const outcome = reader.result();
  if (held) {
    const verdict = await call.hold!(
      translation === null ? outcome : translation.recorded(outcome),
    );
    if (verdict === null) return null;
    if (verdict !== "unchanged") {
      reply.head(response.status, headers);
      call.commit(verdict.outcome, "stop");
      reply.end(verdict.events);
      return { status: response.status, headers, body: verdict.events };
    }
    release();
  }
  if (translation === null) {
    call.commit(outcome);
    write(done!);
  } else {
    call.commit(translation.recorded(outcome));
    write(redact(translation.renderer.end(translation.outcome(outcome)).join("")));
  }
  reply.end();
  return { status: response.status, headers, body: written };
}

/** The parsed text, or null when it is no JSON. */
export function parseJsonOrNull(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

/** Reads a streamed reply in full, as text. */
export async function drain(
  response: Extract<ProviderResponse, { kind: "stream" }>,
): Promise<string> {
  const streaming = new TextDecoder(); // its own: it holds a split character between reads
  let text = "";
  for await (const bytes of response.body) text += streaming.decode(bytes, { stream: true });
  return text + streaming.decode();
}
