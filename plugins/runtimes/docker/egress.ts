/**
 * Enforcing a docker container's per-destination network policy (`egress_rules.ts`): its
 * names resolved on this machine before `docker run`, its rules loaded into the
 * container's own network namespace from this machine (`nsenter --net` into the
 * container's first process, then `iptables-restore`) before the container is handed out,
 * while only its `sleep` runs. The container gets no capability for it and drops
 * `NET_ADMIN` and `NET_RAW`, so nothing inside can change the rules; they live in its
 * namespace and go with it, so nothing is left on this machine to clean up, whatever
 * kills the run. This needs the engine on this machine and root here (as `dockerd` is).
 *
 * @module
 */
import { lookup as dnsLookup } from "node:dns/promises";
import { readFile } from "node:fs/promises";
import { getAllEnv, SandboxError, spawnProgram } from "../../../kit/mod.ts";
import { docker } from "./cli.ts";
import {
  type EgressPlan,
  type EgressTarget,
  iptablesRules,
  type Lookup,
  nameservers,
  planEgress,
} from "./egress_rules.ts";

/** How long resolving the rules' names, or loading the rules, may take. */
const STEP_TIMEOUT_MS = 30_000;

const HINT = "Per-destination rules are loaded from this machine (nsenter and iptables, as " +
  'root) into a container of a local engine; else use block = ["*"] or no rules';

/** This machine's resolver: every IPv4 address of a name. */
const hostLookup: Lookup = async (host) =>
  (await dnsLookup(host, { all: true, family: 4 })).map((a) => a.address);

/** Resolves the rules' names once, for one container; a SandboxError names what failed. */
export async function resolveEgress(
  mode: "allow" | "block",
  targets: readonly EgressTarget[],
  lookup: Lookup = hostLookup,
): Promise<EgressPlan> {
  const remote = getAllEnv().DOCKER_HOST;
  if (remote && !remote.startsWith("unix://")) {
    throw new SandboxError(`Cannot enforce network rules on the engine at ${remote}`, {
      hint: HINT,
    });
  }
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`resolving the network rules took over ${STEP_TIMEOUT_MS} ms`)),
      STEP_TIMEOUT_MS,
    );
  });
  try {
    return await Promise.race([planEgress(mode, targets, lookup), late]);
  } catch (e) {
    throw new SandboxError(`Cannot resolve the network rules: ${(e as Error).message}`, {
      hint: "Give hosts this machine resolves, or IPv4 addresses",
    });
  } finally {
    clearTimeout(timer);
  }
}

/** Loads a plan's rules into a running container's network namespace. */
export async function applyEgress(id: string, plan: EgressPlan): Promise<void> {
  const seen = await docker(
    ["inspect", "--type", "container", "--format", "{{.State.Pid}} {{.ResolvConfPath}}", id],
    { timeoutMs: STEP_TIMEOUT_MS },
  );
  const [pid, resolvPath] = new TextDecoder().decode(seen.stdout).trim().split(" ");
  if (seen.exitCode !== 0 || !pid || !/^[1-9]\d*$/.test(pid)) {
    throw new SandboxError(
      `Cannot load the network rules: the container has no process: ${seen.message || pid}`,
    );
  }
  const servers = resolvPath ? nameservers(await readFile(resolvPath, "utf8").catch(() => "")) : [];
  const r = await spawnProgram(["nsenter", "-t", pid, "--net", "iptables-restore"], {
    cwd: "/",
    env: getAllEnv(),
    stdin: iptablesRules(plan, servers),
    timeoutMs: STEP_TIMEOUT_MS,
  });
  if (r.exitCode !== 0) {
    throw new SandboxError(
      `Cannot load the network rules into the container: ${
        (r.stderr || r.stdout).trim().split("\n")[0]
      }`,
      { hint: HINT },
    );
  }
}
