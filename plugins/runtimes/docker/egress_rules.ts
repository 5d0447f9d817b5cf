/**
 * A docker container's network policy as packet filter rules of its own network namespace.
 * Python verifiers (`verifiers/v1/runtimes/docker/egress.py@a60a606`) cuts the container's
 * routes and leaves an HTTP(S) proxy as its only way out, so only programs that honour
 * `HTTP(S)_PROXY` get anywhere; here every connection of every process is filtered by
 * address and port in the container's namespace, and one refused is rejected at once (a TCP
 * reset, else an ICMP port-unreachable), never left to time out.
 *
 * Rules are Python's (`network_policy.ts`), read at the address level: a rule's host is a
 * name (resolved once, by this machine's resolver, when the container starts, and pinned in
 * the container's `/etc/hosts` so its programs get the same addresses), an IPv4 address, or
 * `*` (any address); its port, or its scheme's default port, limits it to TCP on that port.
 * Host globs other than `*` (`*.example.com`) name no address set and are refused. The
 * container's loopback is always open: the model relay listens there, so the interception
 * endpoint is reachable whatever the policy. With `block` rules everything else stays open
 * but the blocked addresses and, as Python's proxy refuses non-global destinations, the
 * private and reserved ranges (the container's DNS servers excepted, since its programs
 * resolve names themselves). With `allow` rules only what they name is open, private
 * addresses included: the user named them, and the container, not this host, dials them.
 * IPv6 is switched off in the container.
 *
 * @module
 */
import type { NetworkPolicy } from "./network_policy.ts";

/** One rule read at the address level: a host (`*` = any address) and a TCP port or none. */
export interface EgressTarget {
  rule: string;
  host: string;
  port: number | null;
}

/** Destinations of a restricted policy, their names resolved to IPv4 addresses. */
export interface EgressPlan {
  /** "allow": only the targets are open; "block": all but the targets and private ranges. */
  mode: "allow" | "block";
  /** Each target with its addresses (null = any address). */
  targets: { target: EgressTarget; addresses: string[] | null }[];
  /** `name:address` pins for the container's `/etc/hosts` (`docker run --add-host`). */
  hosts: string[];
}

/** The IPv4 ranges that are not global (RFC 6890), refused under `block` rules as in Python. */
export const NON_GLOBAL_V4 = [
  "0.0.0.0/8",
  "10.0.0.0/8",
  "100.64.0.0/10",
  "127.0.0.0/8",
  "169.254.0.0/16",
  "172.16.0.0/12",
  "192.0.0.0/24",
  "192.0.2.0/24",
  "192.168.0.0/16",
  "198.18.0.0/15",
  "198.51.100.0/24",
  "203.0.113.0/24",
  "224.0.0.0/4",
  "240.0.0.0/4",
];

const IPV4 = /^(25[0-5]|2[0-4]\d|1?\d?\d)(\.(25[0-5]|2[0-4]\d|1?\d?\d)){3}$/;

/** True for a dotted-quad IPv4 address. */
export function isIPv4(text: string): boolean {
  return IPV4.test(text);
}

/**
 * A rule as an address-level target, read as Python's `network_rule_matches` reads it
 * (lowercased, trailing `/` and `.` dropped, the path ignored, a scheme meaning its default
 * port), or the reason it cannot be enforced.
 */
