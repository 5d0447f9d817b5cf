/**
 * Provider silence: a call fails when no byte came from the provider for the stall
 * timeout. One clock per client checks all of its calls a few times per timeout (one
 * interval while calls are open, instead of a timer armed per call, which Deno's timers
 * make dear); a call notes each byte's time only. Silence counts only while the process
 * could read: a tick that comes late (the process was busy, the provider's bytes may be
 * waiting unread) judges no call, and what it was late by is taken from each call's grace
 * (one timeout in all) before that call may fail.
 *
 * @module
 */

/** A tick this much past its time says the process itself was busy. */
const LATE_TICK_MS = 50;

/** Checks a client's open calls for silence. */
export class StallClock {
  readonly #tickMs: number;
  readonly #watches = new Set<StallWatch>();
  #timer: ReturnType<typeof setInterval> | undefined;
  #expected = 0;

  /** `ms`: the silence allowed. */
  constructor(ms: number) {
    this.#tickMs = Math.min(1000, Math.max(10, Math.floor(ms / 4)));
  }

  /** @internal */
  add(watch: StallWatch): void {
    this.#watches.add(watch);
    if (this.#timer !== undefined) return;
    this.#expected = Date.now() + this.#tickMs;
    this.#timer = setInterval(() => this.#tick(), this.#tickMs);
  }

  /** @internal */
  remove(watch: StallWatch): void {
    this.#watches.delete(watch);
    if (this.#watches.size > 0 || this.#timer === undefined) return;
    clearInterval(this.#timer);
    this.#timer = undefined;
  }

  #tick(): void {
    const now = Date.now();
    const late = now - this.#expected;
    this.#expected = now + this.#tickMs;
    for (const watch of this.#watches) watch.check(now, late > LATE_TICK_MS ? late : 0);
  }
}

/** Watches one call for provider silence; `touch()` on every sign of life. */
export class StallWatch {
  readonly #clock: StallClock | null;
  readonly #ms: number;
  readonly #onStall: () => void;
  #watching = false;
  #ended = false;
  #last = 0;
  #grace = 0;
  /** True once the silence ran out. */
  stalled = false;

  /** `clock` null (no stall timeout): the watch never fires. */
  constructor(clock: StallClock | null, ms: number, onStall: () => void) {
    this.#clock = clock;
    this.#ms = ms;
    this.#onStall = onStall;
  }

  /** Notes a sign of life; the first one starts the watch. */
  touch(): void {
    if (this.#ended || this.#clock === null) return;
    this.#last = Date.now();
    this.#grace = this.#ms;
    if (!this.#watching) {
      this.#watching = true;
      this.#clock.add(this);
    }
  }

  /** @internal The clock's check: `late` > 0 when the tick came late by that much. */
  check(now: number, late: number): void {
    if (now - this.#last < this.#ms) return;
    if (late > 0 && this.#grace > 0) {
      this.#grace -= Math.min(this.#grace, late);
      return;
    }
    this.stalled = true;
    this.done();
    this.#onStall();
  }

  /** Stops watching (the call ended). */
  done(): void {
    this.#ended = true;
    if (this.#watching) this.#clock!.remove(this);
    this.#watching = false;
  }

  /** The message of a stalled call. */
  message(url: string): string {
    return `provider at ${url} sent nothing for ${this.#ms / 1000}s (client.stall_timeout)`;
  }
}
