// The page of one run: header, reward mean with its confidence interval and histogram,
// errors by type, and the per-task table; plus the episode lists of one task or one error type.

import { cost, facts, fmt, h, href, outcome, pct, seconds, tokens, when } from "./dom.js";
import { dataTable } from "./table.js";

/** What each kind of run is, for its header. */
const KINDS = /** @type {Record<string, string>} */ ({
  eval: "eval run",
  validate: "validate run: gold checks, no model",
  replay: "replay run: saved traces rescored, no sampling",
});

/** @param {any} view @param {number} run */
export function runHeader(view, run) {
  const hd = view.header;
  const kind = view.kind ?? "eval";
  const expected = hd.expected !== null && hd.expected !== hd.episodes ? ` of ${hd.expected}` : "";
  /** @type {[string, unknown][]} */
  const rows = kind === "validate"
    ? [
      ["Taskset", hd.taskset ?? "—"],
      ["Runtime", hd.runtime ?? "—"],
      ["Status", hd.status],
      [
        "Tasks checked",
        `${view.validate.checks.length}${
          view.validate.total !== null ? ` of ${view.validate.total}` : ""
        }`,
      ],
    ]
    : [
      ["Taskset", hd.taskset ?? "—"],
      ["Model", hd.model ?? "—"],
      ["Harness", hd.harness ?? "—"],
      ["Runtime", hd.runtime ?? "—"],
      ["Status", hd.status],
      ["Episodes", `${hd.episodes}${expected}`],
      ["Errored", hd.errored],
      ["Started", when(hd.started)],
      ["Wall time", seconds(hd.wallSeconds)],
      ["Tokens", tokens(hd.tokens)],
      hd.judgeTokens ? ["Judge tokens", tokens(hd.judgeTokens)] : ["", null],
      ["Cost", hd.cost === null ? "not reported" : cost(hd.cost)],
    ];
  return h(
    "section",
    { class: "run-header", "aria-labelledby": `run-title-${run}` },
    h(
      "h2",
      { id: `run-title-${run}` },
      h("a", { href: href({ run }) }, hd.title),
      " ",
      h("span", { class: `badge kind ${kind}`, "data-testid": "run-kind" }, KINDS[kind] ?? kind),
    ),
    facts(rows),
    hd.unreadable
      ? h(
        "p",
        { class: "warn" },
        `${hd.unreadable} line(s) of traces.jsonl are not JSON and were skipped.`,
      )
      : null,
  );
}

/** An SVG histogram with a text alternative. @param {any[]} bins @param {boolean} binary */
function histogramSvg(bins, binary) {
  const W = 420;
  const H = 160;
  const pad = 28;
  const max = Math.max(1, ...bins.map((b) => b.count));
  const bw = (W - pad * 2) / Math.max(1, bins.length);
  const label = (
    /** @type {any} */ b,
  ) => (b.lo === b.hi ? fmt(b.lo) : `${fmt(b.lo, 2)}–${fmt(b.hi, 2)}`);
  const desc = bins.map((b) => `${label(b)}: ${b.count}`).join(", ");
  return h(
    "figure",
    { class: "histogram" },
    h(
      "svg:svg",
      { viewBox: `0 0 ${W} ${H}`, role: "img", "aria-label": `Reward histogram. ${desc}` },
      bins.map((b, i) => {
        const bh = ((H - pad * 2) * b.count) / max;
        const x = pad + i * bw + 2;
        return h(
          "svg:g",
          null,
          h(
            "svg:rect",
            { x, y: H - pad - bh, width: bw - 4, height: bh, class: "bar" },
            h("svg:title", null, `${label(b)}: ${b.count}`),
          ),
          h("svg:text", {
            x: x + (bw - 4) / 2,
            y: H - pad + 14,
            "text-anchor": "middle",
            class: "axis",
          }, label(b)),
          h("svg:text", {
            x: x + (bw - 4) / 2,
            y: H - pad - bh - 4,
            "text-anchor": "middle",
            class: "axis",
          }, b.count),
        );
      }),
      h("svg:line", { x1: pad, x2: W - pad, y1: H - pad, y2: H - pad, class: "axis-line" }),
    ),
    h(
      "figcaption",
      null,
      binary
        ? "Rewards (0/1) of the episodes that did not error"
        : "Rewards of the episodes that did not error",
    ),
  );
}

