/**
 * The `docker` runtime's config (Python verifiers' `DockerConfig`,
 * `verifiers/v1/runtimes/docker/__init__.py@a60a606`: image, workdir, cpu, memory, gpu, disk
 * and the network policy) and the `docker run` arguments it becomes.
 *
 * @module
 */
import { z } from "zod";
import { ConfigError } from "../../../kit/mod.ts";
import {
  isFrameworkOnly,
  isRestricted,
  type NetworkPolicy,
  normalizePolicy,
} from "./network_policy.ts";
import { type EgressTarget, policyTargets } from "./egress_rules.ts";

/** The label every container of this runtime carries: `vf sandboxes gc` touches no other. */
export const MANAGED_LABEL = "io.verifiers-ts.sandbox";
/** The label naming the run that made a container. */
export const RUN_LABEL = "io.verifiers-ts.run";
/** The container's lifetime, seconds: `sleep` as PID 1, so a leaked container ends. */
export const CONTAINER_LIFETIME_S = 86_400;

/** Config keys of the `docker` runtime (Python's `DockerConfig`). */
export const DockerRuntimeConfig = z.object({
  image: z.string().min(1).default("python:3.11-slim").describe(
    "Image of the container; it must be on this machine (the runtime never pulls)",
  ),
  workdir: z.string().refine((p) => p.startsWith("/"), {
    message: "workdir must be an absolute path",
  }).default("/app").describe("Working directory inside the container (absolute)"),
  cpu: z.number().positive().nullable().default(null).describe(
    "CPU cores the container may use (docker --cpus); null = unlimited",
  ),
  memory: z.number().positive().nullable().default(null).describe(
    "Hard memory limit in GB (docker --memory); null = unlimited",
  ),
  gpu: z.string().min(1).nullable().default(null).describe(
    'GPUs: "A100", "A100:2" or a count "2" (docker --gpus takes the count); null = none',
  ),
  disk: z.number().positive().nullable().default(null).describe(
    "Disk in GB: accepted, not enforced (Docker has no portable per-container size limit)",
  ),
  allow: z.array(z.string().min(1)).default(["*"]).describe(
    "Destinations the container may reach: hosts, IPv4 addresses or URL origins " +
      '(a port or scheme: TCP to that port only); ["*"] = all, [] = none',
  ),
  block: z.array(z.string().min(1)).default([]).describe(
    'Destinations refused (only with allow = ["*"]; private ranges are then refused too); ' +
      '["*"] = none but the framework\'s',
  ),
});

/** The resolved config of the `docker` runtime. */
export type DockerRuntimeConfig = z.infer<typeof DockerRuntimeConfig>;

/** Python's `parse_gpu` count: "A100" -> 1, "A100:2" -> 2, "2" -> 2, null -> 0. */
export function gpuCount(gpu: string | null): number {
  if (!gpu) return 0;
  const [head, tail] = gpu.split(":", 2) as [string, string | undefined];
  const text = tail ?? (/^\d+$/.test(head) ? head : "1");
  const n = Number(text);
  if (!Number.isInteger(n) || n < 0) {
    throw new ConfigError([`runtime "docker": gpu: invalid GPU count "${text}"`], {
      hint: 'Use a type, a type and a count, or a count: "A100", "A100:2", "2"',
    });
  }
  return n;
}

/**
 * The policy of a config, normalized as Python does; a ConfigError for what Python refuses
 * and for rules the container's filter cannot enforce (host globs: `egress_rules.ts`).
 */
export function networkPolicy(config: DockerRuntimeConfig): NetworkPolicy {
  const r = normalizePolicy(config.allow, config.block);
  if (!r.ok) {
    throw new ConfigError([{ path: "allow", message: r.message }], {
      hint: 'Give either allow rules (with block = []) or block rules (with allow = ["*"])',
    });
  }
  const targets = egressTargets(r.policy);
  if (targets !== null && "error" in targets) {
    throw new ConfigError([{ path: targets.mode, message: targets.error }], {
      hint: "Name each host (api.example.com), an IPv4 address, or * (any address), " +
        "with a port or scheme when only that should count",
    });
  }
  return r.policy;
}

/**
 * The address-level targets of a policy with per-destination rules; null when it has none
 * (no limit, or framework-only).
 */
export function egressTargets(policy: NetworkPolicy):
  | { mode: "allow" | "block"; targets: EgressTarget[] }
  | { mode: "allow" | "block"; error: string }
  | null {
  if (!isRestricted(policy) || isFrameworkOnly(policy)) return null;
  return policyTargets(policy);
}

/** A container name Docker accepts, unique per instance: `vf-<name>-<suffix>`. */
export function containerName(name: string, suffix: string): string {
  const cleaned = name.replace(/[^A-Za-z0-9_.-]+/g, "-").replace(/^[^A-Za-z0-9]+/, "");
  return `vf-${cleaned.slice(0, 80) || "sandbox"}-${suffix}`;
}

/**
 * The `docker run` arguments of a container: detached, never pulled, labelled, limited as
 * configured, `sleep` as its PID 1 for {@link CONTAINER_LIFETIME_S} and removed by the
 * engine when that ends. Network: the host's (no policy), none (framework-only), or, for
 * per-destination rules, the default bridge with IPv6 off, `NET_ADMIN`/`NET_RAW` dropped and
 * `hosts` (`name:address`) pinned; the provider then loads the rules (`egress.ts`).
 */
export function runArgs(
  config: DockerRuntimeConfig,
  name: string,
  labels: Record<string, string>,
  hosts: readonly string[] = [],
): string[] {
  const policy = networkPolicy(config);
  const args = ["run", "--detach", "--rm", "--pull", "never", "--name", name];
  for (const [k, v] of Object.entries(labels)) args.push("--label", `${k}=${v}`);
  if (isFrameworkOnly(policy)) args.push("--network", "none");
  else if (!isRestricted(policy)) args.push("--network", "host");
  else {
    args.push("--network", "bridge", "--cap-drop", "NET_ADMIN", "--cap-drop", "NET_RAW");
    args.push("--security-opt", "no-new-privileges");
    args.push("--sysctl", "net.ipv6.conf.all.disable_ipv6=1");
    for (const h of hosts) args.push("--add-host", h);
  }
  if (config.cpu !== null) args.push("--cpus", String(config.cpu));
  if (config.memory !== null) args.push("--memory", `${Math.floor(config.memory * 1024 ** 3)}b`);
  const gpus = gpuCount(config.gpu);
  if (gpus > 0) args.push("--gpus", String(gpus));
  args.push("--workdir", config.workdir, "--entrypoint", "sleep", config.image);
  args.push(String(CONTAINER_LIFETIME_S));
  return args;
}
