/**
 * Where Modal is and who we are, resolved like the official SDK: environment variables
 * (`MODAL_SERVER_URL`, `MODAL_TOKEN_ID`, `MODAL_TOKEN_SECRET`, `MODAL_ENVIRONMENT`,
 * `MODAL_IMAGE_BUILDER_VERSION`) first, then the profile in `~/.modal.toml`
 * (`MODAL_CONFIG_PATH` overrides the file, `MODAL_PROFILE` or `active = true` picks it).
 *
 * @module
 */
import { readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { parse as parseToml } from "smol-toml";
import { addSecret, getEnv } from "../../../kit/mod.ts";

/** The production control plane. */
const DEFAULT_SERVER_URL = "https://api.modal.com:443";
/** The image builder version libmodal sends when none is configured. */
const DEFAULT_IMAGE_BUILDER_VERSION = "2024.10";

/** A resolved Modal profile. The token secret must never be logged. */
export interface ModalProfile {
  serverUrl: string;
  tokenId: string | null;
  tokenSecret: string | null;
  environment: string;
  imageBuilderVersion: string;
}

function nonEmpty(v: unknown): string | undefined {
  return typeof v === "string" && v !== "" ? v : undefined;
}

function readProfileFile(): Record<string, Record<string, unknown>> {
  const path = nonEmpty(getEnv("MODAL_CONFIG_PATH")) ?? join(homedir(), ".modal.toml");
  try {
    return parseToml(readFileSync(path, "utf8")) as Record<string, Record<string, unknown>>;
  } catch {
    return {};
  }
}

/** Resolves the profile from the environment and `~/.modal.toml` (as the official SDK). */
export function resolveModalProfile(): ModalProfile {
  const file = readProfileFile();
  let name = nonEmpty(getEnv("MODAL_PROFILE"));
  if (name === undefined) {
    for (const [n, data] of Object.entries(file)) {
      if (data && typeof data === "object" && data.active === true) {
        name = n;
        break;
      }
    }
  }
  const data: Record<string, unknown> = name !== undefined && Object.hasOwn(file, name)
    ? file[name] ?? {}
    : {};
  // a token from ~/.modal.toml is as secret as one from the environment: never written
  addSecret(nonEmpty(data.token_id));
  addSecret(nonEmpty(data.token_secret));
  return {
    serverUrl: nonEmpty(getEnv("MODAL_SERVER_URL")) ?? nonEmpty(data.server_url) ??
      DEFAULT_SERVER_URL,
    tokenId: nonEmpty(getEnv("MODAL_TOKEN_ID")) ?? nonEmpty(data.token_id) ?? null,
    tokenSecret: nonEmpty(getEnv("MODAL_TOKEN_SECRET")) ?? nonEmpty(data.token_secret) ?? null,
    environment: nonEmpty(getEnv("MODAL_ENVIRONMENT")) ?? nonEmpty(data.environment) ?? "",
    imageBuilderVersion: nonEmpty(getEnv("MODAL_IMAGE_BUILDER_VERSION")) ??
      nonEmpty(data.imageBuilderVersion) ?? DEFAULT_IMAGE_BUILDER_VERSION,
  };
}

/**
 * True when the server is on this machine. The official SDK then talks plain HTTP/2 to the
 * task command router even though the router URL says `https`.
 */
export function isLocalServer(serverUrl: string): boolean {
  let host: string;
  try {
    host = new URL(serverUrl).hostname;
  } catch {
    return false;
  }
  return host === "localhost" || host === "127.0.0.1" || host === "::1" || host === "[::1]" ||
    host === "172.21.0.1";
}
