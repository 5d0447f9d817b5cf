// The pages of runs that `vf validate` and `vf replay` write: a validate run's tasks with the
// outcome of their gold check and setup (and, for a failing task, why: the error its hook
// raised or its timeout), and a replay's score changes per task against its source run,
// with the spread of its rescores (judge variance).

import { facts, fmt, h, href, outcome, seconds } from "./dom.js";
import { runHeader } from "./run_page.js";
import { dataTable } from "./table.js";

/** A badge for a check's reason (valid, invalid, error, timeout). @param {any} c */
function reasonBadge(c) {
  return c ? outcome(c.valid, c.reason) : "—";
}

/** The first line of a check's error. @param {string | null} e */
function firstLine(e) {
  if (!e) return "—";
  const line = e.split("\n")[0] ?? "";
  return line.length > 160 ? line.slice(0, 160) + "…" : line;
}

/**
 * A validate run's overview: the counts by outcome and the table of tasks.
 * @param {any} view @param {number} run
 */
export function validatePage(view, run) {
  const v = view.validate;
  const o = v.outcomes;
  const failing = v.checks.filter((/** @type {any} */ c) => !c.valid).length;
  const both = v.checks.some((/** @type {any} */ c) => c.gold || c.setup);
  const table = dataTable({
    id: `checks-${run}`,
    caption: "Task checks",
    noun: "tasks",
    rows: v.checks,
    search: (c) => `${c.key} ${c.label} ${c.reason} ${c.error ?? ""}`,
    initialSort: { key: "outcome", dir: 1 },
    choice: {
      label: "Show",
      options: [
        { value: "all", label: "all tasks", test: () => true },
        { value: "failing", label: "failing", test: (c) => !c.valid },
        { value: "valid", label: "valid", test: (c) => c.valid },
      ],
    },
    columns: [
      {
        key: "task",
        label: "Task",
        cell: (c) => h("a", { href: href({ run, task: c.key }), title: c.key }, c.label),
        sort: (c) => c.index ?? c.label,
      },
      {
        key: "outcome",
        label: "Outcome",
        cell: (c) => reasonBadge(c),
        sort: (c) => (c.valid ? 1 : 0),
      },
      ...(both
        ? [
          {
            key: "gold",
            label: "Gold check",
            cell: (/** @type {any} */ c) => reasonBadge(c.gold),
            sort: (/** @type {any} */ c) => c.gold?.reason ?? null,
          },
          {
            key: "setup",
            label: "Setup",
            cell: (/** @type {any} */ c) => reasonBadge(c.setup),
            sort: (/** @type {any} */ c) => c.setup?.reason ?? null,
          },
        ]
        : []),
      { key: "why", label: "Why", cell: (c) => firstLine(c.error), sort: (c) => c.error },
      {
        key: "seconds",
        label: "Time",
        numeric: true,
        cell: (c) => seconds(c.seconds),
        sort: (c) => c.seconds,
      },
    ],
  });
  const counts =
    `${o.valid ?? 0}/${v.total ?? v.checks.length} valid · ${o.invalid ?? 0} invalid · ` +
    `${o.error ?? 0} error · ${o.timeout ?? 0} timeout` +
    (o.missing ? ` · ${o.missing} not checked yet` : "");
  const el = h(
    "div",
    null,
    runHeader(view, run),
    h(
      "section",
      { class: "card", "aria-labelledby": "validate-h" },
      h("h3", { id: "validate-h" }, "Gold checks (no model)"),
      h("p", { class: "big", "data-testid": "validate-counts" }, counts),
      h(
        "p",
        null,
        failing
          ? `${failing} task(s) failing: open one to read why.`
          : "Every checked task is valid.",
        v.mode ? ` Mode: ${v.mode}.` : "",
      ),
    ),
    h("section", { "aria-labelledby": "checks-h" }, h("h3", { id: "checks-h" }, "Tasks"), table.el),
  );
  return { el, mount: table.mount, destroy: table.destroy };
}

/** One check of a task, with its error in full. @param {string} title @param {any} c */
function checkSection(title, c) {
  return h(
    "section",
    { class: "card check", "aria-label": title },
    h("h3", null, title, " ", reasonBadge(c)),
    facts([
      ["Outcome", c.reason],
      ["Error type", c.errorType],
      ["Time", seconds(c.seconds)],
    ]),
    c.error
      ? [h("h4", null, "Why"), h("pre", { class: "msg", "data-testid": "check-why" }, c.error)]
      : c.valid
      ? null
      : h("p", { "data-testid": "check-why" }, "The validate hook returned false."),
  );
}

/**
 * One task of a validate run: each check and why it failed.
 * @param {any} view @param {number} run @param {string} key
 */
