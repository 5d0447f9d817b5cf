/**
 * The request-level parity table of our Prime client against the official SDK
 * (`packages/prime-sandboxes/src/prime_sandboxes/sandbox.py@66fb4b70`,
 * `core/client.py@66fb4b70`): for every operation our runtime uses, the method, path and
 * body fields it sends, and for each failure the service can give whether it is retried.
 * Each row is driven against the Prime fake; each failure is injected once and the
 * client's attempts are counted as they leave it (retried = 2 attempts, else 1). A change
 * on either side of the table fails here.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { type PrimeFake, type PrimeRequestKind, startPrimeFake } from "./fakes/prime_server.ts";
import { PrimeClient } from "../plugins/runtimes/prime/client.ts";
import { at } from "./_assert.ts";

/** A failure injected once: an HTTP status, a disconnect before the answer, a body cut off. */
type Failure = 408 | 500 | 501 | 502 | 503 | 504 | 524 | "disconnect" | "cut";
const FAILURES: Failure[] = [408, 500, 501, 502, 503, 504, 524, "disconnect", "cut"];

/** What a request carries besides its path. */
type Body =
  | { json: string[] }
  | { none: true }
  | { query: string[]; multipart?: string }
  | { connect: "start" | "unary" };

interface Row {
  /** Our client's call. */
  op: string;
  /** The SDK call it mirrors. */
  sdk: string;
  kind: PrimeRequestKind;
  method: "GET" | "POST" | "DELETE";
  path: RegExp;
  body: Body;
  /** Failures retried (once each here); every other one is not. */
  retried: Failure[];
  /** Runs the call on sandbox `id` (`vm`: a VM sandbox). */
  run(c: PrimeClient, s: { id: string; vm: string; fresh(): Promise<string> }): Promise<unknown>;
}

const IDEMPOTENT: Failure[] = [502, 503, 504, "disconnect", "cut"];
const GATEWAY_5XX: Failure[] = [500, 502, 503, 504, 524];

const TABLE: Row[] = [
  {
    op: "createSandbox",
    sdk: "create (idempotent_post)",
    kind: "create",
    method: "POST",
    path: /^\/api\/v1\/sandbox$/,
    body: { json: ["docker_image", "idempotency_key", "name"] },
    retried: IDEMPOTENT,
    run: (c) => c.createSandbox({ name: "table", docker_image: "img" }),
  },
  {
    op: "getSandbox",
    sdk: "get",
    kind: "get",
    method: "GET",
    path: /^\/api\/v1\/sandbox\/[^/]+$/,
    body: { none: true },
    retried: IDEMPOTENT,
    run: (c, s) => c.getSandbox(s.id),
  },
  {
    op: "batchStatus",
    sdk: "get_sandbox_statuses (idempotent_post)",
    kind: "batch",
    method: "POST",
    path: /^\/api\/v1\/sandbox\/status:batchGet$/,
    body: { json: ["sandbox_ids"] },
    retried: IDEMPOTENT,
    run: (c, s) => c.batchStatus([s.id]),
  },
  {
    op: "deleteSandbox",
    sdk: "delete",
    kind: "delete",
    method: "DELETE",
    path: /^\/api\/v1\/sandbox\/[^/]+$/,
    body: { none: true },
    retried: IDEMPOTENT,
    run: async (c, s) => c.deleteSandbox(await s.fresh()),
  },
  {
    op: "errorContext",
    sdk: "_get_sandbox_error_context",
    kind: "error-context",
    method: "GET",
    path: /^\/api\/v1\/sandbox\/[^/]+\/error-context$/,
    body: { none: true },
    retried: IDEMPOTENT,
    run: (c, s) => c.errorContext(s.id),
  },
  {
    op: "auth",
    sdk: "SandboxAuthCache.get_or_refresh (idempotent_post)",
    kind: "auth",
    method: "POST",
    path: /^\/api\/v1\/sandbox\/[^/]+\/auth$/,
    body: { none: true },
    retried: IDEMPOTENT,
    run: (c, s) => c.auth(s.id, { force: true }),
  },
  {
    op: "expose",
    sdk: "expose",
    kind: "expose",
    method: "POST",
    path: /^\/api\/v1\/sandbox\/[^/]+\/expose$/,
    body: { json: ["port", "protocol"] },
    retried: ["disconnect"],
    run: (c, s) => c.expose(s.id, 8080),
  },
  {
    op: "exec (container)",
    sdk: "_execute_command_rest (_gateway_post)",
    kind: "exec",
    method: "POST",
    path: /^\/gw\/[^/]+\/[^/]+\/exec$/,
    body: { json: ["command", "env", "sandbox_id", "timeout", "working_dir"] },
    retried: ["disconnect"],
    run: (c, s) => c.exec(s.id, "true"),
  },
  {
    op: "upload",
    sdk: "upload_bytes (_gateway_post, _should_retry_upload_error)",
    kind: "upload",
    method: "POST",
    path: /^\/gw\/[^/]+\/[^/]+\/upload$/,
    body: { query: ["path", "sandbox_id"], multipart: "file" },
    retried: [408, ...GATEWAY_5XX, "disconnect"],
    run: (c, s) => c.upload(s.id, "/tmp/table.txt", new TextEncoder().encode("table row\n")),
  },
  {
    op: "download",
    sdk: "download_file (_gateway_get)",
    kind: "download",
    method: "GET",
    path: /^\/gw\/[^/]+\/[^/]+\/download$/,
    body: { query: ["path", "sandbox_id"] },
    retried: [...GATEWAY_5XX, "disconnect", "cut"],
    run: (c, s) => c.download(s.id, "/tmp/table.txt"),
  },
  {
    op: "readFile",
    sdk: "read_file (_gateway_read_file_get)",
    kind: "read-file",
    method: "GET",
    path: /^\/gw\/[^/]+\/[^/]+\/read-file$/,
    body: { query: ["path"] },
    retried: [408, ...GATEWAY_5XX, "disconnect", "cut"],
    run: (c, s) => c.readFile(s.id, "/tmp/table.txt"),
  },
  {
    op: "exec (VM)",
    sdk: "_execute_command_connect_rpc (connectrpc, no retries)",
    kind: "connect-start",
    method: "POST",
    path: /^\/gw\/[^/]+\/[^/]+\/command_session\.CommandSession\/Start$/,
    body: { connect: "start" },
    retried: [],
    run: (c, s) => c.exec(s.vm, "true"),
  },
  {
    op: "sendSignal",
    sdk: "_execute_process_control_rpc (connectrpc, no retries)",
    kind: "connect-send-signal",
    method: "POST",
    path: /^\/gw\/[^/]+\/[^/]+\/command_session\.CommandSession\/SendSignal$/,
    body: { connect: "unary" },
    retried: [],
    run: (c, s) => c.sendSignal(s.vm, 999_999, 15),
  },
];

