/**
 * The `pi` harness: the pi coding agent (`@earendil-works/pi-coding-agent`) driven over ACP
 * by `pi-acp`, both run under the Bun installed with them (pi 0.84 needs Node 22 or later,
 * and pi 0.73, the last to run on Node 20, leaves pi-acp waiting forever in session/new).
 * pi reads its provider from `models.json` in its agent folder (`PI_CODING_AGENT_DIR`),
 * written per rollout: one provider whose base URL is the interception endpoint and whose
 * key is a `$VAR` template, so the key stays in the environment. `PI_OFFLINE=1` and
 * `PI_TELEMETRY=0` keep it from any other host.
 *
 * @module
 */
import { z } from "zod";
import { BUN_PACKAGE, defineAcpHarness, shellQuote } from "../../../kit/mod.ts";

/** The variable pi reads the per-rollout key from. */
const KEY_VAR = "VF_PI_API_KEY";
/** The provider name in models.json. */
const PROVIDER = "vf";
/** pi's `api` for each dialect the endpoint serves. */
const API = { chat: "openai-completions" } as const;

const config = z.object({});

/** The `pi` harness plugin. */
export default defineAcpHarness({
  id: "pi",
  description: "The pi coding agent over ACP (pi-acp), its model calls through the endpoint " +
    "as chat completions",
  config,
  supportsSkills: true,
  bundle: {
    name: "pi",
    version: "0.84.1",
    packages: [
      {
        name: "@earendil-works/pi-coding-agent",
        version: "0.84.1",
        integrity:
          "sha512-ncAqFrG+iybuPGOhMiZoEHkEzTpJgz3guYD32pD+M7ucc0WeHmauP6wa7qwP8V/KWvsZDVNa5XGsdZ7fkC7w7A==",
      },
      {
        name: "pi-acp",
        version: "0.0.34",
        integrity:
          "sha512-MrCp37UbpUzkTkzTIMJQf1RYrT+kr4fgGDGFoLmBN26UupuCZp0XxVIY+7XYsMo3yDnzDeZUJ0jPyM3Si6Bkkg==",
      },
      BUN_PACKAGE,
    ],
  },
  async prepare({ ctx, stateDir, js, systemPrompt, modulePath }) {
    const agentDir = `${stateDir}/agent`;
    // a model id pi would split ("provider/id", "id:thinking") is replaced: the endpoint
    // answers with the run's model whatever the request names
    const model = /^[A-Za-z0-9._-]+$/.test(ctx.model) ? ctx.model : "model";
    await ctx.runtime.write(
      `${agentDir}/models.json`,
      JSON.stringify({
        providers: {
          [PROVIDER]: {
            baseUrl: ctx.endpoint,
            api: API.chat,
            apiKey: `$${KEY_VAR}`,
            models: [{ id: model }],
          },
        },
      }),
    );
    // no retries of its own: the interception server answers for the provider, and a
    // failed call must end the turn now (pi-acp then ends it with nothing)
    await ctx.runtime.write(
      `${agentDir}/settings.json`,
      JSON.stringify({ retry: { enabled: false }, quietStartup: true }),
    );
    const piArgs = [
      js,
      modulePath("@earendil-works/pi-coding-agent", "dist/cli.js"),
      "--provider",
      PROVIDER,
      "--model",
      model,
      "--offline",
      "--no-extensions",
      "--no-prompt-templates",
    ];
    if (systemPrompt !== "") piArgs.push("--append-system-prompt", systemPrompt);
    const disabled = ctx.config.disabled_tools ?? [];
    if (disabled.length > 0) piArgs.push("--exclude-tools", disabled.join(","));
    for (const skill of ctx.config.skills) piArgs.push("--skill", skill);
    // pi-acp starts `$PI_ACP_PI_COMMAND --mode rpc ...`: one program, so a script
    const piCommand = `${stateDir}/pi`;
    await ctx.runtime.write(
      piCommand,
      `#!/bin/sh\nexec ${piArgs.map(shellQuote).join(" ")} "$@"\n`,
    );
    await ctx.runtime.run(["chmod", "700", piCommand]);
    return {
      argv: [js, modulePath("pi-acp", "dist/index.js")],
      env: {
        HOME: stateDir,
        PI_CODING_AGENT_DIR: agentDir,
        PI_ACP_PI_COMMAND: piCommand,
        PI_OFFLINE: "1",
        PI_TELEMETRY: "0",
        DO_NOT_TRACK: "1",
        [KEY_VAR]: ctx.secret,
      },
    };
  },
});
