/**
 * Config of the `prime` runtime and its mapping onto the create request, with the exact
 * validation and rounding the runtime promises: `timeout` 60..86400 s; `idle_timeout`
 * positive or null, silently lowered to `timeout` when left at its default and an error
 * when set above it; `timeout_minutes = ceil(timeout/60)`, `idle_timeout_minutes =
 * max(1, ceil(idle/60))` (omitted for VMs and when idle is null).
 *
 * @module
 */
import { z } from "zod";
import {
  ConfigError,
  idleSecondsToMinutes,
  parsePluginConfig,
  remoteImageSchema,
  remoteTimeoutSchema,
  remoteWorkdirSchema,
  secondsToMinutesCeil,
} from "../../../kit/mod.ts";

/** The idle timeout used when the config leaves `idle_timeout` unset, seconds. */
const DEFAULT_IDLE_TIMEOUT_S = 3600;

/** Config keys of the `prime` runtime. */
export const PrimeRuntimeConfig = z.object({
  image: remoteImageSchema,
  workdir: remoteWorkdirSchema,
  vm: z.boolean().default(false).describe(
    "Run a VM sandbox (commands over the Connect command session) instead of a container",
  ),
  guaranteed: z.boolean().default(false).describe("Guaranteed (non-preemptible) capacity"),
  region: z.string().nullable().default(null).describe("Region, e.g. us; null = any"),
  labels: z.array(z.string()).default([]).describe("Labels put on the sandbox"),
  cpu: z.number().positive().default(1.0).describe("CPU cores"),
  memory: z.number().positive().default(2.0).describe("Memory in GB"),
  gpu: z.string().nullable().default(null).describe(
    'GPUs as "TYPE:COUNT", "TYPE" (one) or "COUNT"; needs vm = true; null = none',
  ),
  disk: z.number().positive().default(5.0).describe("Disk size in GB"),
  idle_timeout: z.number().refine((v) => Number.isFinite(v) && v > 0, {
    message: "idle_timeout must be positive or null",
  }).nullable().optional().describe(
    "Stop the sandbox after this many idle seconds; null = never. Unset: 3600, lowered to timeout",
  ),
  timeout: remoteTimeoutSchema,
  creates_per_min: z.number().nullable().default(null).describe(
    "Sandbox creations per minute, shared by all processes of the user; null = unlimited",
  ),
});

/** The config as parsed (idle_timeout may be unset). */
export type PrimeRuntimeConfigInput = z.infer<typeof PrimeRuntimeConfig>;

/** The validated config with `idle_timeout` resolved. */
export interface ResolvedPrimeConfig extends Omit<PrimeRuntimeConfigInput, "idle_timeout"> {
  idle_timeout: number | null;
}

/** `parse_gpu`: `"A100:2"` → A100 × 2, `"2"` → 2 of any type, `"A100"` → 1, null/"" → none. */
export function parseGpu(spec: string | null): { type: string | null; count: number } {
  if (spec === null || spec.trim() === "") return { type: null, count: 0 };
  const s = spec.trim();
  const colon = s.lastIndexOf(":");
  if (colon >= 0) {
    const count = Number(s.slice(colon + 1));
    if (!Number.isInteger(count) || count < 0) throw new RangeError(`bad GPU count in "${spec}"`);
    return { type: s.slice(0, colon) || null, count };
  }
  if (/^\d+$/.test(s)) return { type: null, count: Number(s) };
  return { type: s, count: 1 };
}

/** What the keys of a prime runtime are (the hint of its config errors). */
export const PRIME_CONFIG_HINT =
  "Keys: image, workdir, vm, guaranteed, region, labels, cpu, memory, gpu, disk, " +
  "idle_timeout (s or null), timeout (60..86400 s), creates_per_min";

/**
 * Validates a raw runtime config (extra keys such as `type` are ignored) and resolves the
 * idle timeout. Throws a {@link ConfigError} naming every problem.
 */
export function resolvePrimeConfig(raw: Record<string, unknown>): ResolvedPrimeConfig {
  return checkPrimeConfig(
    parsePluginConfig('runtime "prime"', PrimeRuntimeConfig, raw, PRIME_CONFIG_HINT),
  );
}

/**
 * Checks the rules across keys of a validated config (idle timeout within the hard
 * timeout, GPU needs a VM and a type, guaranteed needs a container) and resolves the idle
 * timeout. Throws a {@link ConfigError} naming every problem.
 */
export function checkPrimeConfig(c: z.output<typeof PrimeRuntimeConfig>): ResolvedPrimeConfig {
  const problems: string[] = [];
  let idle: number | null;
  if (c.idle_timeout === undefined) {
    idle = Math.min(DEFAULT_IDLE_TIMEOUT_S, c.timeout);
  } else {
    idle = c.idle_timeout;
    if (idle !== null && idle > c.timeout) {
      problems.push(
        `runtime "prime": idle_timeout (${idle}s) must not exceed the hard sandbox timeout (${c.timeout}s)`,
      );
    }
  }
  let gpu = { type: null as string | null, count: 0 };
  try {
    gpu = parseGpu(c.gpu);
  } catch (e) {
    problems.push(`runtime "prime": gpu: ${(e as Error).message}`);
  }
  if (gpu.count > 0 && !c.vm) problems.push(`runtime "prime": gpu needs vm = true`);
  if (gpu.count > 0 && gpu.type === null) {
    problems.push(`runtime "prime": gpu needs a type, e.g. "A100:${gpu.count}"`);
  }
  if (c.guaranteed && c.vm) problems.push(`runtime "prime": guaranteed needs vm = false`);
  if (problems.length) throw new ConfigError(problems, { hint: PRIME_CONFIG_HINT });
  return { ...c, idle_timeout: idle };
}

/** The `POST /sandbox` body for a config (the client adds `team_id` and `idempotency_key`). */
export function createRequestBody(c: ResolvedPrimeConfig, name: string): Record<string, unknown> {
  const gpu = parseGpu(c.gpu);
  const body: Record<string, unknown> = {
    name,
    docker_image: c.image,
    vm: c.vm,
    guaranteed: c.guaranteed,
    labels: [...c.labels],
    cpu_cores: c.cpu,
    memory_gb: c.memory,
    disk_size_gb: c.disk,
    gpu_count: gpu.count,
    timeout_minutes: secondsToMinutesCeil(c.timeout),
  };
  if (!c.vm) body.start_command = "tail -f /dev/null";
  if (gpu.type !== null && gpu.count > 0) body.gpu_type = gpu.type;
  if (c.idle_timeout !== null && !c.vm) {
    body.idle_timeout_minutes = idleSecondsToMinutes(c.idle_timeout);
  }
  if (c.region !== null) body.region = c.region;
  return body;
}
