/**
 * Secrets of this process and their scrubbing. Every value that is a credential — the
 * value of each variable named as a key (`client.api_key_var`, a judge's `api_key_var`,
 * `PRIME_API_KEY`, `MODAL_TOKEN_ID`/`MODAL_TOKEN_SECRET`, any host variable whose name
 * says it holds a key, token, secret or password), configured header values and the
 * userinfo of configured URLs — is registered here, and {@link redact} replaces each
 * occurrence with `***` in anything about to be written or printed: run files, logs,
 * stdout/stderr, the sandbox ledger, error messages and provider error bodies.
 *
 * Values shorter than {@link MIN_SECRET_CHARS} characters are not registered: they are
 * too common to scrub without mangling ordinary text (and too short to be real keys).
 *
 * @module
 */
import { getAllEnv } from "./_runtime/env.ts";

/** What a secret is replaced with. */
export const MASK = "***";

/** Shortest value treated as a secret. */
const MIN_SECRET_CHARS = 8;

/** Host variables that always hold credentials, whatever the config says. */
const CREDENTIAL_VARIABLES = [
  "OPENAI_API_KEY",
  "PRIME_API_KEY",
  "MODAL_TOKEN_ID",
  "MODAL_TOKEN_SECRET",
] as const;

/** Words in a variable name that say it holds a credential. */
const CREDENTIAL_WORDS = /(KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL)/;
/** Name endings of variables that locate a credential rather than hold one. */
const LOCATOR_ENDINGS = /_(PATH|FILE|DIR|URL|HOST|PORT|SOCK|TYPE|NAME|ID_FILE)$/;

/** Every form a registered value is searched in (raw, JSON-escaped, URL-encoded). */
const forms = new Set<string>();
/** The forms, longest first, so a secret containing another is scrubbed whole. */
let ordered: string[] = [];

/** True when a variable's name says it holds a credential (`GITHUB_TOKEN`, `AWS_SECRET_ACCESS_KEY`). */
export function isCredentialName(name: string): boolean {
  const upper = name.toUpperCase();
  return CREDENTIAL_WORDS.test(upper) && !LOCATOR_ENDINGS.test(upper);
}

/** Registers one secret value (ignored when empty or shorter than {@link MIN_SECRET_CHARS}). */
export function addSecret(value: string | null | undefined): void {
  if (typeof value !== "string" || value.length < MIN_SECRET_CHARS) return;
  const before = forms.size;
  forms.add(value);
  forms.add(JSON.stringify(value).slice(1, -1));
  forms.add(encodeURIComponent(value));
  if (forms.size !== before) ordered = [...forms].sort((a, b) => b.length - a.length);
}

/** Registers the values of the named variables (unset ones are skipped). */
function addSecretVariables(
  names: Iterable<string | null | undefined>,
  env: Record<string, string | undefined> = getAllEnv(),
): void {
  for (const name of names) if (name) addSecret(env[name]);
}

/**
 * Registers the host's credentials: the values of {@link CREDENTIAL_VARIABLES} and of every
 * variable {@link isCredentialName} picks out.
 */
export function addHostSecrets(env: Record<string, string | undefined> = getAllEnv()): void {
  addSecretVariables(CREDENTIAL_VARIABLES, env);
  for (const [name, value] of Object.entries(env)) if (isCredentialName(name)) addSecret(value);
}

/** Registers the userinfo (user name and password) of a URL. */
function addUrlSecrets(url: string | null | undefined): void {
  if (!url) return;
  try {
    const u = new URL(url);
    for (const part of [u.username, u.password]) {
      if (!part) continue;
      addSecret(part);
      addSecret(decodeURIComponent(part));
    }
  } catch {
    // not a URL: nothing to register
  }
}

/** The client-like parts of a config that name credentials. */
export interface SecretBearingClient {
  base_url?: string | null;
  api_key_var?: string | null;
  headers?: Record<string, string> | null;
}

/** Registers a client's key variable's value, its header values and its URL's userinfo. */
export function addClientSecrets(
  client: SecretBearingClient,
  env: Record<string, string | undefined> = getAllEnv(),
): void {
  addSecretVariables([client.api_key_var], env);
  for (const value of Object.values(client.headers ?? {})) addSecret(value);
  addUrlSecrets(client.base_url);
}

/** Replaces every registered secret in `text` with {@link MASK}. */
export function redact(text: string): string {
  if (ordered.length === 0) return text;
  let out = text;
  for (const secret of ordered) {
    if (out.includes(secret)) out = out.split(secret).join(MASK);
  }
  return out;
}

/** A URL with its userinfo replaced by {@link MASK} (unchanged when it has none or is no URL). */
export function maskUrl(url: string): string {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return url;
  }
  if (!u.username && !u.password) return url;
  u.username = MASK;
  u.password = "";
  return u.toString();
}

/** True when a URL's userinfo is the mask {@link maskUrl} leaves. */
export function isMaskedUrl(url: string | null | undefined): boolean {
  if (!url) return false;
  try {
    return new URL(url).username === MASK;
  } catch {
    return false;
  }
}

/** Forgets every registered secret (tests only). */
export function clearSecretsForTests(): void {
  forms.clear();
  ordered = [];
}
