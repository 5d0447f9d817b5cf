/**
 * The ACP agents reach no host but loopback: one rollout of each installed agent runs in a
 * network namespace with only loopback (`unshare -n`), under `strace -f`, and every
 * connection the agent's processes tried — the adapter, the agent, the tools they ran — is
 * read from the trace: only 127.0.0.1 / ::1, and no name lookup (DNS on port 53, or one
 * answered by nscd).
 * Skipped, with one line, without root's `unshare`, `strace` or the agent installs.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pi from "../plugins/harnesses/pi/mod.ts";
import claude from "../plugins/harnesses/claude-code/mod.ts";
import codex from "../plugins/harnesses/codex/mod.ts";
import opencode from "../plugins/harnesses/opencode/mod.ts";
import { isInstalled } from "../kit/harness/acp/install.ts";
import type { HarnessPlugin } from "../kit/contract.ts";

const ROOT = join(import.meta.dirname!, "..");
const DRIVER = join(ROOT, "tests", "fixtures", "acp", "offline_eval.ts");
const DENO = join(ROOT, "node_modules", ".bin", "deno");

function toolsMissing(): string | null {
  const probe = spawnSync("unshare", ["-n", "--", "strace", "-qq", "-o", "/dev/null", "true"]);
  return probe.status === 0 ? null : "needs root's unshare -n and strace";
}
const noTools = toolsMissing();
if (noTools) console.log(`acp_offline_test: skipped: ${noTools}`);

/** Connections and lookups of the processes descending from the first `agentExec`. */
export function agentConnections(strace: string, isAgentExec: (path: string) => boolean) {
  const leader = new Map<number, number>(); // thread id -> its process
  const parent = new Map<number, number>(); // process -> parent process
  const pending = new Map<number, string>(); // tid -> the flags of its unfinished clone
  let root: number | null = null;
  const processOf = (tid: number) => leader.get(tid) ?? tid;
  const connects: { pid: number; text: string }[] = [];
  for (const line of strace.split("\n")) {
    const m = /^(\d+)\s+(.*)$/.exec(line);
    if (!m) continue;
    const tid = Number(m[1]);
    const rest = m[2]!;
    const clone = /^(clone3?|fork|vfork)\((.*?)(?: <unfinished \.\.\.>|\) = (\d+))$/.exec(rest);
    const resumed = /^<\.\.\. (clone3?|fork|vfork) resumed>.*= (\d+)$/.exec(rest);
    let child: number | null = null;
    let flags = "";
    if (clone && clone[3] === undefined) pending.set(tid, clone[2]!);
    else if (clone) [child, flags] = [Number(clone[3]), clone[2]!];
    else if (resumed) [child, flags] = [Number(resumed[2]), pending.get(tid) ?? ""];
    if (child !== null) {
      if (flags.includes("CLONE_THREAD")) leader.set(child, processOf(tid));
      else parent.set(child, processOf(tid));
      continue;
    }
    const exec = /^execve\("([^"]+)"/.exec(rest);
    if (exec && root === null && isAgentExec(exec[1]!)) root = processOf(tid);
    if (/^(connect|sendto|sendmsg)\(/.test(rest) && /sa_family|sun_path/.test(rest)) {
      connects.push({ pid: processOf(tid), text: rest });
    }
  }
  const descends = (pid: number): boolean => {
    for (let p: number | undefined = pid; p !== undefined; p = parent.get(p)) {
      if (p === root) return true;
    }
    return false;
  };
  return { root, connects: connects.filter((c) => root !== null && descends(c.pid)) };
}

const AGENTS: [string, HarnessPlugin][] = [
  ["pi", pi],
  ["claude-code", claude],
  ["codex", codex],
  ["opencode", opencode],
];

describe("ACP agents in a loopback-only network namespace", { skip: noTools ?? false }, () => {
  for (const [id, plugin] of AGENTS) {
    const missing = isInstalled(plugin.agentBundle!) ? null : `${id} is not in the agent cache`;
    if (missing) console.log(`acp_offline_test: ${id} skipped: ${missing}`);
    it(`${id} connects to loopback only and looks up no name`, { skip: missing ?? false }, () => {
      const out = join(mkdtempSync(join(tmpdir(), "vf-acp-strace-")), "strace.txt");
      const run = spawnSync("unshare", [
        "-n",
        "--",
        "sh",
        "-c",
        'ip link set lo up && exec strace -f -qq -e trace=connect,sendto,sendmsg,execve,clone,clone3,fork,vfork -o "$0" "$@"',
        out,
        DENO,
        "run",
        "-A",
        DRIVER,
        id,
      ], { encoding: "utf8", timeout: 240_000, cwd: ROOT });
      assert.equal(run.status, 0, run.stderr.slice(-2000));
      const result = JSON.parse(run.stdout.trim().split("\n").pop()!);
      assert.deepEqual(result.errors, [], JSON.stringify(result.errors));
      assert.equal(result.reward, 1, run.stdout.slice(-2000));
      const { root, connects } = agentConnections(
        readFileSync(out, "utf8"),
        (path) => path.includes("/agents/"),
      );
      assert.ok(root !== null, "the adapter ran from the agent install");
      const inet = connects.filter((c) => /AF_INET6?/.test(c.text));
      assert.ok(inet.length > 0, "the agent called the model over loopback");
      for (const c of inet) {
        assert.match(c.text, /inet_addr\("127\.0\.0\.1"\)|inet_pton\(AF_INET6, "::1"/, c.text);
        assert.doesNotMatch(c.text, /htons\(53\)/, `a DNS lookup: ${c.text}`);
      }
      // glibc asks nscd first for any passwd or hosts lookup; with no nscd in the namespace
      // the attempt fails and a hosts lookup falls through to DNS, which the port-53 check
      // catches. A connection nscd answered could be a lookup with no packet, so none may.
      for (const c of connects.filter((c) => /nscd/.test(c.text))) {
        assert.match(c.text, /= -1 E/, `a name lookup answered by nscd: ${c.text}`);
      }
    });
  }
});

describe("agentConnections()", () => {
  it("finds a lookup by a thread of a child of the adapter, and not the host's own", () => {
    const strace = [
      '100  execve("/usr/bin/deno", ["deno"], 0x0 /* 1 var */) = 0',
      '100  connect(5, {sa_family=AF_INET, sin_port=htons(53), sin_addr=inet_addr("10.0.0.53")}, 16) = -1',
      "100  clone3({flags=CLONE_VM|CLONE_VFORK, exit_signal=SIGCHLD}, 88 <unfinished ...>",
      '200  execve("/c/agents/pi@1/node_modules/bun", ["bun"], 0x0 /* 1 var */) = 0',
      "100  <... clone3 resumed>) = 200",
      "200  clone(child_stack=NULL, flags=CLONE_CHILD_SETTID|SIGCHLD) = 300",
      "300  clone3({flags=CLONE_VM|CLONE_THREAD|CLONE_SIGHAND, exit_signal=0}, 88) = 301",
      '301  connect(9, {sa_family=AF_INET, sin_port=htons(53), sin_addr=inet_addr("10.0.0.53")}, 16) = -1',
      '200  connect(7, {sa_family=AF_INET, sin_port=htons(4000), sin_addr=inet_addr("127.0.0.1")}, 16) = 0',
    ].join("\n");
    const { root, connects } = agentConnections(strace, (p) => p.includes("/agents/"));
    assert.equal(root, 200);
    assert.deepEqual(connects.map((c) => c.pid), [300, 200]);
    assert.match(connects[0]!.text, /htons\(53\)/);
  });
});
