/**
 * A user-like environment for the in-process benchmarks: the bare benchmark registers one
 * short key and gets two-character answers, while a user's shell holds several credentials
 * (every variable named like one is scrubbed from what a run writes, kit/secrets.ts
 * `addHostSecrets`) and an agent's answers run to kilobytes of reasoning. With
 * `--credentials K` the run's environment holds K more credential variables, and with
 * `--answer-kib P` every answer the mock gives is P KiB of text ending in its number, so
 * that redaction and long traces show in the figures.
 *
 * @module
 */
import { randomBytes } from "node:crypto";
import process from "node:process";

/** What a run's environment holds beyond the benchmark's own key. */
export interface UserEnvironment {
  /** Credential variables set in the environment. */
  credentials: number;
  /** Bytes of text before the number in every answer (0: the number alone). */
  answerPadBytes: number;
}

/** The bare benchmark: no other credential, answers of the number alone. */
export const BARE: UserEnvironment = { credentials: 0, answerPadBytes: 0 };

/** Reads `--credentials K` and `--answer-kib P` from argv (both 0 when absent). */
export function environmentFlags(argv: readonly string[] = process.argv): UserEnvironment {
  const read = (name: string) => {
    const i = argv.indexOf(`--${name}`);
    const value = i > 0 ? Number(argv[i + 1]) : 0;
    if (!Number.isFinite(value) || value < 0) {
      console.error(`--${name} expects a number of 0 or more, got ${argv[i + 1]}`);
      process.exit(2);
    }
    return value;
  };
  return {
    credentials: read("credentials"),
    answerPadBytes: Math.round(read("answer-kib") * 1024),
  };
}

/** How a figure's environment is printed. */
export function describeEnvironment(env: UserEnvironment): string {
  if (env.credentials === 0 && env.answerPadBytes === 0) return "bare environment";
  return `user-like environment: ${env.credentials} more credentials, answers of ` +
    `${(env.answerPadBytes / 1024).toFixed(1)} KiB`;
}

/**
 * `count` credential variables with values shaped like real keys (a prefix and 40-100
 * random characters), named so that kit/secrets.ts `isCredentialName` registers them.
 */
export function credentialVariables(count: number): Record<string, string> {
  const prefixes = ["sk-", "hf_", "ghp_", "pk-", ""];
  const out: Record<string, string> = {};
  for (let i = 0; i < count; i++) {
    const length = 40 + (i * 13) % 61;
    const body = randomBytes(length).toString("base64url").slice(0, length);
    out[`VF_BENCH_${i}_${i % 2 === 0 ? "API_KEY" : "TOKEN"}`] = prefixes[i % prefixes.length] +
      body;
  }
  return out;
}

/** Sets {@link credentialVariables} in this process's environment, for in-process runs. */
export function setCredentialVariables(count: number): void {
  Object.assign(process.env, credentialVariables(count));
}