/** @param {any} view */
function rewardSection(view) {
  const r = view.reward;
  const ci = r.low !== null
    ? `95% CI ${fmt(r.low)} – ${fmt(r.high)} (${
      r.method === "wilson" ? "Wilson" : "Student t"
    }, n = ${r.n})`
    : `n = ${r.n}`;
  return h(
    "section",
    { class: "card", "aria-labelledby": "reward-h" },
    h("h3", { id: "reward-h" }, "Reward"),
    h("p", { class: "big", "data-testid": "reward-mean" }, fmt(r.mean)),
    h("p", null, ci),
    view.rewardAll !== null && view.header.errored
      ? h("p", null, `Mean over all episodes, errored as 0: ${fmt(view.rewardAll)}`)
      : null,
    view.histogram.length
      ? histogramSvg(view.histogram, view.binary)
      : h("p", null, "No rewards yet."),
  );
}

/** @param {any} view @param {number} run */
function errorsSection(view, run) {
  return h(
    "section",
    { class: "card errors", "aria-labelledby": "errors-h" },
    h("h3", { id: "errors-h" }, "Errors"),
    view.errors.length === 0 ? h("p", null, "No errors.") : h(
      "ul",
      { class: "error-groups" },
      view.errors.map((/** @type {any} */ g) =>
        h(
          "li",
          null,
          h("a", { href: href({ run, error: g.type }) }, h("strong", null, g.type)),
          ` × ${g.count}`,
          h(
            "ul",
            null,
            g.messages.slice(0, 5).map((/** @type {any} */ m) =>
              h(
                "li",
                null,
                h("pre", { class: "msg" }, m.message),
                h(
                  "a",
                  { href: href({ run, episode: m.episode }) },
                  `example episode${m.count > 1 ? ` (${m.count} like it)` : ""}`,
                ),
              )
            ),
          ),
        )
      ),
    ),
  );
}

/** @param {any} view @param {number} run */
function taskTable(view, run) {
  const passCols = view.binary
    ? [
      {
        key: "pass1",
        label: "pass@1",
        numeric: true,
        cell: (/** @type {any} */ t) => fmt(t.pass1),
        sort: (/** @type {any} */ t) => t.pass1,
      },
      {
        key: "passN",
        label: "pass@k",
        numeric: true,
        title: "Sort by pass@k (k = rollouts of the task)",
        cell: (/** @type {any} */ t) => t.passN === null ? "—" : `${fmt(t.passN)} (k=${t.n})`,
        sort: (/** @type {any} */ t) => t.passN,
      },
    ]
    : [];
  return dataTable({
    id: `tasks-${run}`,
    caption: "Tasks",
    noun: "tasks",
    rows: view.tasks,
    search: (t) => `${t.key} ${t.label}`,
    initialSort: { key: "mean", dir: 1 },
    choice: {
      label: "Show",
      options: [
        { value: "all", label: "all tasks", test: () => true },
        { value: "failing", label: "not fully solved", test: (t) => t.meanAll < 1 },
        { value: "errors", label: "with errors", test: (t) => t.errors > 0 },
        { value: "solved", label: "fully solved", test: (t) => t.meanAll >= 1 && t.errors === 0 },
      ],
    },
    columns: [
      {
        key: "task",
        label: "Task",
        cell: (t) => h("a", { href: href({ run, task: t.key }), title: t.key }, t.label),
        sort: (t) => t.label,
      },
      { key: "n", label: "Rollouts", numeric: true, cell: (t) => t.n, sort: (t) => t.n },
      {
        key: "mean",
        label: "Mean reward",
        numeric: true,
        cell: (t) => fmt(t.mean),
        sort: (t) => t.mean,
      },
      ...passCols,
      {
        key: "errors",
        label: "Errors",
        numeric: true,
        cell: (t) => t.errors ? h("span", { class: "badge err" }, t.errors) : "0",
        sort: (t) => t.errors,
      },
    ],
  });
}

