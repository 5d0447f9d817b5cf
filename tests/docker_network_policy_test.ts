/**
 * The docker runtime's per-destination network policy: rules read as Python's
 * `network_rule_matches` reads them, the container's packet filter agreeing with that
 * matcher, and, against the real engine, `allow` and `block` rules holding for a plain
 * shell's connections to servers in containers the test made (no proxy variable is
 * involved), refusals failing fast, the container's loopback always open, nothing left on
 * this machine; and whole runs whose program calls the model through the relay under
 * `block = ["*"]` and under an `allow` rule alike. Skips the engine part with one line when no engine can be reached.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import process from "node:process";
import { after, before, describe, it } from "node:test";
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ConfigError, SandboxError } from "../kit/errors.ts";
import { listSandboxes } from "../kit/runtime/ledger.ts";
import type { Runtime } from "../kit/runtime/runtime.ts";
import docker, { networkRuleMatches, RUN_LABEL, runArgs } from "../plugins/runtimes/docker/mod.ts";
import {
  iptablesRules,
  NON_GLOBAL_V4,
  parseRule,
  planEgress,
} from "../plugins/runtimes/docker/egress_rules.ts";
import { at } from "./_assert.ts";
import { containersLabelled, dockerSkipReason, removeContainers, TEST_IMAGE } from "./_docker.ts";
import { evalInProcess } from "./_eval.ts";
import { startFakeOpenAI } from "./fakes/openai_server.ts";
import { buildRelayImage, RELAY_TEST_KEY as KEY, relayRunArgs } from "./_relay_image.ts";
import { useOwnCacheDir } from "./_cache_dir.ts";

type FakeOpenAI = Awaited<ReturnType<typeof startFakeOpenAI>>;

const skip = dockerSkipReason();
if (skip) console.warn(`docker_network_policy_test: SKIPPED: ${skip}`);

useOwnCacheDir("vf-docker-policy-cache-");
const RUN = `docker-policy-${process.pid}`;
const made: Runtime[] = [];
let seq = 0;

function makeDocker(config: Record<string, unknown>): Runtime {
  const rt = docker.create(
    { image: TEST_IMAGE, workdir: "/work", ...config },
    { name: `p${++seq}`, run: RUN },
  );
  made.push(rt);
  return rt;
}

/** Where a tcp connection to `ip:port` lands under `rules` (a reading of iptables' OUTPUT). */
function verdict(rules: string, ip: string, port: number): "ACCEPT" | "REJECT" {
  const inRange = (cidr: string) => {
    const [base, bits] = cidr.split("/") as [string, string];
    const n = (a: string) => a.split(".").reduce((v, o) => v * 256 + Number(o), 0);
    const size = 2 ** (32 - Number(bits));
    return Math.floor(n(ip) / size) === Math.floor(n(base) / size);
  };
  for (const line of rules.split("\n").filter((l) => l.startsWith("-A OUTPUT "))) {
    if (line.includes("-o lo")) continue;
    const d = / -d (\S+)/.exec(line)?.[1];
    const p = / -p (\S+)/.exec(line)?.[1];
    const dport = / --dport (\d+)/.exec(line)?.[1];
    if (d && !inRange(d)) continue;
    if (p && p !== "tcp") continue;
    if (dport && Number(dport) !== port) continue;
    return line.endsWith("-j ACCEPT") ? "ACCEPT" : "REJECT";
  }
  return "ACCEPT";
}

