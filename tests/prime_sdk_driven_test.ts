/**
 * The official Prime SDK (`prime_sandboxes`, Python) as the judge of our Prime fake: the
 * SDK's async client runs a sandbox's life against the fake (create, wait, exec, cwd/env,
 * upload, read-file windows, a missing file, download, a background job polled through
 * read-file 404s, a command timeout, expose, batch status, delete, a deleted sandbox, a
 * sandbox that dies of OOM after RUNNING, 409s ridden out through /error-context) and
 * every outcome must be the one the SDK's code gives for the real service.
 *
 * The SDK is looked up as an installed package, or as a source tree named by
 * PRIME_SDK_SRC (the directory holding `prime_sandboxes`, e.g.
 * `<PrimeIntellect-ai/prime checkout>/packages/prime-sandboxes/src`). Its HTTP paths need
 * httpx, tenacity, aiofiles and pydantic 2; Debian's python3-httpx/-tenacity/-aiofiles
 * are found under /usr/lib/python3/dist-packages. Its VM paths need connectrpc, pyqwest
 * and protobuf >= 6: where missing, the driver (tests/fixtures/prime_sdk/driver.py) puts
 * import-only stand-ins in their place and drives the HTTP paths only. Without the SDK or
 * its HTTP dependencies the test is skipped, saying why.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { execFile, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import process from "node:process";
import { promisify } from "node:util";
import { type PrimeFake, startPrimeFake } from "./fakes/prime_server.ts";

const DRIVER = join(import.meta.dirname!, "fixtures", "prime_sdk", "driver.py");
const DEBIAN_PACKAGES = "/usr/lib/python3/dist-packages";

/** PYTHONPATH with the SDK source, if named, and `extra` directories last. */
function pythonPath(extra: string[] = []): string {
  const parts = [process.env.PRIME_SDK_SRC, process.env.PYTHONPATH, ...extra];
  return parts.filter((p): p is string => !!p).join(delimiter);
}

/** The modules the SDK needs that python3 cannot find with `path` (or why python3 failed). */
function missingModules(path: string): string {
  const probe = spawnSync("python3", [
    "-c",
    "import importlib.util as u\n" +
    "print(' '.join(m for m in ('httpx', 'tenacity', 'aiofiles', 'pydantic', 'prime_sandboxes') if u.find_spec(m) is None))",
  ], { env: { ...process.env, PYTHONPATH: path }, encoding: "utf8" });
  if (probe.error || probe.status !== 0) {
    return `python3 did not run (${probe.error ?? probe.stderr})`;
  }
  return probe.stdout.trim();
}

/**
 * The PYTHONPATH the SDK runs with: Debian's dist-packages are added (last) only when the
 * interpreter lacks the modules otherwise, so installed newer versions win.
 */
function sdkPath(): { path: string; missing: string } {
  const plain = pythonPath();
  const missing = missingModules(plain);
  if (!missing || !existsSync(DEBIAN_PACKAGES)) return { path: plain, missing };
  const withDebian = pythonPath([DEBIAN_PACKAGES]);
  return { path: withDebian, missing: missingModules(withDebian) };
}

const SDK = sdkPath();

/** Why the SDK cannot run here, or null when it can. */
function unavailable(): string | null {
  if (!SDK.missing) return null;
  return `Python modules missing: ${SDK.missing} (set PRIME_SDK_SRC to the SDK's src directory; apt-get install python3-httpx python3-tenacity python3-aiofiles)`;
}

const skip = unavailable();
if (skip) console.warn(`prime_sdk_driven_test: SKIPPED: ${skip}`);

interface Step {
  step: string;
  ok?: boolean;
  error?: string;
  message?: string;
  [k: string]: unknown;
}