/**
 * The run's overview page; a replay's adds its score changes against the source run.
 * @param {any} view @param {number} run
 * @param {{ el: HTMLElement, mount(): void, destroy(): void } | null} [extra]
 * @returns {{ el: HTMLElement, mount(): void, destroy(): void }}
 */
export function runPage(view, run, extra = null) {
  const table = taskTable(view, run);
  const el = h(
    "div",
    null,
    runHeader(view, run),
    h("div", { class: "cards" }, rewardSection(view), errorsSection(view, run)),
    extra?.el ?? null,
    h("section", { "aria-labelledby": "tasks-h" }, h("h3", { id: "tasks-h" }, "Tasks"), table.el),
  );
  return {
    el,
    mount: () => {
      extra?.mount();
      table.mount();
    },
    destroy: () => {
      extra?.destroy();
      table.destroy();
    },
  };
}

/**
 * A list of episodes (one task's rollouts, or the episodes with one error type).
 * @param {any} view @param {number} run @param {any[]} items
 * @param {{ title: string, id: string, intro?: unknown }} what
 */
export function episodeListPage(view, run, items, what) {
  const table = dataTable({
    id: what.id,
    caption: what.title,
    noun: "episodes",
    rows: items,
    search: (e) => `${e.id} ${e.label} ${e.errors.join(" ")} ${e.stop ?? ""}`,
    columns: [
      {
        key: "i",
        label: "Episode",
        cell: (e) => h("a", { href: href({ run, episode: e.i }) }, `#${e.i + 1}`),
        sort: (e) => e.i,
      },
      {
        key: "task",
        label: "Task",
        cell: (e) => h("a", { href: href({ run, task: e.task }) }, e.label),
        sort: (e) => e.label,
      },
      {
        key: "ok",
        label: "Outcome",
        cell: (e) => outcome(e.ok, e.ok ? "ok" : e.error ?? "error"),
        sort: (e) => (e.ok ? 1 : 0),
      },
      {
        key: "reward",
        label: "Reward",
        numeric: true,
        cell: (e) => fmt(e.reward),
        sort: (e) => e.reward,
      },
      { key: "turns", label: "Turns", numeric: true, cell: (e) => e.turns, sort: (e) => e.turns },
      {
        key: "tokens",
        label: "Tokens",
        numeric: true,
        cell: (e) => tokens(e.tokens),
        sort: (e) => e.tokens,
      },
      {
        key: "seconds",
        label: "Time",
        numeric: true,
        cell: (e) => seconds(e.seconds),
        sort: (e) => e.seconds,
      },
      { key: "stop", label: "Stop", cell: (e) => e.stop ?? "—", sort: (e) => e.stop },
    ],
  });
  const el = h(
    "div",
    null,
    h(
      "nav",
      { "aria-label": "Breadcrumb", class: "crumbs" },
      h("a", { href: href({ run }) }, view.header.title),
      " › ",
      what.title,
    ),
    h("h2", null, what.title),
    what.intro ?? null,
    table.el,
  );
  return { el, mount: table.mount, destroy: table.destroy };
}

/** Pass rate for a task list page intro. @param {any} t */
export function taskFacts(t) {
  return facts([
    ["Task key", t.key],
    ["Rollouts", t.n],
    ["Mean reward", fmt(t.mean)],
    ["Errors", t.errors],
    ["pass@1", t.pass1 === null ? null : pct(t.pass1)],
  ]);
}