describe("docker network rules at the address level", () => {
  it("parseRule() reads a rule's host and port as Python's network_rule_matches", () => {
    const read = (r: string) => {
      const t = parseRule(r);
      return "error" in t ? t.error : [t.host, t.port];
    };
    assert.deepEqual(read("https://API.Example.com/"), ["api.example.com", 443]);
    assert.deepEqual(read("http://example.com./path"), ["example.com", 80]);
    assert.deepEqual(read("example.com:8080"), ["example.com", 8080]);
    assert.deepEqual(read("10.1.2.3"), ["10.1.2.3", null]);
    // Python ignores the path: a "CIDR" names its base address only
    assert.deepEqual(read("10.0.0.0/8"), ["10.0.0.0", null]);
    assert.deepEqual(read("*"), ["*", null]);
    assert.deepEqual(read("*:443"), ["*", 443]);
    assert.match(String(read("*.example.com")), /host glob/);
    assert.match(String(read("host:70000")), /outside 1-65535/);
  });

  it("refuses host globs at config time, naming the rule", () => {
    assert.throws(
      () => docker.check!({ ...docker.config.parse({}), allow: ["*.github.com"] }),
      (e: unknown) => e instanceof ConfigError && /\*\.github\.com.*host glob/.test(e.message),
    );
    docker.check!({ ...docker.config.parse({}), allow: ["10.1.2.3:80", "https://example.com"] });
    docker.check!({ ...docker.config.parse({}), block: ["10.1.2.3"] });
  });

  it("the filter's verdict agrees with Python's matcher for allow rules", async () => {
    const rules = ["10.1.2.3", "http://10.1.2.4", "10.1.2.5:8080", "https://10.1.2.6"];
    const plan = await planEgress(
      "allow",
      rules.map((r) => parseRule(r) as never),
      () => Promise.reject(new Error("no names here")),
    );
    const text = iptablesRules(plan, ["10.255.255.53"]);
    for (const ip of ["10.1.2.3", "10.1.2.4", "10.1.2.5", "10.1.2.6", "10.1.2.7"]) {
      for (const port of [80, 443, 8080]) {
        const python = rules.some((r) =>
          networkRuleMatches(r, "http", ip, port) || networkRuleMatches(r, "https", ip, port)
        );
        assert.equal(verdict(text, ip, port), python ? "ACCEPT" : "REJECT", `${ip}:${port}`);
      }
    }
    // the container's DNS server is not open under allow rules (names are pinned instead)
    assert.equal(verdict(text, "10.255.255.53", 53), "REJECT");
  });

  it("block rules: the blocked and the non-global refused, the DNS server and the rest open", async () => {
    const plan = await planEgress(
      "block",
      [parseRule("93.184.216.34") as never, parseRule("api.test:443") as never],
      (host) => Promise.resolve(host === "api.test" ? ["198.51.100.7", "::1"] : []),
    );
    assert.deepEqual(plan.hosts, ["api.test:198.51.100.7"]);
    const text = iptablesRules(plan, ["10.255.255.53"]);
    assert.equal(verdict(text, "93.184.216.34", 80), "REJECT");
    assert.equal(verdict(text, "93.184.216.35", 80), "ACCEPT");
    assert.equal(verdict(text, "10.255.255.53", 53), "ACCEPT");
    for (const cidr of NON_GLOBAL_V4) {
      assert.equal(verdict(text, cidr.split("/")[0]!, 80), "REJECT", cidr);
    }
    // the container resolves a named rule's host to the addresses the filter names
    const args = runArgs(
      { ...docker.config.parse({}), block: ["api.test:443"] },
      "c",
      {},
      plan.hosts,
    );
    const flag = (name: string) => args[args.indexOf(name) + 1];
    assert.deepEqual(
      [flag("--network"), flag("--add-host"), flag("--sysctl")],
      ["bridge", "api.test:198.51.100.7", "net.ipv6.conf.all.disable_ipv6=1"],
    );
    assert.deepEqual(args.filter((_, i) => args[i - 1] === "--cap-drop"), ["NET_ADMIN", "NET_RAW"]);
    await assert.rejects(
      planEgress("allow", [parseRule("nowhere.test") as never], () => Promise.resolve([])),
      /nowhere\.test.*no IPv4 address/,
    );
  });
});

