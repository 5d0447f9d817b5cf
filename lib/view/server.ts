/**
 * The `vf view` server: the page and a small JSON API over the runs' indexes, on
 * 127.0.0.1 only. Every API request first reads what was appended to the runs since the
 * last one, so a page polling `/api/state` follows a run that is still being written.
 *
 * - `GET /` the page
 * - `GET /api/state` `{ versions }`, one number per run, bumped on every change
 * - `GET /api/runs/<r>` the run's {@link RunView}
 * - `GET /api/runs/<r>/episodes?task=<key>|error=<type>` list items
 * - `GET /api/runs/<r>/episodes/<i>` episode `i`'s JSON line as written
 *
 * Requests whose Host is not this loopback address are refused (DNS rebinding).
 *
 * @module
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { pageHtml } from "./page.ts";
import type { RunIndex } from "./run_index.ts";
import { episodeItems, runView } from "./run_view.ts";

/** A running viewer server. */
export interface ViewServer {
  /** `http://127.0.0.1:<port>/`. */
  url: string;
  port: number;
  /** Stops accepting requests and closes open connections. */
  close(): Promise<void>;
}

function send(
  res: http.ServerResponse,
  status: number,
  type: string,
  body: string,
): void {
  res.writeHead(status, {
    "content-type": type,
    "cache-control": "no-store",
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
  });
  res.end(body);
}

const sendJson = (res: http.ServerResponse, value: unknown) =>
  send(res, 200, "application/json; charset=utf-8", JSON.stringify(value));

/** Serves `runs` on 127.0.0.1 at `port` (0: the OS chooses). */
export function serveRuns(runs: RunIndex[], port = 0): Promise<ViewServer> {
  const page = pageHtml({ mode: "server", runCount: runs.length });
  let allowedHosts = new Set<string>();
  /** The last view's JSON per run, reused while the run's version is unchanged. */
  const viewCache = new Map<RunIndex, { version: number; json: string }>();
  const server = http.createServer((req, res) => {
    try {
      if (!allowedHosts.has(String(req.headers.host ?? ""))) {
        return send(res, 421, "text/plain; charset=utf-8", "wrong host\n");
      }
      if (req.method !== "GET" && req.method !== "HEAD") {
        return send(res, 405, "text/plain; charset=utf-8", "method not allowed\n");
      }
      const url = new URL(req.url ?? "/", "http://127.0.0.1");
      const path = url.pathname;
      if (path === "/" || path === "/index.html") {
        return send(res, 200, "text/html; charset=utf-8", page);
      }
      if (path === "/api/state") {
        for (const r of runs) r.refresh();
        return sendJson(res, { versions: runs.map((r) => r.version) });
      }
      const m = /^\/api\/runs\/(\d+)(?:\/episodes(?:\/(\d+))?)?$/.exec(path);
      const run = m ? runs[Number(m[1])] : undefined;
      if (!m || !run) return send(res, 404, "text/plain; charset=utf-8", "not found\n");
      run.refresh();
      if (m[2] !== undefined) {
        const text = run.episodeText(Number(m[2]));
        if (text === null) return send(res, 404, "text/plain; charset=utf-8", "no such episode\n");
        return send(res, 200, "application/json; charset=utf-8", text);
      }
      if (path.endsWith("/episodes")) {
        return sendJson(
          res,
          episodeItems(run.rows, {
            task: url.searchParams.get("task"),
            error: url.searchParams.get("error"),
          }),
        );
      }
      let cached = viewCache.get(run);
      if (cached?.version !== run.version) {
        cached = { version: run.version, json: JSON.stringify(runView(run)) };
        viewCache.set(run, cached);
      }
      return send(res, 200, "application/json; charset=utf-8", cached.json);
    } catch (e) {
      send(res, 500, "text/plain; charset=utf-8", `${e instanceof Error ? e.message : e}\n`);
    }
  });
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => {
      const actual = (server.address() as AddressInfo).port;
      allowedHosts = new Set([`127.0.0.1:${actual}`, `localhost:${actual}`]);
      resolve({
        url: `http://127.0.0.1:${actual}/`,
        port: actual,
        close: () =>
          new Promise<void>((done) => {
            server.close(() => done());
            (server as { closeAllConnections?: () => void }).closeAllConnections?.();
          }),
      });
    });
  });
}
