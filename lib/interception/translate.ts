/**
 * Translation between dialects, at one place in the call path: when the provider does not
 * serve the program's dialect (`client.dialects`), the program's dialect states the
 * request in the trace's terms ({@link Dialect.neutralRequest}), the provider's dialect
 * builds its upstream body from them ({@link Dialect.prepareNeutral}), and the answer
 * comes back rendered in the program's dialect: a JSON answer whole, a stream piece by
 * piece as the provider's events arrive (relay.ts with the program's stream renderer).
 * What cannot be translated is refused in the program's error body, never dropped; so is
 * an image for a provider that takes none (`client.images = false`), whatever the dialect.
 *
 * @module
 */
import type {
  Dialect,
  DialectOutcome,
  DialectRequest,
  DialectStreamReader,
  PrepareOptions,
  RenderMeta,
  UpstreamCall,
} from "../../kit/wire/dialect.ts";
import { randomHex } from "../../kit/util/random_pool.ts";
import { normalizeFinishReason } from "../dialects/chat/codec.ts";
import type { StreamTranslation } from "./relay.ts";

/** The dialect preferred as the provider's when it lacks the program's own. */
const PREFERRED = "openai-chat";

/**
 * The dialect a call goes upstream in: the program's own when the provider serves it, else
 * chat completions when served, else the first one served.
 */
export function providerDialect(
  program: Dialect,
  served: readonly Dialect[],
  /** Not the program's own, even when served. */
  other = false,
): Dialect {
  if (other) served = served.filter((d) => d !== program);
  if (served.includes(program)) return program;
  return served.find((d) => d.id === PREFERRED) ?? served[0] ?? program;
}

/**
 * The upstream body of a program's request in the provider's dialect, or why it cannot be
 * sent there (the message of the program's 400).
 */
export function translateRequest(
  program: Dialect,
  provider: Dialect,
  request: DialectRequest,
  model: string,
  sampling: Record<string, unknown>,
  options: PrepareOptions,
): UpstreamCall | string {
  const cannot = `cannot translate this ${program.id} request for a provider that serves only ` +
    `${provider.id} (client.dialects)`;
  if (!program.neutralRequest || !program.streamRenderer || !provider.prepareNeutral) {
    return `${cannot}: verifiers-ts has no translation between the two`;
  }
  const neutral = program.neutralRequest(request);
  if (typeof neutral === "string") return `${cannot}: ${neutral}`;
  const upstream = provider.prepareNeutral(neutral, model, sampling, options);
  return typeof upstream === "string" ? `${cannot}: ${upstream}` : upstream;
}

/**
 * Why a request cannot go to a provider that takes no images (the message of the
 * program's 400), or null when it carries none: an image part in any message, a tool
 * result's included, as the program's dialect read it. Never sent with the image dropped.
 */
export function imageRefusal(request: DialectRequest): string | null {
  for (const [i, message] of request.messages.entries()) {
    const content = message.content;
    if (!Array.isArray(content) || !content.some((p) => p.type === "image_url")) continue;
    return `this request carries an image (in its ${message.role} message ${i + 1}), and ` +
      "the provider takes none (client.images = false): it was not sent";
  }
  return null;
}

/** The provider's answer as the program's dialect renders it: its finish reason the trace's. */
export function programOutcome(provider: Dialect, outcome: DialectOutcome): DialectOutcome {
  const reason = (provider.finishReason ?? normalizeFinishReason)(outcome.finishReason);
  return { ...outcome, finishReason: reason ?? outcome.finishReason };
}

/** Metadata of an answer rendered for the program. */
export function renderMeta(program: Dialect, model: string): RenderMeta {
  return {
    id: `${program.id}-${randomHex(12)}`,
    model,
    created: Math.floor(Date.now() / 1000),
    includeUsage: true,
  };
}

/**
 * The answer a translated call records: the provider's finish reason and usage, and the
 * message as the program reads it back from what it was sent (rendered in its dialect and
 * parsed again), so the turn the program sends next is the node the graph already holds.
 */
export function recordedOutcome(
  program: Dialect,
  rendered: unknown,
  outcome: DialectOutcome,
): DialectOutcome {
  const back = program.parseResponse(rendered);
  return back === null ? outcome : { ...outcome, message: back.message };
}

/** A provider's JSON answer rendered for the program, and as the trace records it. */
export function translatedAnswer(
  program: Dialect,
  provider: Dialect,
  model: string,
  outcome: DialectOutcome,
): { rendered: unknown; recorded: DialectOutcome } {
  const rendered = program.renderResponse(
    programOutcome(provider, outcome),
    renderMeta(program, model),
  );
  return { rendered, recorded: recordedOutcome(program, rendered, outcome) };
}

/**
 * A provider's stream as the program reads it: the provider's reader, whose pieces the
 * program's renderer says again (relay.ts).
 */
export function streamTranslation(
  program: Dialect,
  provider: Dialect,
  model: string,
): { translation: StreamTranslation; reader: DialectStreamReader } {
  const meta = renderMeta(program, model);
  const translation: StreamTranslation = {
    renderer: program.streamRenderer!(meta),
    pending: [],
    outcome: (read) => programOutcome(provider, read),
    recorded: (read) =>
      recordedOutcome(program, program.renderResponse(programOutcome(provider, read), meta), read),
  };
  const reader = provider.streamReader(false, (d) => translation.pending.push(d));
  return { translation, reader };
}
