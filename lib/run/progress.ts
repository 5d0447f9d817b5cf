/**
 * What a run shows while it runs, as the engine hands it to an injected display: the
 * numbers read at each frame and what identifies the run. How it is drawn (terminal,
 * colour, redraw rate) is the caller's (`lib/cli/display.ts` for `vf eval`).
 *
 * @module
 */

/** The numbers a display shows, read when it draws. */
export interface ProgressSnapshot {
  /** Episodes done (kept from earlier launches included). */
  done: number;
  /** Episodes the run owes in all (selected tasks × rollouts). */
  total: number;
  /** Episodes kept from earlier launches (not counted in the rate). */
  kept: number;
  inFlight: number;
  /** Seconds since this launch started. */
  elapsedS: number;
  reward: { mean: number | null; mean_all: number | null };
  /** What `reward` stands for on the display (`vf validate`: the valid share). @default "reward" */
  rewardLabel?: string;
  erroredTraces: number;
  erroredEpisodes: number;
  errors: { type: string; count: number; last: string }[];
}

/** A live display. */
export interface LiveDisplay {
  /** Starts drawing (prints the header lines first). */
  start(): void;
  /** Something changed (an episode finished); the display redraws when it sees fit. */
  update(): void;
  /** Prints a log line (a warning) without breaking the live view. */
  log(line: string): void;
  /** Draws the final frame and stops. Idempotent. */
  stop(): void;
}

/** What identifies a run on its display (shown once, above the live view). */
export interface RunHeading {
  /** `<env id>+<taskset id>`, or the taskset id. */
  envId: string;
  harness: string;
  runtime: string;
  /** The model name, `oracle` for reference solutions. */
  model: string | null;
  /** The provider's base URL (may hold credentials: a display strips them). */
  baseUrl: string;
  tasks: number;
  rollouts: number;
  maxConcurrent: number;
  /** Episodes kept from earlier launches (a resume), else 0. */
  kept: number;
  /** Episodes this launch owes. */
  owed: number;
  /** The run directory, `null` for an in-memory run. */
  runDir: string | null;
}

/** What a display is made from. */
export interface DisplayInit {
  run: RunHeading;
  snapshot(): ProgressSnapshot;
}
