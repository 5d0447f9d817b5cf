/**
 * The `modal` runtime's config (verifiers' `ModalConfig`, `verifiers/v1/runtimes/modal.py@a60a606`)
 * and what it becomes on the wire: the `SandboxCreate` definition and a sandbox name Modal
 * accepts.
 *
 * @module
 */
import { z } from "zod";
import {
  ConfigError,
  coresToMilliCpu,
  gbToMib,
  remoteImageSchema,
  remoteTimeoutSchema,
  remoteWorkdirSchema,
  truncSeconds,
} from "../../../kit/mod.ts";
import * as M from "./messages.ts";

/** The Modal app every sandbox is created in (as verifiers). */
export const MODAL_APP_NAME = "verifiers-v1";
/** The port declared (encrypted) on every sandbox, as verifiers' `SERVICE_PORT`. */
export const SERVICE_PORT = 8000;

/** Config keys of the `modal` runtime (verifiers' `ModalConfig`). */
export const ModalRuntimeConfig = z.object({
  image: remoteImageSchema,
  workdir: remoteWorkdirSchema,
  timeout: remoteTimeoutSchema,
  cpu: z.number().positive().default(1.0).describe("CPU cores (sent as milli-CPU, truncated)"),
  memory: z.number().positive().default(2.0).describe("Memory in GB (sent as MiB, truncated)"),
  gpu: z.string().min(1).nullable().default(null).describe(
    'GPU request: "A100", "A100:2", or null for none',
  ),
  region: z.string().min(1).nullable().default(null).describe("Region to schedule in, or null"),
  network_access: z.boolean().default(true).describe(
    "Allow outbound network access (false blocks it)",
  ),
  disk: z.number().positive().default(5.0).describe("Disk in GB (accepted, not enforced by Modal)"),
  creates_per_sec: z.number().nullable().default(40).describe(
    "Sandbox creations per second shared by all your processes; null or <= 0 = unlimited",
  ),
});

/** The resolved config of the `modal` runtime. */
export type ModalRuntimeConfig = z.infer<typeof ModalRuntimeConfig>;

/** Parses `"A100:2"` → `{gpuType: "A100", count: 2}` (as the SDK), null for none. */
export function parseGpu(gpu: string | null): { gpuType: string; count: number } | null {
  if (gpu === null || gpu === "") return null;
  const [type, countText] = gpu.includes(":") ? gpu.split(":", 2) as [string, string] : [gpu, "1"];
  const count = Number(countText);
  if (!Number.isInteger(count) || count < 1) {
    throw new ConfigError([`runtime "modal": gpu: invalid GPU count "${countText}"`], {
      hint: 'Use a type and an optional positive count, e.g. "A100" or "A100:2"',
    });
  }
  return { gpuType: type.toUpperCase(), count };
}

/** The `SandboxCreate` definition verifiers sends for a config (`runtimes/modal.py@a60a606`). */
export function sandboxDefinition(
  config: ModalRuntimeConfig,
  imageId: string,
  name: string,
): Partial<M.SandboxDefinition> {
  const gpu = parseGpu(config.gpu);
  return {
    entrypointArgs: ["sleep", "infinity"],
    imageId,
    timeoutSecs: truncSeconds(config.timeout),
    workdir: config.workdir,
    networkAccess: {
      networkAccessType: config.network_access
        ? M.NetworkAccessType.OPEN
        : M.NetworkAccessType.BLOCKED,
      allowedCidrs: [],
    },
    resources: {
      milliCpu: coresToMilliCpu(config.cpu),
      memoryMb: gbToMib(config.memory),
      gpuConfig: gpu ? { type: 0, count: gpu.count, gpuType: gpu.gpuType } : {
        type: 0,
        count: 0,
        gpuType: "",
      },
      memoryMbMax: 0,
      ephemeralDiskMb: 0,
      milliCpuMax: 0,
    },
    openPorts: { ports: [{ port: SERVICE_PORT, unencrypted: false, tunnelType: undefined }] },
    schedulerPlacement: config.region ? { regions: [config.region] } : undefined,
    secretIds: [],
    cloudProviderStr: "",
    verbose: false,
    experimentalOptions: {},
    name,
  };
}

/** A sandbox name Modal accepts: letters, digits, `-`, `_`, `.`; at most 64 characters. */
export function sandboxName(name: string): string {
  const cleaned = name.replace(/[^A-Za-z0-9._-]+/g, "-").slice(0, 64);
  return cleaned === "" ? "vf-sandbox" : cleaned;
}
