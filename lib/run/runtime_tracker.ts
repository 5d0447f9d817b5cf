/**
 * Every runtime a run creates, until it is stopped. Rollouts stop their own runtimes; the
 * tracker is the safety net at the run's exit (normal end, error or signal): each runtime
 * not yet stopped gets `stopConfirmed()`, and those that cannot be confirmed are reported
 * by type and id. Stopped runtimes are dropped as episodes finish, so the tracker holds
 * about as many runtimes as there are episodes in flight.
 *
 * @module
 */
import type { RuntimeCreateOptions, RuntimePlugin } from "../../kit/contract.ts";
import type { Runtime } from "../../kit/runtime/runtime.ts";
import type { UnconfirmedSandbox } from "./summary.ts";

/** Tracks the runtimes made through a wrapped runtime plugin. */
export class RuntimeTracker {
  #live = new Set<Runtime>();

  /**
   * The plugin with `create` wrapped so that every instance is tracked; `defaults` fill
   * the create options the rollout does not give (the owning run, the warning sink).
   */
  wrap(plugin: RuntimePlugin, defaults: Omit<RuntimeCreateOptions, "name"> = {}): RuntimePlugin {
    return {
      ...plugin,
      create: (config, options) => {
        const rt = plugin.create(config, { ...defaults, ...options });
        this.#live.add(rt);
        return rt;
      },
    };
  }

  /** Forgets the runtimes that are stopped. */
  prune(): void {
    for (const rt of this.#live) if (rt.stopped) this.#live.delete(rt);
  }

  /** Runtimes tracked and not yet known to be stopped. */
  get size(): number {
    return this.#live.size;
  }

  /**
   * Confirms the stop of every runtime not yet stopped (each bounded by `timeoutMs`) and
   * returns those that could not be confirmed.
   */
  async sweep(timeoutMs = 60_000): Promise<UnconfirmedSandbox[]> {
    this.prune();
    const pending = [...this.#live];
    const failures: UnconfirmedSandbox[] = [];
    await Promise.all(pending.map(async (rt) => {
      let timer: ReturnType<typeof setTimeout> | undefined;
      try {
        await Promise.race([
          rt.stopConfirmed(),
          new Promise<never>((_, reject) => {
            timer = setTimeout(
              () => reject(new Error(`stop not confirmed within ${timeoutMs / 1000}s`)),
              timeoutMs,
            );
          }),
        ]);
        this.#live.delete(rt);
      } catch (err) {
        failures.push({
          type: rt.info.type,
          id: rt.info.id,
          error: err instanceof Error ? err.message : String(err),
        });
      } finally {
        clearTimeout(timer);
      }
    }));
    return failures;
  }
}
