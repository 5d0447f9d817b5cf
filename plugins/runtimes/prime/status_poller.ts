/**
 * Batched, coalesced status polling (`_AsyncRequestBatcher`, sandbox.py@66fb4b70). Every sandbox waiting for creation
 * in this process asks one shared poller per account; the poller runs shared rounds, and
 * each round asks for the status of every waiting sandbox in `status:batchGet` requests of
 * at most 100 ids. A waiter asks for a status "not before" some delay; a round starts at
 * the earliest such time (and at least a short window after the first request, so
 * concurrent starts join one round). Waiters are answered together, so they stay aligned:
 * N sandboxes cost about ceil(N/100) requests per round instead of N.
 *
 * @module
 */
import type { PrimeClient } from "./client.ts";
import type { StatusItem } from "./records.ts";

/** A status, or the batch endpoint's per-id error (e.g. `NOT_FOUND`). */
export type PollResult =
  | { kind: "status"; status: StatusItem }
  | { kind: "error"; code: string; message: string };

interface Waiter {
  id: string;
  notBefore: number;
  resolve(r: PollResult): void;
  reject(e: unknown): void;
  signal?: AbortSignal | undefined;
  onAbort?: () => void;
}

/** Options of a {@link StatusPoller}. */
export interface StatusPollerOptions {
  /** Coalescing window after the first request of an idle poller. @default 25 */
  windowMs?: number;
  /** Ids per request. @default 100 */
  maxBatch?: number;
}

/** A shared round-based status poller over one client. */
export class StatusPoller {
  readonly #client: PrimeClient;
  readonly #windowMs: number;
  readonly #maxBatch: number;
  #pending: Waiter[] = [];
  #timer: ReturnType<typeof setTimeout> | null = null;
  #timerAt = Infinity;
  #inRound = false;
  /** Rounds run so far (for tests and benchmarks). */
  rounds = 0;

  constructor(client: PrimeClient, options: StatusPollerOptions = {}) {
    this.#client = client;
    this.#windowMs = options.windowMs ?? 25;
    this.#maxBatch = options.maxBatch ?? 100;
  }

  /** The status of `id` from a shared round starting no earlier than `delayMs` from now. */
  poll(id: string, delayMs: number, signal?: AbortSignal): Promise<PollResult> {
    return new Promise<PollResult>((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      const w: Waiter = {
        id,
        notBefore: Date.now() + Math.max(0, delayMs),
        resolve,
        reject,
        signal,
      };
      if (signal) {
        w.onAbort = () => {
          this.#pending = this.#pending.filter((p) => p !== w);
          reject(signal.reason);
        };
        signal.addEventListener("abort", w.onAbort, { once: true });
      }
      const idle = this.#pending.length === 0 && !this.#inRound;
      this.#pending.push(w);
      if (!this.#inRound) {
        this.#schedule(idle ? Date.now() + this.#windowMs : Date.now());
      }
    });
  }

  #schedule(earliest: number): void {
    if (this.#pending.length === 0) return;
    const at = Math.max(earliest, Math.min(...this.#pending.map((w) => w.notBefore)));
    if (this.#timer !== null && this.#timerAt <= at) return;
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timerAt = at;
    this.#timer = setTimeout(() => {
      this.#timer = null;
      this.#timerAt = Infinity;
      void this.#round();
    }, Math.max(0, at - Date.now()));
  }

  async #round(): Promise<void> {
    const waiters = this.#pending;
    this.#pending = [];
    if (waiters.length === 0) return;
    this.#inRound = true;
    this.rounds++;
    for (const w of waiters) if (w.onAbort) w.signal?.removeEventListener("abort", w.onAbort);
    const ids = [...new Set(waiters.map((w) => w.id))];
    const chunks: string[][] = [];
    for (let i = 0; i < ids.length; i += this.#maxBatch) {
      chunks.push(ids.slice(i, i + this.#maxBatch));
    }
    await Promise.all(chunks.map(async (chunk) => {
      const mine = waiters.filter((w) => chunk.includes(w.id));
      try {
        const res = await this.#client.batchStatus(chunk);
        for (const w of mine) {
          const st = res.statuses.get(w.id);
          const err = res.errors.get(w.id);
          // a failed lookup of one sandbox fails its waiters only (sandbox.py@66fb4b70)
          if (res.failures.has(w.id)) w.reject(res.failures.get(w.id));
          else if (st) w.resolve({ kind: "status", status: st });
          else if (err) w.resolve({ kind: "error", code: err.code, message: err.message });
          else w.resolve({ kind: "error", code: "NOT_FOUND", message: "no status returned" });
        }
      } catch (e) {
        for (const w of mine) w.reject(e);
      }
    }));
    this.#inRound = false;
    // waiters re-enqueue in microtasks after being answered; let them, then schedule
    await Promise.resolve();
    this.#schedule(Date.now());
  }
}
