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
import { jsonUnicodeEscape, pythonJsonString } from "./util/python_json_string.ts";

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

/** Every form a registered value is searched in ({@link formsOf}). */
const forms = new Set<string>();
/**
 * Finds whether a text holds the start of any form ({@link startOf}), in one pass over it
 * however many forms there are: most texts hold none, and a search per form read each
 * trace line once per form (ten credentials make up to thirty forms; bench/redact.ts).
 * Only starts: the pattern never spells a secret, though its source may be shown outside
 * the process (a JavaScriptCore CPU profile names it by its source). A text that holds one
 * is searched form by form. Built again after a form is added ({@link holdsNoForm}); null
 * with fewer than two forms (a search for one form is as fast as a pattern, and faster than
 * a pattern of its start on V8) or when the engine refused the pattern: every text is then
 * searched form by form.
 */
let anyForm: RegExp | null = null;
let anyFormStale = false;

/**
 * The part of a form the one-pass pattern holds: its first six characters (mostly a key's
 * public prefix, `sk-pro`, `ghp_`, `hf_`, where it has one), and never half of it.
 */
function startOf(form: string): string {
  return form.slice(0, Math.min(6, form.length >> 1));
}

/** `text` as a regular expression matching it literally. */
function literal(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/**
 * True when {@link anyForm} (built first if a form was added since) finds no form's start
 * in `text`; false when it finds one or there is no pattern. An engine may refuse a
 * pattern too large when it is built (JavaScriptCore) or when it is first run (V8): the
 * pattern is then dropped, and its error with it.
 */
function holdsNoForm(text: string): boolean {
  try {
    if (anyFormStale) {
      anyFormStale = false;
      anyForm = forms.size < 2
        ? null
        : new RegExp([...new Set([...forms].map(startOf))].map(literal).join("|"));
    }
    return anyForm !== null && !anyForm.test(text);
  } catch {
    anyForm = null;
    return false;
  }
}

/** True when a variable's name says it holds a credential (`GITHUB_TOKEN`, `AWS_SECRET_ACCESS_KEY`). */
export function isCredentialName(name: string): boolean {
  const upper = name.toUpperCase();
  return CREDENTIAL_WORDS.test(upper) && !LOCATOR_ENDINGS.test(upper);
}

/**
 * A value inside a JSON string as the writers a provider or proxy may run write it:
 * `JSON.stringify`'s; all but printable ASCII as `\u00e9` (Python's `json.dumps`); that and
 * `/` as `\/` (PHP's `json_encode`); `<`, `>`, `&`, U+2028 and U+2029 as `\u003c`... (Go's
 * `encoding/json`). A provider that echoes a key in an error body writes it one of these ways.
 */
function jsonForms(value: string): string[] {
  const plain = JSON.stringify(value).slice(1, -1);
  const ascii = pythonJsonString(value).slice(1, -1);
  return [
    plain,
    ascii,
    ascii.replaceAll("/", "\\/"),
    plain.replace(/[<>&\u2028\u2029]/g, jsonUnicodeEscape),
  ];
}

/**
 * The forms a secret value is searched in: raw, as JSON writers escape it
 * ({@link jsonForms}) and URL-encoded. Most keys have one form in all.
 */
export function formsOf(value: string): string[] {
  return [...new Set([value, ...jsonForms(value), encodeURIComponent(value)])];
}

/** Registers one secret value (ignored when empty or shorter than {@link MIN_SECRET_CHARS}). */
export function addSecret(value: string | null | undefined): void {
  if (typeof value !== "string" || value.length < MIN_SECRET_CHARS) return;
  const before = forms.size;
  for (const form of formsOf(value)) forms.add(form);
  if (forms.size !== before) anyFormStale = true;
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

/**
 * Replaces every registered secret in `text` with {@link MASK}. Where occurrences of
 * secrets overlap (one ends inside another), the whole stretch they cover becomes one
 * mask, so no part of either is left.
 */
export function redact(text: string): string {
  if (forms.size === 0 || holdsNoForm(text)) return text;
  const spans: [number, number][] = [];
  for (const form of forms) {
    for (let at = text.indexOf(form); at !== -1; at = text.indexOf(form, at + 1)) {
      spans.push([at, at + form.length]);
    }
  }
  if (spans.length === 0) return text;
  spans.sort((a, b) => a[0] - b[0] || b[1] - a[1]);
  let out = "";
  let copied = 0; // the text before this is in `out`
  let [start, end] = spans[0]!; // the stretch to mask next
  for (const [from, to] of spans) {
    if (from < end) { // overlaps the stretch: widen it
      if (to > end) end = to;
      continue;
    }
    out += text.slice(copied, start) + MASK;
    copied = end;
    start = from;
    end = to;
  }
  return out + text.slice(copied, start) + MASK + text.slice(end);
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
  anyForm = null;
  anyFormStale = false;
}