describe("docker network rules against the engine", { skip: skip ?? false }, () => {
  const servers: string[] = [];
  const ips: string[] = [];

  before(() => {
    // two HTTP servers, each in a container of its own on the default bridge
    for (const word of ["one", "two"]) {
      const id = execFileSync("docker", [
        "run",
        "--detach",
        "--rm",
        "--label",
        `${RUN_LABEL}=${RUN}`,
        "--entrypoint",
        "sh",
        TEST_IMAGE,
        "-c",
        `mkdir /www && echo ${word} > /www/index.html && exec httpd -f -p 8080 -h /www`,
      ], { encoding: "utf8" }).trim();
      servers.push(id);
      ips.push(
        execFileSync("docker", [
          "inspect",
          "--format",
          "{{.NetworkSettings.IPAddress}}",
          id,
        ], { encoding: "utf8" }).trim(),
      );
    }
  });

  let image: { tag: string; remove(): void } | undefined;
  let openai: FakeOpenAI | undefined;
  const relayImageOnce = () => image ??= buildRelayImage();

  after(async () => {
    for (const rt of made) await rt.stop();
    removeContainers([...servers, ...containersLabelled(`${RUN_LABEL}=${RUN}`)]);
    await openai?.close();
    if (image) {
      // the runs' own containers, should a failed run have left one
      const left = execFileSync("docker", ["ps", "-aq", "--filter", `ancestor=${image.tag}`], {
        encoding: "utf8",
      });
      removeContainers(left.split("\n").filter(Boolean));
      image.remove();
    }
  });

  /** A plain shell's HTTP GET (bash's /dev/tcp: no HTTP client, no proxy variable). */
  const get = (ip: string, port: number) =>
    `exec 3<>/dev/tcp/${ip}/${port} && printf 'GET / HTTP/1.0\\r\\n\\r\\n' >&3 && tail -n1 <&3`;

  /** What a server answered, or "refused" (and how long that took, ms). */
  async function fetchFrom(
    rt: Runtime,
    ip: string,
    port = 8080,
  ): Promise<{ said: string; ms: number }> {
    const t0 = Date.now();
    const r = await rt.run(["bash", "-c", `(${get(ip, port)}) 2>/dev/null || echo refused`]);
    return { said: r.stdout.trim(), ms: Date.now() - t0 };
  }

  /** True when a server on the container's own loopback answers. */
  async function loopbackOpen(rt: Runtime): Promise<boolean> {
    const r = await rt.run([
      "bash",
      "-c",
      "mkdir -p /tmp/lo && echo lo > /tmp/lo/index.html && httpd -p 127.0.0.1:9000 -h /tmp/lo " +
      `&& ${get("127.0.0.1", 9000)}`,
    ]);
    return r.stdout.trim() === "lo";
  }

  it("allow: the named server answers; another, and another port, are refused at once", async () => {
    const [one, two] = ips as [string, string];
    const rt = makeDocker({ allow: [`${one}:8080`] });
    await rt.start();
    assert.deepEqual((await fetchFrom(rt, one)).said, "one");
    const refused = await fetchFrom(rt, two);
    assert.equal(refused.said, "refused");
    assert.ok(refused.ms < 3000, `refused in ${refused.ms} ms`);
    assert.equal((await fetchFrom(rt, one, 8081)).said, "refused");
    assert.equal(await loopbackOpen(rt), true);
    // the container holds no capability to change its rules
    const caps = await rt.run(["sh", "-c", "grep CapEff /proc/self/status"]);
    const eff = BigInt("0x" + caps.stdout.trim().split(/\s+/)[1]);
    assert.equal(eff & (1n << 12n), 0n, "no NET_ADMIN");
    assert.equal(eff & (1n << 13n), 0n, "no NET_RAW");
    await rt.stopConfirmed();
  });

  it("block: the blocked server is refused at once; the loopback stays open", async () => {
    const [one] = ips as [string, string];
    const rt = makeDocker({ block: [one] });
    await rt.start();
    const refused = await fetchFrom(rt, one);
    assert.equal(refused.said, "refused");
    assert.ok(refused.ms < 3000, `refused in ${refused.ms} ms`);
    assert.equal(await loopbackOpen(rt), true);
    await rt.stopConfirmed();
  });

  it('block = ["*"] and no policy: servers refused, then reached', async () => {
    const [one] = ips as [string, string];
    const cut = makeDocker({ block: ["*"] });
    await cut.start();
    assert.equal((await fetchFrom(cut, one)).said, "refused");
    assert.equal(await loopbackOpen(cut), true);
    await cut.stopConfirmed();
    const open = makeDocker({});
    await open.start();
    assert.equal((await fetchFrom(open, one)).said, "one");
    await open.stopConfirmed();
  });

  it("rules that cannot be loaded fail the start clearly, and the container goes", async () => {
    const bin = mkdtempSync(join(tmpdir(), "vf-policy-bin-"));
    const path = process.env.PATH;
    // a PATH with the docker CLI but no nsenter
    symlinkSync(
      execFileSync("sh", ["-c", "command -v docker"], { encoding: "utf8" }).trim(),
      join(bin, "docker"),
    );
    process.env.PATH = bin;
    try {
      const rt = makeDocker({ allow: [`${ips[0]}:8080`] });
      await assert.rejects(
        rt.start(),
        (e: unknown) =>
          e instanceof SandboxError && /Cannot load the network rules/.test(e.message) &&
          /nsenter/.test(e.hint ?? ""),
      );
      await rt.stopConfirmed();
    } finally {
      process.env.PATH = path;
      rmSync(bin, { recursive: true, force: true });
    }
    const left = containersLabelled(`${RUN_LABEL}=${RUN}`).filter((id) => !servers.includes(id));
    assert.deepEqual(left, [], "the container is gone");
    assert.deepEqual(listSandboxes(), []);
  });

  it("leaves no rule on this machine: they lived in the container's namespace", () => {
    const host = execFileSync("iptables-save", { encoding: "utf8" });
    assert.equal(host.includes("VF-REJECT"), false);
  });

  it('the model endpoint answers under block = ["*"] and under allow rules alike', async () => {
    const [one, two] = ips as [string, string];
    const relayImage = relayImageOnce();
    const fake: FakeOpenAI = await startFakeOpenAI({
      apiKey: KEY,
      script: (b) => (b as { stream?: boolean }).stream ? "streamed: hello world" : "json answer",
    });
    openai = fake;
    process.env.VF_RELAY_TEST_KEY = KEY;
    // the program first tries the server with a plain socket, then calls the model
    const program = `echo reached=$( (${get(one, 8080)}) 2>/dev/null || echo refused)` +
      ` other=$( (${get(two, 8080)}) 2>/dev/null || echo refused); exec bun /opt/agent.js`;
    for (
      const [policy, reached] of [
        [["--env.agent.runtime.block", '["*"]'], "refused other=refused"],
        [["--env.agent.runtime.allow", JSON.stringify([`${one}:8080`])], "one other=refused"],
      ] as const
    ) {
      const argv = relayRunArgs("openai", fake.url, relayImage.tag);
      argv.splice(argv.indexOf("--env.agent.runtime.block"), 2, ...policy);
      argv[argv.indexOf("--env.agent.harness.command") + 1] = JSON.stringify([
        "bash",
        "-c",
        program,
      ]);
      const sent = fake.requests.length;
      const { episodes } = await evalInProcess(argv);
      const t = at(at(episodes, 0).traces, 0);
      assert.deepEqual(t.errors, [], JSON.stringify(t.errors));
      assert.equal(fake.requests.length - sent, 2, policy.join(" "));
      const output = JSON.stringify(t.info);
      assert.match(output, new RegExp(`reached=${reached}`), policy.join(" "));
      assert.match(output, /streamed=streamed: hello world/);
    }
  });

  it("a task's network_allow reaches its own container; a task without one keeps the run's", async () => {
    const [one, two] = ips as [string, string];
    const tag = relayImageOnce().tag;
    const dir = mkdtempSync(join(tmpdir(), "vf-policy-tasks-"));
    try {
      const rows = [
        { prompt: "allows one", answer: "x", network_allow: [`${one}:8080`] },
        { prompt: "allows two", answer: "x", network_allow: [`http://${two}:8080`] },
        { prompt: "no policy", answer: "x" },
      ];
      writeFileSync(join(dir, "tasks.jsonl"), rows.map((r) => JSON.stringify(r)).join("\n"));
      const program = `echo one=$( (${get(one, 8080)}) 2>/dev/null || echo refused)` +
        ` two=$( (${get(two, 8080)}) 2>/dev/null || echo refused)`;
      writeFileSync(
        join(dir, "tasks.toml"),
        [
          `[env.taskset]\nid = "jsonl"\npath = ${JSON.stringify(join(dir, "tasks.jsonl"))}`,
          `[env.agent.harness]\nid = "command"\ncommand = ["bash", "-c", ${
            JSON.stringify(program)
          }]`,
          `[env.agent.runtime]\ntype = "docker"\nimage = "${tag}"`,
        ].join("\n"),
      );
      const { episodes } = await evalInProcess(["@", join(dir, "tasks.toml"), "-m", "oracle"], {
        cwd: dir,
      });
      const seen = Object.fromEntries(episodes.map((e) => {
        const t = at(e.traces, 0);
        assert.deepEqual(t.errors, [], JSON.stringify(t.errors));
        const out = (t.info as { agent_output?: { stdout?: string } }).agent_output?.stdout;
        return [String(e.task.data.prompt), String(out).trim()];
      }));
      assert.deepEqual(seen, {
        "allows one": "one=one two=refused",
        "allows two": "one=refused two=two",
        "no policy": "one=one two=two",
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