describe("the official Prime SDK against our Prime fake", () => {
  let fake: PrimeFake;
  let home = "";
  let steps = new Map<string, Step>();
  let stderr = "";

  before(async () => {
    if (skip) return;
    fake = await startPrimeFake({ dieAfterRunning: { "oom:sdk": "OOM_KILLED" } });
    home = mkdtempSync(join(tmpdir(), "vf-prime-sdk-home-"));
    // two 409s on one read: the SDK asks /error-context (RUNNING) and retries
    fake.fault({
      kind: "read-file",
      path: /sdk\.txt/,
      respond: { status: 409, body: { detail: "Sandbox gateway busy" } },
      times: 2,
    });
    try {
      const { stdout, stderr: err } = await promisify(execFile)("python3", [DRIVER], {
        env: {
          PATH: process.env.PATH ?? "",
          HOME: home,
          PYTHONPATH: SDK.path,
          PRIME_API_BASE_URL: fake.url,
          PRIME_API_KEY: fake.apiKey,
        },
        timeout: 120_000,
      });
      stderr = err;
      steps = new Map(
        stdout.trim().split("\n").map((l) => JSON.parse(l) as Step).map((s) => [s.step, s]),
      );
    } catch (e) {
      const x = e as { stdout?: string; stderr?: string };
      stderr = `${x.stderr ?? ""}`;
      steps = new Map(
        (x.stdout ?? "").trim().split("\n").filter(Boolean).map((l) => JSON.parse(l) as Step)
          .map((s) => [s.step, s]),
      );
    }
  });

  after(async () => {
    if (skip) return;
    await fake.close();
    rmSync(home, { recursive: true, force: true });
  });

  const step = (name: string): Step => {
    const s = steps.get(name);
    assert.ok(s, `the SDK never reached "${name}"; stderr: ${stderr.slice(-2000)}`);
    return s;
  };

  it("runs a sandbox's whole life to the end", { skip: skip ?? false }, () => {
    assert.equal(step("import").ok, true);
    assert.equal(step("create").status, "PENDING");
    assert.equal(step("wait_for_creation").ok, true);
    assert.ok(steps.has("done"), stderr.slice(-2000));
  });

  it("commands: output, exit code, cwd, env, and a timeout", { skip: skip ?? false }, () => {
    assert.deepEqual(
      { ...step("execute_command") },
      { step: "execute_command", ok: true, stdout: "hello\n", stderr: "err\n", exit_code: 3 },
    );
    assert.equal(step("execute_command_cwd_env").stdout, "/tmp\nhi\n");
    assert.equal(step("timeout").error, "CommandTimeoutError");
  });

  it("files: upload, read-file (ridden through two 409s), windows, download", {
    skip: skip ?? false,
  }, () => {
    assert.equal(step("upload_bytes").path, "/tmp/sdk.txt");
    assert.equal(step("read_file").content, "from the sdk\n");
    const reads = fake.requests.filter((r) =>
      r.kind === "error-context" || (r.kind === "read-file" && r.query.path === "/tmp/sdk.txt")
    );
    assert.deepEqual(
      reads.slice(0, 5).map((r) => r.kind),
      ["read-file", "error-context", "read-file", "error-context", "read-file"],
      "each 409 asks /error-context, then the read is retried",
    );
    const w = step("read_file_window");
    assert.deepEqual([w.content, w.offset, w.total_size, w.truncated], ["sdk\n", 9, 13, true]);
    assert.equal(step("download_file").content, "from the sdk\n");
  });

  it("a missing file: read-file's 404 (error-code body) is SandboxFileNotFoundError", {
    skip: skip ?? false,
  }, () => {
    assert.equal(step("read_file_missing").error, "SandboxFileNotFoundError");
    assert.equal(step("download_missing").error, "APIError");
    assert.match(step("download_missing").message ?? "", /HTTP 404/);
  });

  it("a background job is polled through read-file 404s until it exits", {
    skip: skip ?? false,
  }, () => {
    const job = step("background_job");
    assert.deepEqual([job.ok, job.exit_code, job.stdout], [true, 4, "bg\n"]);
  });

  it("expose, batch status, delete, and a deleted sandbox", { skip: skip ?? false }, () => {
    assert.match(String(step("expose").url), /^https:\/\//);
    assert.deepEqual(step("status_batch").statuses, ["RUNNING"]);
    assert.equal(step("delete").ok, true);
    assert.equal(step("get_deleted").error, "APIError");
    assert.match(step("get_deleted").message ?? "", /HTTP 404/);
    assert.equal(step("execute_deleted").error, "SandboxNotRunningError");
    assert.match(step("execute_deleted").message ?? "", /no longer running/);
  });

  it("a sandbox that dies of OOM after RUNNING is SandboxOOMError", { skip: skip ?? false }, () => {
    assert.equal(step("wait_oom").error, "SandboxOOMError");
    assert.match(step("wait_oom").message ?? "", /OOM_KILLED/);
  });
});
