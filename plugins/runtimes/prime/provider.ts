/**
 * Prime Intellect sandboxes as a remote-sandbox provider (`kit/remote/provider.ts`): a new
 * client per start, create through the control plane, wait for RUNNING and reachability
 * (creation.ts), exec through the gateway (or the command session on VMs), files through
 * upload/download, commands as detached background jobs polled through `read-file`, and
 * DELETE with a typed HTTP 404 counting as gone.
 *
 * @module
 */
import { createHash } from "node:crypto";
import {
  type CreatedSandbox,
  type ErrorDetail,
  type ExecRequest,
  type ExecResult,
  type JobTiming,
  MissingCredentialsError,
  type SandboxCreation,
  type SandboxProvider,
  shellJoin,
} from "../../../kit/mod.ts";
import { PrimeClient, type PrimeClientOptions } from "./client.ts";
import { createRequestBody, type ResolvedPrimeConfig } from "./config.ts";
import { type CreationTiming, DEFAULT_CREATION_TIMING, waitForCreation } from "./creation.ts";
import { isTransientPrimeError, PrimeApiError, PrimeNotRunningError } from "./errors.ts";
import { loadPrimeSettings, type PrimeSettings } from "./settings.ts";
import { StatusPoller } from "./status_poller.ts";

/** Provider name in the ledger and the creation limiter. */
export const PRIME_PROVIDER = "prime";

/** Timing of job polling and retries (production defaults; tests shrink them). */
export interface PrimeRunTiming {
  /** First job poll delay (doubles). @default 100 */
  jobPollStartMs: number;
  /** Largest job poll delay. @default 3000 */
  jobPollMaxMs: number;
  /** How long a gateway outage is ridden out (job polls, write retries). @default 900000 */
  recoveryMs: number;
  /** First delay after a transient failure (doubles). @default 1000 */
  outageBaseMs: number;
  /** Largest delay after a transient failure. @default 15000 */
  outageMaxMs: number;
}

/** The production run timing. */
export const DEFAULT_RUN_TIMING: PrimeRunTiming = {
  jobPollStartMs: 100,
  jobPollMaxMs: 3000,
  recoveryMs: 900_000,
  outageBaseMs: 1000,
  outageMaxMs: 15_000,
};

/** Options of a Prime runtime beyond its config. */
export interface PrimeRuntimeOptions {
  /** Warnings (image builds, teardown problems). */
  log?: ((message: string) => void) | undefined;
  /** The owning run, noted in the ledger. */
  run?: string | null;
  /** Connection settings. @default read from the environment at each start */
  settings?: PrimeSettings;
  client?: PrimeClientOptions;
  creation?: Partial<CreationTiming>;
  timing?: Partial<PrimeRunTiming>;
}

/** A created Prime sandbox: its client and id. */
export interface PrimeHandle {
  client: PrimeClient;
  id: string;
  settings: PrimeSettings;
}

const pollers = new Map<string, StatusPoller>();

/**
 * The status poller shared by every Prime runtime of this process that talks to the same
 * account (base URL + API key), so concurrent creation waits share batched requests.
 */
export function sharedStatusPoller(
  settings: PrimeSettings,
  clientOptions: PrimeClientOptions = {},
): StatusPoller {
  const key = `${settings.baseUrl}\0${
    createHash("sha256").update(settings.apiKey ?? "").digest("hex")
  }`;
  let p = pollers.get(key);
  if (!p) {
    p = new StatusPoller(new PrimeClient(settings, clientOptions));
    pollers.set(key, p);
  }
  return p;
}

/** True for a typed HTTP 404 answer (not a transport error whose text mentions 404). */
export function isPrimeNotFound(e: unknown): boolean {
  return e instanceof PrimeApiError && e.transport === "http" && e.httpStatus === 404;
}

/** The status and hint the runtime reports for a Prime error. */
function describePrimeError(e: unknown): ErrorDetail {
  const statusCode = e instanceof PrimeApiError ? e.httpStatus : null;
  let hint: string | undefined;
  if (e instanceof PrimeApiError && e.httpStatus === 401) {
    hint = "Check PRIME_API_KEY (or api_key in ~/.prime/config.json)";
  } else if (e instanceof PrimeApiError && e.httpStatus === 402) {
    hint = "Add funds or credits to the Prime account";
  } else if (e instanceof PrimeNotRunningError && e.errorType === "IMAGE_PULL_FAILED") {
    hint = "Check the image name and that the registry is reachable (runtime key image)";
  } else if (e instanceof PrimeNotRunningError && e.errorType === "OOM_KILLED") {
    hint = "Give the sandbox more memory (runtime key memory)";
  } else if (e instanceof PrimeApiError && e.transport === "network") {
    hint = "Check the network and PRIME_API_BASE_URL";
  }
  return { statusCode, hint };
}

