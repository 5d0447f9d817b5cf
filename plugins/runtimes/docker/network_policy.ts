/**
 * Execution-time network policy of the docker runtime, with the rules of Python verifiers'
 * `NetworkPolicyConfig` (`verifiers/v1/configs/runtime.py@a60a606`): `allow` (default
 * `["*"]`) and `block` (default `[]`) lists of host patterns or URL origins; an empty
 * `allow` or a `*` in `block` means framework-only (`allow = []`, `block = ["*"]`); a
 * concrete `allow` and a non-empty `block` together are refused. A rule matches a
 * destination as `network_rule_matches` does: lowercased, a trailing `/` and `.` dropped,
 * the host matched as an `fnmatch` glob (`*.x` also matching `x`), the scheme and port
 * checked when the rule names them (a scheme without a port means its default port).
 *
 * @module
 */

/** A policy after Python's normalization. */
export interface NetworkPolicy {
  allow: string[];
  block: string[];
}

/**
 * Python's `validate_network_policy`: the normalized policy, or a message for a policy it
 * refuses.
 */
export function normalizePolicy(allow: readonly string[], block: readonly string[]):
  | { ok: true; policy: NetworkPolicy }
  | { ok: false; message: string } {
  if (allow.length === 0 || block.includes("*")) {
    return { ok: true, policy: { allow: [], block: ["*"] } };
  }
  if (!(allow.length === 1 && allow[0] === "*") && block.length > 0) {
    return {
      ok: false,
      message: "non-empty concrete allow and block egress lists are mutually exclusive",
    };
  }
  return { ok: true, policy: { allow: [...allow], block: [...block] } };
}

/** True when the policy limits egress at all (Python's `network_restricted`). */
export function isRestricted(policy: NetworkPolicy): boolean {
  return !policy.allow.includes("*") || policy.block.length > 0;
}

/** True when the policy lets nothing out but the framework's own routes. */
export function isFrameworkOnly(policy: NetworkPolicy): boolean {
  return policy.allow.length === 0 && policy.block.includes("*");
}

/** `fnmatch.fnmatchcase` of a host against a glob: `*`, `?`, `[seq]`, `[!seq]`. */
function globMatch(text: string, pattern: string): boolean {
  let re = "";
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === "*") re += "[\\s\\S]*";
    else if (c === "?") re += "[\\s\\S]";
    else if (c === "[") {
      const end = pattern.indexOf("]", i + 2);
      if (end < 0) re += "\\[";
      else {
        let body = pattern.slice(i + 1, end).replaceAll("\\", "\\\\");
        if (body.startsWith("!")) body = "^" + body.slice(1);
        re += `[${body}]`;
        i = end;
      }
    } else re += c.replace(/[.+^${}()|\\/-]/g, "\\$&");
  }
  return new RegExp(`^${re}$`).test(text);
}

/** Python's `network_rule_matches(rule, scheme, host, port)`. */
export function networkRuleMatches(
  rule: string,
  scheme: string,
  host: string,
  port: number,
): boolean {
  const value = rule.toLowerCase().replace(/\/+$/, "");
  let parsed: URL;
  try {
    parsed = new URL(value.includes("://") ? value : `vf-rule://${value}`);
  } catch {
    return false;
  }
  const ruleScheme = value.includes("://") ? parsed.protocol.slice(0, -1) : "";
  // URL normalizes the default port of http(s) away: put it back
  let rulePort: number | null = parsed.port === "" ? null : Number(parsed.port);
  const pattern = decodeURIComponent(parsed.hostname).replace(/\.+$/, "");
  if (!pattern || (ruleScheme && ruleScheme !== scheme)) return false;
  if (ruleScheme && rulePort === null) rulePort = ruleScheme === "https" ? 443 : 80;
  if (rulePort !== null && rulePort !== port) return false;
  const h = host.toLowerCase().replace(/\.+$/, "");
  return globMatch(h, pattern) || (pattern.startsWith("*.") && h === pattern.slice(2));
}
