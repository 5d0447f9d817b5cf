import "./_builtins.ts";
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type CliResult, runCli } from "./_cli.ts";
import { GROUPS } from "../lib/cli/usage.ts";
import { FAST } from "./_run.ts";
import { at } from "./_assert.ts";

const ROOT = join(import.meta.dirname!, "..");

/** Every command path a user can type, groups and their subcommands included. */
const COMMANDS: string[][] = [
  ["eval"],
  ["validate-config"],
  ["init"],
  ["view"],
  ...Object.entries(GROUPS).flatMap(([group, subs]) => [
    [group],
    ...Object.keys(subs).map((sub) => [group, sub]),
  ]),
];

/** Runs CLI invocations a few at a time (each is a process start). */
async function runAll(cases: string[][], env: Record<string, string>, cwd: string) {
  const results: CliResult[] = new Array(cases.length);
  let next = 0;
  await Promise.all(Array.from({ length: 3 }, async () => {
    while (next < cases.length) {
      const i = next++;
      results[i] = await runCli(at(cases, i), { env, cwd });
    }
  }));
  return results;
}

/** Asserts one clear bad-input failure: exit 2, one error line with a hint, no stack. */
function assertOneClearError(r: CliResult, pattern: RegExp, what: string) {
  assert.equal(r.code, 2, `${what}: exit ${r.code}\n${r.stderr}`);
  const errors = r.stderr.split("\n").filter((l) => /^error:/.test(l));
  assert.equal(errors.length, 1, `${what}: expected one error line:\n${r.stderr}`);
  assert.match(r.stderr, pattern, what);
  assert.match(r.stderr, /^hint: \S/m, `${what}: no hint saying what to do next`);
  assert.doesNotMatch(r.stderr, /^\s+at \S/m, `${what}: stack trace`);
  assert.doesNotMatch(r.stderr, /no taskset|no model/, `${what}: a cascaded problem`);
}

describe("help on every command", () => {
  let dir: string;
  let env: Record<string, string>;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), "vf-help-"));
    env = { VF_CACHE_DIR: join(dir, "cache") };
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it("--help and -h print each command's own usage and examples, exit 0", async () => {
    const cases = COMMANDS.flatMap((path) => [[...path, "--help"], [...path, "-h"]]);
    const results = await runAll(cases, env, dir);
    cases.forEach((argv, i) => {
      const r = at(results, i);
      const path = argv.slice(0, -1).join(" ");
      assert.equal(r.code, 0, `vf ${argv.join(" ")}: exit ${r.code}\n${r.stderr}`);
      // its own usage: "Usage: vf <path> ..." or a usage block whose lines start `vf <path>`
      const usage = new RegExp(`^Usage:(\n)? +vf ${path}[ \n]`, "m");
      assert.match(r.stdout, usage, `vf ${argv.join(" ")} printed:\n${r.stdout}`);
      const group = Object.hasOwn(GROUPS, path) ? GROUPS[path] : undefined;
      if (group) {
        for (const sub of Object.keys(group)) {
          assert.match(r.stdout, new RegExp(`^  ${sub} `, "m"));
        }
      } else assert.match(r.stdout, /^Examples?:\n {2}vf /m, `vf ${argv.join(" ")}: no examples`);
    });
    assert.equal(readdirSync(dir).filter((f) => f !== "cache").length, 0, "help wrote files");
  });

  it("vf eval --help states each field's default once", async () => {
    const r = await runCli(["eval", "echo", "--help"], { env, cwd: dir });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^ {2}--seed +int \| null +Shuffle seed \(default 0\)$/m);
    const twice = r.stdout.split("\n").filter((l) => (l.match(/\(default\b/g) ?? []).length > 1);
    assert.deepEqual(twice, []);
  });

  it("a group alone lists its subcommands (exit 0)", async () => {
    const groups = Object.keys(GROUPS);
    const results = await runAll(groups.map((g) => [g]), env, dir);
    groups.forEach((_, i) => {
      assert.equal(at(results, i).code, 0, at(results, i).stderr);
      assert.match(at(results, i).stdout, /^Subcommands:$/m);
    });
  });

  it("--help after `--` belongs to the sandbox command, not to vf", async () => {
    const r = await runCli([
      "sandbox",
      "exec",
      "--runtime",
      "subprocess",
      "--",
      "sh",
      "-c",
      'echo "$1"',
      "x",
      "--help",
    ], {
      env,
      cwd: dir,
    });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, "--help\n");
  });

  it("keep_workdir says where the folder was kept", async () => {
    const r = await runCli(
      ["sandbox", "exec", "--runtime", "subprocess", "--runtime.keep-workdir", "--", "pwd"],
      { env, cwd: dir },
    );
    assert.equal(r.code, 0, r.stderr);
    const kept = r.stdout.trim();
    assert.ok(existsSync(kept), `${kept} was not kept`);
    assert.equal(r.stderr.split(`kept work directory (keep_workdir): ${kept}`).length, 2);
    rmSync(kept, { recursive: true, force: true });
  });

  it("vf sandbox exec -i passes what is piped into it to the command; without -i, nothing", async () => {
    const args = ["sandbox", "exec", "-i", "--runtime", "subprocess", "--", "cat"];
    const r = await runCli(args, { env, cwd: dir, input: "piped line\n" });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, "piped line\n");
    const without = await runCli(args.filter((a) => a !== "-i"), {
      env,
      cwd: dir,
      input: "piped line\n",
    });
    assert.equal(without.code, 0, without.stderr);
    assert.equal(without.stdout, "", "stdin is not passed without -i");
  });
});

