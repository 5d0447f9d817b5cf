/**
 * The `local` runtime: commands run as subprocesses on this machine, each rollout in a
 * fresh temporary working directory. The directory is named at start and made on first
 * use (a command, a write, or a read of `workdir`): a rollout whose harness runs no
 * command costs no directory at all. Not a sandbox — use it for trusted tasks and for
 * debugging. Commands get only the allowlisted host variables (PATH, HOME, LANG, LC_*,
 * TZ, TERM, TMPDIR, USER, SHELL, ...: kit/runtime/agent_env.ts), then `env`, then the
 * call's own; a credential reaches a command only when the config names it.
 *
 * @module
 */
import { defineRuntime, type Runtime, type RuntimeCreateOptions } from "../../../kit/mod.ts";
import { LOCAL_CONFIG_HINT, LocalRuntimeConfig } from "./config.ts";
import { LocalRuntime } from "./runtime.ts";

export { isHiddenHostVariable, type LocalRuntimeConfig } from "./config.ts";

/** The `local` runtime plugin. */
export default defineRuntime({
  id: "subprocess",
  description: "Runs commands as subprocesses on this machine, in a fresh temporary directory",
  isLocal: true,
  config: LocalRuntimeConfig,
  configHint: LOCAL_CONFIG_HINT,
  create(config, options: RuntimeCreateOptions): Runtime {
    return new LocalRuntime(config, options.name, options.log);
  },
});