const encoder = new TextEncoder();

/** One Prime runtime's provider (per instance: it remembers whether the image was cached). */
export class PrimeProvider implements SandboxProvider<PrimeHandle> {
  readonly name = PRIME_PROVIDER;
  readonly createRate: { perMinute: number | null };
  readonly jobs: NonNullable<SandboxProvider<PrimeHandle>["jobs"]>;
  readonly files: NonNullable<SandboxProvider<PrimeHandle>["files"]> = {
    upload: (h, path, bytes) => h.client.upload(h.id, path, bytes),
    download: async (h, path) => {
      try {
        return await h.client.download(h.id, path);
      } catch (e) {
        if (isPrimeNotFound(e)) return null; // a missing file: 404 with an error-code body
        throw e;
      }
    },
  };
  readonly #config: ResolvedPrimeConfig;
  readonly #name: string;
  readonly #options: PrimeRuntimeOptions;
  /** Whether the last sandbox's image was cached (null before a create answered). */
  imageCached: boolean | null = null;

  constructor(config: ResolvedPrimeConfig, name: string, options: PrimeRuntimeOptions = {}) {
    this.#config = config;
    this.#name = name;
    this.#options = options;
    this.createRate = { perMinute: config.creates_per_min };
    const t = { ...DEFAULT_RUN_TIMING, ...options.timing };
    const timing: JobTiming = {
      pollStartMs: t.jobPollStartMs,
      pollMaxMs: t.jobPollMaxMs,
      recoveryMs: t.recoveryMs,
      outageBaseMs: t.outageBaseMs,
      outageMaxMs: t.outageMaxMs,
    };
    this.jobs = {
      timing,
      readText: async (h, path, window, signal) =>
        (await h.client.readFile(h.id, path, window ?? {}, signal))?.content ?? null,
    };
  }

  prepare(): Promise<SandboxCreation<PrimeHandle>> {
    const settings = this.#options.settings ?? loadPrimeSettings();
    if (!settings.apiKey) {
      throw new MissingCredentialsError("prime sandbox provisioning failed: no Prime API key", {
        hint: "Set PRIME_API_KEY, or api_key in ~/.prime/config.json",
      });
    }
    const client = new PrimeClient(settings, this.#options.client);
    const body = createRequestBody(this.#config, this.#name);
    return Promise.resolve({
      journal: { labels: body.labels as string[], config: { base_url: settings.baseUrl } },
      create: async (): Promise<CreatedSandbox<PrimeHandle>> => {
        const rec = await client.createSandbox(body);
        this.imageCached = rec.pendingImageBuildId === null;
        client.setVm(rec.id, rec.vm ?? this.#config.vm);
        if (rec.pendingImageBuildId) {
          this.#options.log?.(
            `prime sandbox ${rec.id}: image "${this.#config.image}" is built on first use; this can take about 10 minutes`,
          );
        }
        return { id: rec.id, handle: { client, id: rec.id, settings } };
      },
      release: () => client.close(),
    });
  }

  /** True when Prime refused a create outright (a 4xx answer other than 408/429): none was made. */
  isRefusal(e: unknown): boolean {
    return e instanceof PrimeApiError && e.transport === "http" && e.httpStatus !== null &&
      e.httpStatus >= 400 && e.httpStatus < 500 && e.httpStatus !== 408 && e.httpStatus !== 429;
  }

  async ready(h: PrimeHandle, id: string, signal?: AbortSignal): Promise<void> {
    const outcome = await waitForCreation(
      h.client,
      sharedStatusPoller(h.settings, this.#options.client),
      id,
      { ...DEFAULT_CREATION_TIMING, ...this.#options.creation },
      { signal, log: this.#options.log },
    );
    if (outcome.imageBuilt) this.imageCached = false;
  }

  async exec(h: PrimeHandle, r: ExecRequest): Promise<ExecResult> {
    const res = await h.client.exec(h.id, shellJoin(r.argv), {
      timeoutS: r.timeoutS,
      signal: r.signal,
      ...(r.cwd === undefined ? {} : { cwd: r.cwd }),
      ...(r.env === undefined ? {} : { env: r.env }),
    });
    return {
      exitCode: res.exitCode,
      stdout: encoder.encode(res.stdout),
      stderr: encoder.encode(res.stderr),
    };
  }

  async terminate(h: PrimeHandle, id: string): Promise<"terminated" | "gone"> {
    try {
      await h.client.deleteSandbox(id);
      return "terminated";
    } catch (e) {
      if (isPrimeNotFound(e)) return "gone";
      throw e;
    }
  }

  close(h: PrimeHandle): void {
    h.client.close();
  }

  isTransient(e: unknown): boolean {
    return isTransientPrimeError(e);
  }

  describeError(e: unknown): ErrorDetail {
    return describePrimeError(e);
  }
}