describe("bad invocations stop at the first cause with one clear message", () => {
  let dir: string;
  let env: Record<string, string>;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), "vf-bad-"));
    env = {
      VF_CACHE_DIR: join(dir, "cache"),
      PRIME_API_KEY: "",
      MODAL_TOKEN_ID: "",
      MODAL_TOKEN_SECRET: "",
      MODAL_CONFIG_PATH: join(dir, "no-modal.toml"),
    };
    writeFileSync(join(dir, "broken.toml"), `model = "oracle"\n[env.taskset\nid = "echo"\n`);
    writeFileSync(join(dir, "ok.toml"), `model = "oracle"\n[env.taskset]\nid = "echo"\n`);
    writeFileSync(
      join(dir, "judged.toml"),
      `model = "oracle"\n[env.taskset]\nid = "echo"\n[[env.taskset.task.judges]]\nid = "match"\n`,
    );
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  const CASES: [string[], RegExp][] = [
    [["eval", "@", "broken.toml"], /broken\.toml:2:\d+: invalid TOML/],
    [["eval", "--resume"], /--resume needs a run folder/],
    [["eval", "addition", "-m", "oracle", "-n", "3", "--resume"], /--resume needs a run folder/],
    [["eval", "--resume", "outputs/never-ran"], /Cannot resume \S*never-ran: no such folder/],
    [["eval", "echo", "-m", "oracle", "--run.name", "nope", "--resume"], /no run in \S*nope/],
    [["eval", "ok.toml", "-m", "oracle"], /"ok\.toml" is a config file[^]*vf eval @ ok\.toml/],
    [["eval", "ehco", "-m", "oracle"], /Cannot find taskset "ehco"[^\n]*did you mean "echo"/],
    [
      ["eval", "echo", "-m", "oracle", "--env.taskset.digits", "3"],
      /unknown flag --env\.taskset\.digits; --env\.taskset has: /,
    ],
    [
      ["eval", "@", "judged.toml", "--env.taskset.task.judges.1.mode", "exact"],
      /judges has no entry 1/,
    ],
    [
      ["validate-config", "@", "judged.toml", "--env.taskset.task.judges.0.mode", "exactly"],
      /judges\.0\.mode: Invalid option/,
    ],
    [["sandboxes", "lst"], /unknown subcommand "lst" \(did you mean "list"\?\)/],
    [["plugins", "show", "taskset"], /expected `list` or `show <kind> <id>`/],
    [
      ["bridge", "prime-eval", "echo", "--provider", "openai"],
      /--provider openai needs a base URL/,
    ],
    [["sandbox", "exec", "--runtime", "prime", "--", "true"], /no Prime API key/],
    [["sandbox", "exec", "--runtime", "modal", "--", "true"], /modal credentials are missing/],
  ];

  it("each exits 2 with one error line, a hint, no stack and nothing cascaded", async () => {
    const cases = CASES;
    const results = await runAll(cases.map(([argv]) => argv), env, dir);
    cases.forEach(([argv, pattern], i) =>
      assertOneClearError(at(results, i), pattern, `vf ${argv.join(" ")}`)
    );
    assert.equal(existsSync(join(dir, "outputs")), false, "a refused command wrote a run folder");
  });

  it("--no-color keeps colour sequences out of messages that quote other text", async () => {
    const r = await runCli(["eval", "\x1b[31mred\x1b[0m", "-m", "oracle", "--no-color"], {
      env,
      cwd: dir,
    });
    assert.equal(r.code, 2, r.stderr);
    // the id's escape characters are shown escaped, never raw
    assert.match(r.stderr, /Cannot find taskset "\\u001b\[31mred\\u001b\[0m"/);
    assert.ok(!r.stderr.includes("\x1b"), JSON.stringify(r.stderr));
  });

  it("validate-config needs no model and writes nothing; --env.x.0.field edits a file's list", async () => {
    const ok = await runCli([
      "validate-config",
      "@",
      "judged.toml",
      "--env.taskset.task.judges.0.mode",
      "exact",
      "--model",
      "None",
    ], {
      env,
      cwd: dir,
    });
    assert.equal(ok.code, 0, ok.stderr);
    assert.match(
      ok.stdout,
      /^config valid: taskset echo · harness bash · runtime subprocess · judges match · model \(none given\)$/m,
    );
    assert.deepEqual(readdirSync(dir).filter((f) => f !== "cache").sort(), [
      "broken.toml",
      "judged.toml",
      "ok.toml",
    ]);
    // Python's own eval.json (a golden run written by verifiers v1) and a plugin module's config
    const golden = join(ROOT, "tests/fixtures/python_v1/golden/reverse-text/configs/eval.json");
    const python = await runCli(["validate-config", "@", golden], { env, cwd: dir });
    assert.equal(python.code, 0, python.stderr);
    assert.match(python.stdout, /^config valid: taskset reverse-text · [^\n]*runtime subprocess/m);
    const plugin = await runCli(["validate-config", FAST, "--env.taskset.count", "3"], {
      env,
      cwd: dir,
    });
    assert.equal(plugin.code, 0, plugin.stderr);
    const badPlugin = await runCli(["validate-config", FAST, "--env.taskset.count", "many"], {
      env,
      cwd: dir,
    });
    assertOneClearError(badPlugin, /--env\.taskset\.count/, "a plugin field of the wrong type");
    assert.deepEqual(readdirSync(dir).filter((f) => f !== "cache").sort(), [
      "broken.toml",
      "judged.toml",
      "ok.toml",
    ]);
    const bad = await runCli(["validate-config", "@", "broken.toml"], { env, cwd: dir });
    assertOneClearError(bad, /invalid TOML/, "validate-config of a broken file");
  });
});
