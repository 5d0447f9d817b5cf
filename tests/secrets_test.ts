/**
 * Secrets: `vf eval` (a child process, `-v`) with a distinctive value for every kind of
 * credential — the model key under a custom `api_key_var`, a judge's key, OPENAI_API_KEY,
 * PRIME_API_KEY, MODAL_TOKEN_ID/SECRET, GITHUB_TOKEN, AWS_SECRET_ACCESS_KEY, HF_TOKEN, a
 * header value, a password in the base URL, a forwarded token — over the `null`, `bash`
 * and `command` harnesses, against a provider that echoes the key in a 401. None of the
 * values is in any file under the output or cache directory, on stdout or stderr, or in
 * the agent's environment, except the one variable the config forwards to the agent.
 */
import { after, afterEach, before, beforeEach, describe, it } from "node:test";
import assert from "node:assert/strict";
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
import { runCli, runProcess } from "./_cli.ts";
import { TOOL_BIN } from "./_plugin_package.ts";
import { run } from "./_run.ts";
import { InputError } from "../kit/errors.ts";
import { ledgerDir, recordSandbox } from "../kit/runtime/ledger.ts";
import process from "node:process";
import { type FaultServer, promptOf, startFaultServer } from "./fakes/fault_server.ts";
import type { Fault } from "./fakes/fault_server.ts";
import {
  addSecret,
  clearSecretsForTests,
  isCredentialName,
  maskUrl,
  redact,
} from "../kit/secrets.ts";
import { at } from "./_assert.ts";
import { filesUnder } from "./_source_tree.ts";

const OPENAI_URL = new URL("../node_modules/openai/index.mjs", import.meta.url).href;
const SECRETS_MODULE = new URL("../kit/secrets.ts", import.meta.url).href;

/** One distinctive value per credential kind (variable name -> value). */
const SECRET_VARS = {
  VF_MODEL_TOKEN: "sk-model-Zq81secretA",
  VF_JUDGE_TOKEN: "sk-judge-Wp27secretB",
  OPENAI_API_KEY: "sk-openai-Kd55secretC",
  PRIME_API_KEY: "pk-prime-Rt63secretD",
  MODAL_TOKEN_ID: "ak-modalid-Hy19secretE",
  MODAL_TOKEN_SECRET: "as-modalsecret-Nb40secretF",
  GITHUB_TOKEN: "ghp_github-Qx72secretG",
  AWS_SECRET_ACCESS_KEY: "aws-secret-Lm38secretH",
  HF_TOKEN: "hf_hugging-Vc94secretI",
};
const HEADER_VALUE = "hdr-value-Tg26secretJ";
const URL_PASSWORD = "urlpass-Ej83secretK";
/** Forwarded to the agent by `forward_env`: the agent may see it, no file may hold it. */
const FORWARDED = { name: "VF_FORWARDED_TOKEN", value: "fwd-token-Ds47secretL" };

const ALL_SECRETS = [...Object.values(SECRET_VARS), HEADER_VALUE, URL_PASSWORD, FORWARDED.value];

const root = mkdtempSync(join(tmpdir(), "vf-secrets-"));
let server: FaultServer;

before(async () => {
  server = await startFaultServer({
    content: "yes",
    // the judges' prompts name no fault: they get good answers
    pick: (body) => {
      const prompt = promptOf(body);
      return prompt.startsWith("fault:") ? prompt.slice(6) as Fault : "ok";
    },
  });
  const rows = ["ok", "key_echo_401", "bash_env"].map((f) => ({
    prompt: `fault:${f}`,
    answer: "yes",
  }));
  writeFileSync(join(root, "tasks.jsonl"), rows.map((r) => JSON.stringify(r)).join("\n") + "\n");
  writeFileSync(
    join(root, "agent.mjs"),
    `
import OpenAI from ${JSON.stringify(OPENAI_URL)};
import { readFileSync, writeFileSync } from "node:fs";
writeFileSync(process.env.VF_ENV_DUMP, JSON.stringify(process.env));
const env = process.env;
const client = new OpenAI({ baseURL: env.OPENAI_BASE_URL, apiKey: env.OPENAI_API_KEY, maxRetries: 0 });
const messages = JSON.parse(readFileSync(env.VF_MESSAGES_FILE, "utf8"));
try {
  await client.chat.completions.create({ model: env.OPENAI_MODEL, messages });
} catch (e) {
  console.log(String(e));
}
// a failing program: its output tail (its whole environment) goes into the harness error
console.log(JSON.stringify(process.env));
process.exit(3);
`,
  );
});
after(async () => {
  await server.close();
  rmSync(root, { recursive: true, force: true });
});

