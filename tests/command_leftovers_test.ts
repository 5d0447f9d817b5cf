/**
 * What a killed `vf eval` with the `command` harness leaves behind, and who removes it: a
 * real CLI process is killed with SIGKILL while its agents run; each rollout's messages file
 * and work directory were in the run's own temp folder (`TMPDIR`), nothing in `/tmp`; the
 * next run, or the `--resume` of the killed one, removes what was left.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { after, describe, it } from "node:test";
import { cliArgv, runCli } from "./_cli.ts";
import { fastArgs } from "./_run.ts";

/** No model is called (the agents only wait); the key variable lets the run start. */
const KEY = { VF_LEFTOVER_KEY: "sk-leftover-unused" };
const TASKS = 3;

const roots: string[] = [];
after(() => {
  for (const r of roots) rmSync(r, { recursive: true, force: true });
});

/** A fresh folder of this test, removed at the end. */
function fresh(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  roots.push(dir);
  return dir;
}

async function waitFor(cond: () => boolean, ms: number, what: string): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Folders under `root` whose messages file holds `token`. */
function messageFolders(root: string, token: string): string[] {
  let names: string[];
  try {
    names = readdirSync(root);
  } catch {
    return [];
  }
  return names.filter((d) => d.startsWith("vf-command-")).filter((d) => {
    try {
      return readFileSync(join(root, d, "messages.json"), "utf8").includes(token);
    } catch {
      return false; // not a messages folder, or another run's removed meanwhile
    }
  });
}

/** What is left under `root` by the process `pid`: its messages folders and work dirs. */
function leftBy(root: string, pid: number): string[] {
  return readdirSync(root).filter((d) => new RegExp(`^vf-.*-p${pid}-[A-Za-z0-9]{6}$`).test(d));
}

/** A scenario: a run whose agents wait while `hold` exists, in a temp folder of its own. */
function scenario() {
  const token = `prompt-${randomUUID()}`; // only this run's messages files hold it
  const home = fresh("vf-leftovers-");
  const temp = join(home, "tmp");
  const marks = join(home, "marks");
  mkdirSync(temp);
  mkdirSync(marks);
  const hold = join(home, "hold");
  writeFileSync(hold, "");
  const tasks = join(home, "tasks.jsonl");
  const rows = Array.from({ length: TASKS }, (_, i) => ({ prompt: `${token} ${i}`, answer: "x" }));
  writeFileSync(tasks, rows.map((r) => JSON.stringify(r)).join("\n") + "\n");
  // each agent says it started (its pid), then waits while the hold file exists
  const agent = 'echo $$ > "$VF_T_MARKS/$$"; while [ -e "$VF_T_HOLD" ]; do sleep 0.1; done';
  const args = [
    "eval",
    "jsonl",
    "--env.taskset.path",
    tasks,
    "--env.agent.harness.id",
    "command",
    "--env.agent.harness.command",
    JSON.stringify(["bash", "-c", agent]),
    "--env.agent.harness.env",
    JSON.stringify({ VF_T_MARKS: marks, VF_T_HOLD: hold }),
    "-c",
    String(TASKS),
    "-m",
    "m",
    "--client.base-url",
    "http://127.0.0.1:9/v1",
    "--client.api-key-var",
    "VF_LEFTOVER_KEY",
    "--run.name",
    "killed",
    "--display",
    "none",
  ];
  const env = { ...KEY, TMPDIR: temp };
  return { token, home, temp, marks, hold, args, env, runDir: join(home, "outputs", "killed") };
}

/** Starts the run, waits for every agent, checks where the files went, then SIGKILLs it. */
async function startAndKill(s: ReturnType<typeof scenario>): Promise<number> {
  const [cmd, ...rest] = cliArgv(s.args);
  const child = spawn(cmd, rest, {
    cwd: s.home,
    env: { ...process.env, NO_COLOR: "1", ...s.env },
    stdio: "ignore",
  });
  const exited = new Promise<string | null>((r) => child.on("exit", (_c, sig) => r(sig)));
  try {
    await waitFor(() => readdirSync(s.marks).length === TASKS, 60_000, "every agent to start");
    assert.equal(
      messageFolders(s.temp, s.token).length,
      TASKS,
      "a messages file per rollout in TMPDIR",
    );
    assert.deepEqual(messageFolders("/tmp", s.token), [], "a messages file went to /tmp");
  } finally {
    child.kill("SIGKILL");
    rmSync(s.hold); // the agents outlive their killed parent: let them end
  }
  assert.equal(await exited, "SIGKILL");
  for (const pid of readdirSync(s.marks).map(Number)) {
    await waitFor(() => !alive(pid), 10_000, `agent ${pid} to end`);
  }
  return child.pid!;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe("a killed run with the command harness", () => {
  it(
    "leaves its files in TMPDIR only, and the next run removes them",
    { timeout: 120_000 },
    async () => {
      const s = scenario();
      const pid = await startAndKill(s);
      const left = leftBy(s.temp, pid);
      assert.deepEqual(leftBy("/tmp", pid), [], "with TMPDIR set, nothing of the run is in /tmp");
      assert.equal(
        messageFolders(s.temp, s.token).length,
        TASKS,
        "the kill left the messages files",
      );
      assert.equal(left.length, 2 * TASKS, `a messages folder and a work dir per rollout: ${left}`);
      const next = await runCli(
        ["eval", ...fastArgs(1), "--run.name", "next", "--display", "none"],
        {
          cwd: s.home,
          env: s.env,
        },
      );
      assert.equal(next.code, 0, next.stderr);
      assert.deepEqual(leftBy(s.temp, pid), [], "the next run removed what the killed one left");
    },
  );

  it("the --resume of the killed run removes them and finishes", { timeout: 120_000 }, async () => {
    const s = scenario();
    const pid = await startAndKill(s);
    assert.equal(leftBy(s.temp, pid).length, 2 * TASKS);
    const again = await runCli(["eval", "--resume", s.runDir, "--display", "none"], {
      cwd: s.home,
      env: s.env,
    });
    assert.equal(again.code, 0, again.stderr);
    assert.deepEqual(leftBy(s.temp, pid), [], "the resume removed what the killed run left");
    assert.deepEqual(messageFolders(s.temp, s.token), [], "the resumed rollouts removed theirs");
    assert.equal(
      readFileSync(join(s.runDir, "traces.jsonl"), "utf8").trim().split("\n").length,
      TASKS,
    );
    assert.equal(existsSync(s.hold), false);
  });
});
