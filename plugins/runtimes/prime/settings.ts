/**
 * Where the Prime API is and how to authenticate, read exactly as the Prime tools read it
 * (`core/config.py`@66fb4b70 of the Prime SDK): base URL from `PRIME_API_BASE_URL`, then `PRIME_BASE_URL`, then
 * `base_url` in `~/.prime/config.json`, else `https://api.primeintellect.ai` (a trailing
 * `/api/v1` is stripped); API key from `PRIME_API_KEY`, else `api_key` in the config file;
 * team from `PRIME_TEAM_ID`, else `team_id`.
 *
 * @module
 */
import { readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { addSecret, getEnv } from "../../../kit/mod.ts";

/** The default control-plane URL. */
const DEFAULT_PRIME_BASE_URL = "https://api.primeintellect.ai";

/** Resolved connection settings. `apiKey` is secret: never log or persist it. */
export interface PrimeSettings {
  baseUrl: string;
  apiKey: string | null;
  teamId: string | null;
}

function readConfigFile(): Record<string, unknown> {
  try {
    const raw = readFileSync(join(homedir(), ".prime", "config.json"), "utf8");
    const data = JSON.parse(raw);
    return data && typeof data === "object" ? data as Record<string, unknown> : {};
  } catch {
    return {};
  }
}

function nonEmpty(v: unknown): string | null {
  return typeof v === "string" && v.trim() !== "" ? v.trim() : null;
}

/** Strips trailing slashes and a trailing `/api/v1`. */
export function normalizeBaseUrl(url: string): string {
  let u = url.trim().replace(/\/+$/, "");
  if (u.endsWith("/api/v1")) u = u.slice(0, -"/api/v1".length).replace(/\/+$/, "");
  return u;
}

/** Reads the settings from the environment and `~/.prime/config.json`. */
export function loadPrimeSettings(overrides: { baseUrl?: string | null } = {}): PrimeSettings {
  const file = readConfigFile();
  addSecret(nonEmpty(file.api_key)); // as secret as PRIME_API_KEY: never written
  const baseUrl = nonEmpty(overrides.baseUrl) ?? nonEmpty(getEnv("PRIME_API_BASE_URL")) ??
    nonEmpty(getEnv("PRIME_BASE_URL")) ?? nonEmpty(file.base_url) ?? DEFAULT_PRIME_BASE_URL;
  return {
    baseUrl: normalizeBaseUrl(baseUrl),
    apiKey: nonEmpty(getEnv("PRIME_API_KEY")) ?? nonEmpty(file.api_key),
    teamId: nonEmpty(getEnv("PRIME_TEAM_ID")) ?? nonEmpty(file.team_id),
  };
}