function assertNoSecret(text: string, where: string, except: string[] = []): void {
  for (const secret of ALL_SECRETS) {
    if (except.includes(secret)) continue;
    assert.ok(!text.includes(secret), `${secret} found in ${where}`);
  }
}

describe("secrets", () => {
  for (const harness of ["null", "bash", "command"]) {
    it(`${harness}: no credential in any file, log, output or the agent's environment`, async () => {
      const work = mkdtempSync(join(root, `${harness}-`));
      const cache = join(work, "cache");
      mkdirSync(cache);
      const dump = join(work, "agent-env.txt");
      const url = new URL(server.url);
      url.username = "user";
      url.password = URL_PASSWORD;
      const judges = [{
        id: "reference",
        base_url: server.url,
        api_key_var: "VF_JUDGE_TOKEN",
        model: "judge-model",
      }];
      const args = [
        "eval",
        "jsonl",
        "--env.taskset.path",
        join(root, "tasks.jsonl"),
        "--env.taskset.task.judges",
        JSON.stringify(judges),
        "--env.agent.harness.id",
        harness,
        ...(harness === "command"
          ? ["--env.agent.harness.command", JSON.stringify(["node", join(root, "agent.mjs")])]
          : []),
        "--env.agent.harness.env",
        JSON.stringify({ VF_ENV_DUMP: dump }),
        "--env.agent.harness.forward-env",
        JSON.stringify([FORWARDED.name]),
        "-m",
        "secret-model",
        "--client.base-url",
        url.toString(),
        "--client.api-key-var",
        "VF_MODEL_TOKEN",
        "--client.headers",
        JSON.stringify({ "x-api-key": HEADER_VALUE }),
        "--client.stall-timeout",
        "5",
        "-o",
        join(work, "out"),
        "-v",
        "--display",
        "plain",
        "--fail-on-error",
        "100",
      ];
      const result = await runCli(args, {
        cwd: work,
        env: { ...SECRET_VARS, [FORWARDED.name]: FORWARDED.value, VF_CACHE_DIR: cache },
        timeoutMs: 120_000,
      });
      assert.equal(result.code, 0, result.stderr);
      // the provider saw the model's key (and echoed it back in the 401)
      assert.ok(server.requests.some((r) => r.token === SECRET_VARS.VF_MODEL_TOKEN));
      assertNoSecret(result.stdout, "stdout");
      assertNoSecret(result.stderr, "stderr");
      const files = [...filesUnder(join(work, "out")), ...filesUnder(cache)];
      assert.ok(files.some((f) => f.endsWith("traces.jsonl")));
      for (const file of files) assertNoSecret(readFileSync(file, "utf8"), file);

      const runDir = at(readdirSync(join(work, "out")), 0);
      const saved = JSON.parse(
        readFileSync(join(work, "out", runDir, "configs", "eval.json"), "utf8"),
      );
      assert.deepEqual(saved.client.headers, { "x-api-key": "***" }, "header names kept");
      assert.equal(new URL(saved.client.base_url).username, "***");
      assert.equal(saved.client.api_key_var, "VF_MODEL_TOKEN");
      const traces = readFileSync(join(work, "out", runDir, "traces.jsonl"), "utf8");
      assert.match(traces, /Incorrect API key provided: \*\*\*/, "the echoed key is scrubbed");

      if (harness !== "null") {
        // the agent ran: its environment has the forwarded variable and nothing else secret
        assert.ok(existsSync(dump), "the agent dumped its environment");
        const agentEnv = readFileSync(dump, "utf8");
        assertNoSecret(agentEnv, "the agent's environment", [FORWARDED.value]);
        assert.ok(agentEnv.includes(FORWARDED.value), "forward_env reaches the agent");
      }
    });
  }
});