export function parseRule(rule: string): EgressTarget | { error: string } {
  const value = rule.toLowerCase().replace(/\/+$/, "");
  const scheme = value.includes("://") ? value.slice(0, value.indexOf("://")) : "";
  const rest = scheme ? value.slice(scheme.length + 3) : value;
  const authority = rest.split(/[/?#]/, 1)[0]!.replace(/^.*@/, "");
  const m = /^(\[[^\]]*\]|[^:]*)(?::(\d*))?$/.exec(authority);
  const host = (m?.[1] ?? "").replace(/\.+$/, "");
  if (!m || !host) return { error: `network rule "${rule}" names no host` };
  let port: number | null = m[2] ? Number(m[2]) : null;
  if (port !== null && (port < 1 || port > 65535)) {
    return { error: `network rule "${rule}" has port ${port}, outside 1-65535` };
  }
  if (scheme && port === null) port = scheme === "https" ? 443 : 80;
  if (host !== "*" && /[*?[\]]/.test(host) && !host.startsWith("[")) {
    return {
      error: `network rule "${rule}" is a host glob, which names no address the container's ` +
        "filter can match",
    };
  }
  return { rule, host, port };
}

/** The targets of a restricted policy that is not framework-only, or the first refusal. */
export function policyTargets(
  policy: NetworkPolicy,
):
  | { mode: "allow" | "block"; targets: EgressTarget[] }
  | { mode: "allow" | "block"; error: string } {
  const mode = policy.allow.includes("*") && policy.block.length > 0 ? "block" : "allow";
  const targets: EgressTarget[] = [];
  for (const rule of mode === "block" ? policy.block : policy.allow) {
    const t = parseRule(rule);
    if ("error" in t) return { mode, error: t.error };
    targets.push(t);
  }
  return { mode, targets };
}

/** Resolves a name to its IPv4 addresses (this machine's resolver). */
export type Lookup = (host: string) => Promise<string[]>;

/**
 * Resolves the targets' names once (IPv6 literals are dropped: IPv6 is off in the
 * container); throws for a name that does not resolve, naming it.
 */
export async function planEgress(
  mode: "allow" | "block",
  targets: readonly EgressTarget[],
  lookup: Lookup,
): Promise<EgressPlan> {
  const plan: EgressPlan = { mode, targets: [], hosts: [] };
  for (const target of targets) {
    if (target.host === "*") plan.targets.push({ target, addresses: null });
    else if (isIPv4(target.host)) plan.targets.push({ target, addresses: [target.host] });
    else if (target.host.startsWith("[")) plan.targets.push({ target, addresses: [] });
    else {
      const addresses = (await lookup(target.host)).filter(isIPv4);
      if (addresses.length === 0) {
        throw new Error(`network rule "${target.rule}": host "${target.host}" has no IPv4 address`);
      }
      plan.targets.push({ target, addresses });
      for (const a of addresses) plan.hosts.push(`${target.host}:${a}`);
    }
  }
  plan.hosts = [...new Set(plan.hosts)];
  return plan;
}

const REJECT_CHAIN = "VF-REJECT";

/** The rule lines (after `-A OUTPUT`) of one target. */
function match(address: string | null, port: number | null): string {
  const d = address === null ? "" : ` -d ${address}/32`;
  return port === null ? d : `${d} -p tcp -m tcp --dport ${port}`;
}

/**
 * The `iptables-restore` input of a plan: the filter table of the container's namespace,
 * OUTPUT filtered, the loopback always open, refusals rejected at once. `nameservers` are
 * the container's DNS servers (kept open under `block` rules).
 */
export function iptablesRules(plan: EgressPlan, nameservers: readonly string[]): string {
  const lines = [
    "*filter",
    ":INPUT ACCEPT [0:0]",
    ":FORWARD ACCEPT [0:0]",
    ":OUTPUT ACCEPT [0:0]",
    `:${REJECT_CHAIN} - [0:0]`,
    `-A ${REJECT_CHAIN} -p tcp -j REJECT --reject-with tcp-reset`,
    `-A ${REJECT_CHAIN} -j REJECT --reject-with icmp-port-unreachable`,
    "-A OUTPUT -o lo -j ACCEPT",
  ];
  const verdict = plan.mode === "allow" ? "ACCEPT" : REJECT_CHAIN;
  for (const { target, addresses } of plan.targets) {
    for (const a of addresses ?? [null]) {
      lines.push(`-A OUTPUT${match(a, target.port)} -j ${verdict}`);
    }
  }
  if (plan.mode === "allow") lines.push(`-A OUTPUT -j ${REJECT_CHAIN}`);
  else {
    for (const ns of nameservers.filter(isIPv4)) {
      lines.push(`-A OUTPUT -d ${ns}/32 -p udp -m udp --dport 53 -j ACCEPT`);
      lines.push(`-A OUTPUT -d ${ns}/32 -p tcp -m tcp --dport 53 -j ACCEPT`);
    }
    for (const range of NON_GLOBAL_V4) lines.push(`-A OUTPUT -d ${range} -j ${REJECT_CHAIN}`);
  }
  lines.push("COMMIT", "");
  return lines.join("\n");
}

/** The `nameserver` addresses of a resolv.conf. */
export function nameservers(resolvConf: string): string[] {
  return resolvConf.split("\n").map((l) => /^\s*nameserver\s+(\S+)/.exec(l)?.[1])
    .filter((a): a is string => a !== undefined);
}
