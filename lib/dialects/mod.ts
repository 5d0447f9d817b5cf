/**
 * Every model API dialect the interception server serves, by id: one folder per dialect
 * under lib/dialects/ implementing {@link Dialect} (kit/wire/dialect.ts), and one line
 * here. The server routes each request to the dialect serving its path; the first one
 * also words the errors of paths no dialect serves.
 *
 * @module
 */
import type { Dialect } from "../../kit/wire/dialect.ts";
import { anthropicMessages } from "./anthropic/mod.ts";
import { openAIChat } from "./chat/mod.ts";
import { openAIResponses } from "./responses/mod.ts";

/** The dialects, by the id a config names them with (`client.dialects`). */
export const DIALECTS: Readonly<Record<string, Dialect>> = {
  chat: openAIChat,
  responses: openAIResponses,
  anthropic: anthropicMessages,
};

/** Every dialect of {@link DIALECTS}, in the map's order. */
export const ALL_DIALECTS: readonly Dialect[] = Object.values(DIALECTS);