describe("a resume of a run whose secrets were masked", () => {
  it("asks for the masked header and URL again, then resumes", async () => {
    const work = mkdtempSync(join(root, "resume-"));
    const url = new URL(server.url);
    url.username = "user";
    url.password = URL_PASSWORD;
    const secretFlags = [
      "--client.headers",
      JSON.stringify({ "x-api-key": HEADER_VALUE }),
      "--client.base-url",
      url.toString(),
    ];
    const first = await run([
      "jsonl",
      "--env.taskset.path",
      join(root, "tasks.jsonl"),
      "--env.agent.harness.id",
      "null",
      "-m",
      "m",
      ...secretFlags,
      "-o",
      work,
    ], work);
    await assert.rejects(
      run(["--resume", first.runDir], work),
      (err: unknown) =>
        err instanceof InputError && err.code === "resume_secrets_masked" &&
        err.message.includes("`client.headers.x-api-key`") &&
        err.message.includes("`client.base_url`"),
    );
    const again = await run(["--resume", first.runDir, ...secretFlags], work);
    assert.equal(again.runDir, first.runDir);
    assert.equal(again.summary.counts.episodes, 3);
  });
});

describe("the redaction module", () => {
  // every test starts and ends with no secret registered
  beforeEach(() => clearSecretsForTests());
  afterEach(() => clearSecretsForTests());

  it("scrubs raw, JSON-escaped and URL-encoded forms; skips values too short to be keys", () => {
    addSecret('sec"ret/value+1');
    addSecret("short");
    assert.equal(redact('a sec"ret/value+1 b'), "a *** b");
    assert.equal(redact(JSON.stringify({ k: 'sec"ret/value+1' })), '{"k":"***"}');
    assert.equal(redact(`?k=${encodeURIComponent('sec"ret/value+1')}`), "?k=***");
    assert.equal(redact("a short word"), "a short word");
  });

  it("scrubs a secret as the JSON writers of Python, PHP and Go escape it in a body", () => {
    addSecret("abc/Def&<x>é-123");
    const written = [
      "abc/Def&<x>\\u00e9-123", // Python json.dumps (ensure_ascii)
      "abc\\/Def&<x>\\u00e9-123", // PHP json_encode
      "abc/Def\\u0026\\u003cx\\u003eé-123", // Go encoding/json
      "abc/Def&<x>é-123", // JSON.stringify, Rust serde_json
    ];
    for (const form of written) {
      assert.equal(redact(`{"error":"bad key ${form}."}`), '{"error":"bad key ***."}', form);
    }
  });

  it("masks the whole stretch where secrets overlap, and matches their characters literally", () => {
    addSecret("abcdefgh1234");
    addSecret("1234wxyz5678");
    // one ends inside the other: no part of either is left
    assert.equal(redact("x abcdefgh1234wxyz5678 y"), "x *** y");
    // side by side, each is masked
    assert.equal(redact("abcdefgh1234|1234wxyz5678"), "***|***");
    assert.equal(redact("abcdefgh12341234wxyz5678."), "******.");
    const special = "k.y*(a|b)[c]{2}^$\\end";
    addSecret(special);
    assert.equal(redact(`<${special}>`), "<***>");
    assert.equal(redact("kXy*(a|b)[c]{2}^$\\end kyy"), "kXy*(a|b)[c]{2}^$\\end kyy");
    assert.equal(redact(JSON.stringify({ k: special })), '{"k":"***"}');
  });

  it("masks each of many secrets wherever it occurs and leaves clean text as it is", () => {
    const secrets = Array.from({ length: 10 }, (_, i) => `tok-${i}-${"q".repeat(i + 8)}/+`);
    for (const v of secrets) addSecret(v);
    const clean = JSON.stringify({ note: "nothing here", n: [1, 2, 3] });
    assert.equal(redact(clean), clean);
    const dirty = secrets.map((v, i) => `${i}:${v};${encodeURIComponent(v)}`).join(" ");
    const masked = secrets.map((_, i) => `${i}:***;***`).join(" ");
    assert.equal(redact(dirty), masked);
  });

  it("masks a hundred secrets of 100 KB each", () => {
    // 20 MB of forms: V8 and JavaScriptCore both refused one pattern of them whole; the
    // one-pass pattern holds their starts only
    const secrets = Array.from({ length: 100 }, (_, i) => `key-${i}-${"a.b+c".repeat(20_000)}`);
    for (const v of secrets) addSecret(v);
    assert.equal(redact("nothing to see"), "nothing to see");
    assert.equal(redact(`x ${secrets[0]} y ${secrets[99]} z`), "x *** y *** z");
    assert.equal(redact(`q=${encodeURIComponent(secrets[50]!)}`), "q=***");
  });

  it("never spells a secret in its one-pass pattern, which a Bun CPU profile names", async () => {
    // ten keys as a user has them and a short password; the script reads them from its
    // environment
    const keys = Array.from(
      { length: 10 },
      (_, i) => `${["sk-", "hf_", "ghp_", "pk-", ""][i % 5]}${i}Zq8vN2mXc4LbT7yHw1RpKs9dFgE3x${i}`,
    );
    const password = "Pw7xQ2vLm9";
    const dir = mkdtempSync(join(root, "profile-"));
    const script = join(dir, "scrub.ts");
    writeFileSync(
      script,
      `const { addSecret, redact } = await import(${JSON.stringify(SECRETS_MODULE)});
for (const key of JSON.parse(process.env.SCRUB_KEYS)) addSecret(key);
addSecret(process.env.SCRUB_PASSWORD);
const reply = "She sells sea shells; the \\"skipper\\" skims past,\\nasks and smiles. ".repeat(400);
const lines = Array.from({ length: 8 }, (_, i) => JSON.stringify({ i, content: reply }));
let kept = 0;
for (let i = 0; i < 20_000; i++) kept += redact(lines[i % 8]).length;
if (kept === 0) process.exit(1);
`,
    );
    const result = await runProcess(
      join(TOOL_BIN, "bun"),
      ["--cpu-prof", "--cpu-prof-dir", dir, script],
      { env: { SCRUB_KEYS: JSON.stringify(keys), SCRUB_PASSWORD: password }, timeoutMs: 60_000 },
    );
    assert.equal(result.code, 0, result.stderr);
    const profileFile = readdirSync(dir).find((f) => f.endsWith(".cpuprofile"));
    assert.ok(profileFile, "bun wrote a CPU profile");
    const text = readFileSync(join(dir, profileFile), "utf8");
    const names: string[] = JSON.parse(text).nodes.map(
      (n: { callFrame: { functionName: string } }) => n.callFrame.functionName,
    );
    // the profile names the pattern by its source (else this test would show nothing)
    assert.ok(names.some((n) => n.startsWith("/") && n.includes(keys[0]!.slice(0, 6))));
    for (const key of keys) {
      assert.equal(text.includes(key.slice(6)), false, `${key} in the profile`);
    }
    // of a secret this short, no more than half
    assert.equal(text.includes(password.slice(0, 6)), false, "more than half the password");
  });

  it("keeps registered secrets out of the sandbox ledger", () => {
    const saved = process.env.VF_CACHE_DIR;
    process.env.VF_CACHE_DIR = mkdtempSync(join(root, "ledger-"));
    try {
      addSecret(SECRET_VARS.PRIME_API_KEY);
      recordSandbox({
        provider: "prime",
        id: "sbx-1",
        created_at: "2026-01-01T00:00:00Z",
        config: { base_url: `https://x.invalid/?key=${SECRET_VARS.PRIME_API_KEY}` },
      });
      const files = filesUnder(ledgerDir());
      assert.equal(files.length, 1);
      const text = readFileSync(at(files, 0), "utf8");
      assert.ok(!text.includes(SECRET_VARS.PRIME_API_KEY));
      assert.ok(text.includes("sbx-1"));
    } finally {
      if (saved === undefined) delete process.env.VF_CACHE_DIR;
      else process.env.VF_CACHE_DIR = saved;
    }
  });

  it("masks URL userinfo and recognises credential variable names", () => {
    assert.equal(maskUrl("http://u:p@h.example/v1"), "http://***@h.example/v1");
    assert.equal(maskUrl("http://h.example/v1"), "http://h.example/v1");
    for (const n of ["GITHUB_TOKEN", "AWS_SECRET_ACCESS_KEY", "HF_TOKEN", "DB_PASSWORD"]) {
      assert.equal(isCredentialName(n), true, n);
    }
    for (const n of ["PATH", "HOME", "SSH_KEY_PATH", "TOKENIZER_NAME"]) {
      assert.equal(isCredentialName(n), false, n);
    }
  });
});