export function checkPage(view, run, key) {
  const c = view.validate.checks.find((/** @type {any} */ x) => x.key === key);
  const title = c ? `Task ${c.label}` : `Task ${key}`;
  const parts = c
    ? (c.gold || c.setup)
      ? [
        c.gold ? checkSection("Gold check: setup, then the validate hook", c.gold) : null,
        c.setup ? checkSection("Setup alone", c.setup) : null,
      ]
      : [checkSection(c.mode === "setup" ? "Setup" : "Gold check", c)]
    : [h("p", null, "This task has not been checked yet.")];
  const el = h(
    "div",
    null,
    h(
      "nav",
      { "aria-label": "Breadcrumb", class: "crumbs" },
      h("a", { href: href({ run }) }, view.header.title),
      " › ",
      title,
    ),
    h("h2", null, title, " ", c ? reasonBadge(c) : null),
    c ? facts([["Task key", c.key], ["Mode", c.mode]]) : null,
    parts,
  );
  return { el };
}

/**
 * A replay's score changes per task against its source, and the spread of its rescores.
 * @param {any} view @param {number} run @param {any[]} views
 */
export function replaySection(view, run, views) {
  const r = view.replay;
  const src = r.sourceRun;
  const spread = (r.rescores ?? 1) > 1;
  const table = dataTable({
    id: `replay-${run}`,
    caption: "Score changes per task",
    noun: "tasks",
    rows: r.tasks,
    search: (t) => `${t.key} ${t.label}`,
    initialSort: { key: "change", dir: 1 },
    choice: {
      label: "Show",
      options: [
        { value: "all", label: "all tasks", test: () => true },
        {
          value: "changed",
          label: "changed",
          test: (t) => t.change !== null && Math.abs(t.change) > 1e-9,
        },
        ...(spread
          ? [{ value: "varies", label: "judge varies", test: (/** @type {any} */ t) => t.std > 0 }]
          : []),
      ],
    },
    columns: [
      {
        key: "task",
        label: "Task",
        cell: (t) => h("a", { href: href({ run, task: t.key }), title: t.key }, t.label),
        sort: (t) => t.label,
      },
      {
        key: "source",
        label: "Source reward",
        numeric: true,
        cell: (t) =>
          src !== null
            ? h("a", { href: href({ run: src, task: t.key }) }, fmt(t.sourceMean))
            : fmt(t.sourceMean),
        sort: (t) => t.sourceMean,
      },
      {
        key: "mean",
        label: spread ? "Rescored mean" : "Rescored",
        numeric: true,
        cell: (t) => fmt(t.mean),
        sort: (t) => t.mean,
      },
      {
        key: "change",
        label: "Change",
        numeric: true,
        cell: (t) => t.change === null ? "—" : (t.change > 0 ? "+" : "") + fmt(t.change),
        sort: (t) => t.change,
      },
      ...(spread
        ? [
          {
            key: "std",
            label: "Judge spread (sd)",
            numeric: true,
            title: "Population standard deviation of the task's rescores",
            cell: (/** @type {any} */ t) => fmt(t.std),
            sort: (/** @type {any} */ t) => t.std,
          },
          {
            key: "rewards",
            label: "Rescores",
            cell: (/** @type {any} */ t) =>
              t.rewards.map((/** @type {number} */ x) => fmt(x)).join(", "),
            sort: (/** @type {any} */ t) => t.rewards.length,
          },
        ]
        : []),
    ],
  });
  const changed = r.tasks.filter((/** @type {any} */ t) =>
    t.change !== null && Math.abs(t.change) > 1e-9
  );
  const up = changed.filter((/** @type {any} */ t) => t.change > 0).length;
  const varies = r.tasks.filter((/** @type {any} */ t) => t.std > 0).length;
  const el = h(
    "section",
    { class: "replay", "aria-labelledby": `replay-h-${run}` },
    h("h3", { id: `replay-h-${run}` }, "Rescored against the source run"),
    facts([
      [
        "Source run",
        src !== null
          ? h("a", { href: href({ run: src }) }, views[src]?.header.title ?? r.source)
          : `${r.source ?? "—"} (not open)`,
      ],
      ["Rescores per trace", r.rescores],
      [
        "Signals not run (need a runtime)",
        r.skippedSignals.length ? r.skippedSignals.join(", ") : null,
      ],
    ]),
    h(
      "p",
      { "data-testid": "replay-counts" },
      `${up} improved, ${changed.length - up} regressed, ${r.tasks.length - changed.length} same` +
        (spread ? ` · judge varies on ${varies} of ${r.tasks.length} task(s)` : ""),
      src !== null ? " · " : "",
      src !== null
        ? h("a", { href: `#compare=${src},${run}` }, "Compare with the source run")
        : null,
    ),
    table.el,
  );
  return { el, mount: table.mount, destroy: table.destroy };
}