let fake: PrimeFake;
const urls: string[] = [];
let client: PrimeClient;
const sandbox = { id: "", vm: "", fresh: () => Promise.resolve("") };

before(async () => {
  fake = await startPrimeFake({ keepAlive: false });
  client = new PrimeClient({ baseUrl: fake.url, apiKey: fake.apiKey, teamId: null }, {
    backoffScale: 0.001,
    // attempts are counted as they leave the client (a runtime's fetch may resend a
    // request on a pooled connection by itself; the server would count that too)
    fetch: (input, init) => {
      urls.push(`${init?.method ?? "GET"} ${new URL(input).pathname}`);
      return fetch(input, init);
    },
  });
  const make = async (vm: boolean) => {
    const rec = await client.createSandbox({
      name: "table",
      docker_image: "img",
      vm,
      timeout_minutes: 600,
    });
    await client.getSandbox(rec.id);
    return rec.id;
  };
  sandbox.id = await make(false);
  sandbox.vm = await make(true);
  sandbox.fresh = () => make(false);
  await client.exec(sandbox.id, "echo t > /tmp/table.txt");
  await client.auth(sandbox.vm);
});

after(async () => {
  client.close();
  await fake.close();
});

function faultFor(row: Row, failure: Failure) {
  if (failure === "disconnect") return { kind: row.kind, reset: true };
  if (failure === "cut") return { kind: row.kind, readError: true };
  return { kind: row.kind, respond: { status: failure, body: { detail: `injected ${failure}` } } };
}

describe("Prime request parity table (SDK 66fb4b70)", () => {
  for (const row of TABLE) {
    it(`${row.op} ~ ${row.sdk}: ${row.method} ${row.path.source}`, async () => {
      const mark = fake.requests.length;
      await row.run(client, sandbox).catch(() => {}); // sendSignal to no process rejects
      const sent = fake.requests.slice(mark).filter((r) => r.kind === row.kind);
      assert.equal(sent.length, 1, "one request when nothing fails");
      const req = at(sent, 0);
      assert.equal(req.method, row.method);
      assert.match(req.path, row.path);
      const b = row.body;
      if ("json" in b) {
        assert.equal(req.headers["content-type"], "application/json");
        assert.deepEqual(Object.keys(req.json as object).sort(), b.json);
      } else if ("none" in b) {
        assert.equal(req.bodyBytes, 0);
        assert.deepEqual(req.query, {});
      } else if ("query" in b) {
        assert.deepEqual(Object.keys(req.query).sort(), b.query);
        if (b.multipart) {
          assert.match(req.headers["content-type"] ?? "", /^multipart\/form-data; boundary=/);
        } else assert.equal(req.bodyBytes, 0);
      } else if (b.connect === "start") {
        assert.equal(req.headers["content-type"], "application/connect+proto");
        assert.equal(req.headers["connect-protocol-version"], "1");
        assert.equal(req.connectStdin, false);
      } else {
        assert.equal(req.headers["content-type"], "application/proto");
      }
    });

    it(`${row.op}: retried on ${row.retried.join(", ") || "nothing"}; not on the rest`, async () => {
      const seen: string[] = [];
      for (const failure of FAILURES) {
        fake.clearFaults();
        fake.fault(faultFor(row, failure));
        const before = urls.length;
        await row.run(client, sandbox).catch(() => {});
        fake.clearFaults();
        const attempts = urls.slice(before).filter((u) => {
          const [method, path = ""] = u.split(" ");
          return method === row.method && row.path.test(path);
        }).length;
        seen.push(`${failure}:${attempts}`);
      }
      assert.deepEqual(
        seen,
        FAILURES.map((f) => `${f}:${row.retried.includes(f) ? 2 : 1}`),
      );
    });
  }
});
