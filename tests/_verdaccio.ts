/**
 * A real npm registry server for tests: Verdaccio (a pinned devDependency) started on
 * 127.0.0.1 with no uplink, its storage and users in a temp directory. Packages are
 * published to it with `npm publish`, as their authors would.
 *
 * ```ts
 * const reg = await startVerdaccio();
 * await reg.publish({ "package.json": "...", "index.js": "..." });
 * // reg.url, reg.npmrc (a .npmrc with the test user's token), reg.requests()
 * await reg.close();
 * ```
 *
 * Packages under `@private/` need a logged-in user (the token in `npmrc`); every other
 * package is readable by anyone.
 *
 * @module
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import process from "node:process";
import { ROOT, runProgram } from "./_plugin_package.ts";

/** A running Verdaccio. */
export interface Verdaccio {
  /** Base URL, ending in `/`. */
  url: string;
  /** The test user's token. */
  token: string;
  /** `.npmrc` text that authenticates to this registry with the token. */
  npmrc: string;
  /** Publishes a package made of `files` (a `package.json` among them) with `npm publish`. */
  publish(files: Record<string, string>, options?: { tag?: string }): Promise<void>;
  /** `METHOD url` of every request the server logged so far. */
  requests(): string[];
  close(): Promise<void>;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.on("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

function config(dir: string): string {
  return `storage: ${join(dir, "storage")}
auth:
  htpasswd:
    file: ${join(dir, "htpasswd")}
    max_users: 100
uplinks: {}
packages:
  '@private/*':
    access: $authenticated
    publish: $authenticated
  '**':
    access: $all
    publish: $authenticated
web:
  enable: false
server:
  keepAliveTimeout: 1
log: { type: stdout, format: json, level: http }
`;
}

/** Starts Verdaccio on a free loopback port and creates a user; resolves once it answers. */
export async function startVerdaccio(): Promise<Verdaccio> {
  const dir = mkdtempSync(join(tmpdir(), "vf-verdaccio-"));
  writeFileSync(join(dir, "config.yaml"), config(dir));
  const port = await freePort();
  const url = `http://127.0.0.1:${port}/`;
  const bin = join(ROOT, "node_modules", "verdaccio", "bin", "verdaccio");
  const child: ChildProcess = spawn(
    process.execPath.endsWith("node") ? process.execPath : "node",
    [bin, "--config", join(dir, "config.yaml"), "--listen", `127.0.0.1:${port}`],
    { cwd: dir, stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, NO_COLOR: "1" } },
  );
  let log = "";
  child.stdout!.setEncoding("utf8").on("data", (d: string) => (log += d));
  child.stderr!.setEncoding("utf8").on("data", (d: string) => (log += d));
  const exited = new Promise<void>((r) => child.once("exit", () => r()));
  const deadline = Date.now() + 90_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`verdaccio exited early:\n${log}`);
    try {
      const res = await fetch(`${url}-/ping`);
      await res.body?.cancel();
      if (res.ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      child.kill("SIGKILL");
      throw new Error(`verdaccio did not start:\n${log}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  // a user, as `npm adduser` makes one
  const res = await fetch(`${url}-/user/org.couchdb.user:tester`, {
    method: "PUT",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ name: "tester", password: "tester-password-1" }),
  });
  const body = await res.json() as { token?: string };
  if (!body.token) throw new Error(`verdaccio refused the user: ${JSON.stringify(body)}`);
  const token = body.token;
  const npmrc = `//127.0.0.1:${port}/:_authToken=${token}\n`;
  const userconfig = join(dir, "publish.npmrc");
  writeFileSync(userconfig, `registry=${url}\n${npmrc}`);
  let n = 0;
  return {
    url,
    token,
    npmrc,
    async publish(files, options = {}) {
      const pkgDir = join(dir, "src", String(n++));
      for (const [rel, text] of Object.entries(files)) {
        mkdirSync(dirname(join(pkgDir, rel)), { recursive: true });
        writeFileSync(join(pkgDir, rel), text);
      }
      const r = await runProgram(
        "npm",
        [
          "publish",
          "--registry",
          url,
          "--userconfig",
          userconfig,
          "--tag",
          options.tag ?? "latest",
          "--ignore-scripts",
          "--no-audit",
          "--no-fund",
        ],
        {
          cwd: pkgDir,
          env: {
            PATH: process.env.PATH ?? "/usr/bin:/bin",
            HOME: dir,
            NO_COLOR: "1",
            NPM_CONFIG_UPDATE_NOTIFIER: "false",
          },
        },
      );
      if (r.code !== 0) throw new Error(`npm publish failed:\n${r.stdout}\n${r.stderr}`);
    },
    requests() {
      const out: string[] = [];
      for (const line of log.split("\n")) {
        if (!line.startsWith("{")) continue;
        try {
          const rec = JSON.parse(line) as { request?: { method?: string; url?: string } };
          if (rec.request?.url) out.push(`${rec.request.method} ${rec.request.url}`);
        } catch {
          // not a log record
        }
      }
      return out;
    },
    async close() {
      if (child.exitCode === null) child.kill("SIGTERM");
      await exited;
    },
  };
}
