/**
 * What `vf eval`, `vf validate`, `vf replay` and `vf debug` share on the terminal while they
 * run: the resolved display mode, a redacting stderr writer, notices that go through the
 * live display when there is one, and SIGINT / SIGTERM handling — the first signal says
 * what stops and aborts the command's signal, a second exits at once with 130.
 *
 * @module
 */
import process from "node:process";
import type { DISPLAY_MODES } from "../config/eval_config.ts";
import { exit as exitProcess } from "../../kit/_runtime/exit.ts";
import { getEnv } from "../../kit/_runtime/env.ts";
import { stderrIsTerminal, writeStderr } from "../../kit/_runtime/tty.ts";
import { redact } from "../../kit/secrets.ts";
import {
  createDisplay,
  type DisplayMode,
  type DisplayOptions,
  isCiValue,
  type LiveDisplay,
  resolveDisplayMode,
} from "./display.ts";
import { onStopSignals } from "./signals.ts";
import { useColor } from "./output.ts";

/** Options of {@link openCommandSession}. */
export interface CommandSessionOptions {
  /** The config's display setting (`auto` resolved here). */
  display: (typeof DISPLAY_MODES)[number];
  /** What the first signal stops, as its notice says: `<SIG>: stopping — <stopping> (…)`. */
  stopping: string;
  /** Raw stderr writer (redacted before it). @default process stderr */
  writeErr?: ((text: string) => void) | undefined;
  /** Where a line goes while no live display runs. @default {@link CommandSession.writeErr} */
  err?: ((line: string) => void) | undefined;
  /** Ends the process at once (second signal). @default the runtime's exit */
  exitNow?: ((code: number) => never) | undefined;
}

/** A running command's terminal side; {@link CommandSession.close} it in `finally`. */
export interface CommandSession {
  /** The display mode, `auto` resolved. */
  readonly mode: DisplayMode;
  /** Aborted by the first SIGINT / SIGTERM. */
  readonly signal: AbortSignal;
  /** The controller behind {@link CommandSession.signal}. */
  readonly controller: AbortController;
  /** Redacting raw stderr writer (no newline added). */
  writeErr(text: string): void;
  /** A line outside the live display (the `err` option, or stderr). */
  err(line: string): void;
  /** A line through the live display while one runs, else {@link CommandSession.err}. */
  say(line: string): void;
  /** Makes the live display of the session's mode; notices go through it from now on. */
  display(options: Pick<DisplayOptions, "header" | "snapshot" | "intervalMs">): LiveDisplay;
  /** Notices no longer go through the live display (it has stopped). */
  endDisplay(): void;
  /**
   * Uninstalls the signal handlers — unless a signal came: then they stay until the
   * process exits, so that another signal during the last writes still exits at once.
   */
  close(): void;
}

/** Resolves the display mode and installs the signal handlers of a command. */
export function openCommandSession(options: CommandSessionOptions): CommandSession {
  const mode = resolveDisplayMode(options.display, {
    stderrIsTTY: stderrIsTerminal(),
    ci: isCiValue(getEnv("CI")),
  });
  const rawWriteErr = options.writeErr ?? writeStderr;
  const writeErr = (text: string) => rawWriteErr(redact(text));
  const err = options.err ?? ((line: string) => writeErr(line + "\n"));
  const exitNow = options.exitNow ?? exitProcess;
  const controller = new AbortController();
  let live: LiveDisplay | null = null; // notices go through it, or its next frame erases them
  const say = (line: string) => (live ? live.log(line) : err(line));
  let signalled = false;
  const uninstall = onStopSignals((sig, n) => {
    signalled = true;
    if (n > 1) {
      exitNow(130);
      return;
    }
    say(`${sig}: stopping — ${options.stopping} (${sig} again to exit at once)`);
    controller.abort(new Error(`interrupted by ${sig}`));
  });
  return {
    mode,
    signal: controller.signal,
    controller,
    writeErr,
    err,
    say,
    display: (display) =>
      live = createDisplay(mode, {
        ...display,
        write: writeErr,
        color: useColor(),
        columns: () => (process.stderr as { columns?: number }).columns || 100,
      }),
    endDisplay: () => {
      live = null;
    },
    close: () => {
      if (!signalled) uninstall();
    },
  };
}
