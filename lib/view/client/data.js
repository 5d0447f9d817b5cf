// Where the page gets its data: the local `vf view` server (JSON endpoints, episodes read
// by byte offset on demand), or, in a report written by `vf view --out`, the data embedded
// in the file (episode lines gzip-compressed in chunks, each chunk decoded on first use).

/**
 * @typedef {{ task?: string | null, error?: string | null }} EpisodeFilter
 * @typedef {{
 *   live: boolean,
 *   runCount: number,
 *   versions(): Promise<number[]>,
 *   view(run: number): Promise<any>,
 *   episodes(run: number, filter: EpisodeFilter): Promise<any[]>,
 *   episode(run: number, i: number): Promise<any>,
 * }} DataSource
 */

/** @param {string} url */
async function getJson(url) {
  const res = await fetch(url, { cache: "no-store" });
  if (!res.ok) throw new Error(`${url}: ${res.status} ${await res.text()}`);
  return await res.json();
}

/**
 * The server-backed source.
 * @param {number} runCount
 * @returns {DataSource}
 */
export function serverSource(runCount) {
  return {
    live: true,
    runCount,
    versions: async () => (await getJson("api/state")).versions,
    view: (run) => getJson(`api/runs/${run}`),
    episodes: (run, filter) => {
      const q = new URLSearchParams();
      if (filter.task != null) q.set("task", filter.task);
      if (filter.error != null) q.set("error", filter.error);
      return getJson(`api/runs/${run}/episodes?${q}`);
    },
    episode: (run, i) => getJson(`api/runs/${run}/episodes/${i}`),
  };
}

/** @param {string} b64 */
async function gunzip(b64) {
  const bin = atob(b64);
  const bytes = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
  return await new Response(stream).text();
}

/**
 * The source of a self-contained report.
 * @param {{ runs: { view: any, items: any[] }[], chunk: number }} data
 * @param {string[][]} chunks base64 gzip chunks of episode lines, per run
 * @returns {DataSource}
 */
export function embeddedSource(data, chunks) {
  /** @type {Map<string, Promise<string[]>>} */
  const decoded = new Map();
  return {
    live: false,
    runCount: data.runs.length,
    versions: () => Promise.resolve(data.runs.map((r) => r.view.version)),
    view: (run) => Promise.resolve(data.runs[run].view),
    episodes: (run, filter) =>
      Promise.resolve(
        data.runs[run].items.filter((it) =>
          (filter.task == null || it.task === filter.task) &&
          (filter.error == null || (it.errors ?? [it.error]).includes(filter.error))
        ),
      ),
    episode: async (run, i) => {
      const c = Math.floor(i / data.chunk);
      const key = `${run}:${c}`;
      let lines = decoded.get(key);
      if (!lines) {
        const b64 = chunks[run]?.[c];
        if (b64 === undefined) throw new Error(`no episode ${i} in run ${run + 1}`);
        lines = gunzip(b64).then((t) => t.split("\n"));
        decoded.set(key, lines);
      }
      const line = (await lines)[i % data.chunk];
      if (line === undefined) throw new Error(`no episode ${i} in run ${run + 1}`);
      return JSON.parse(line);
    },
  };
}
