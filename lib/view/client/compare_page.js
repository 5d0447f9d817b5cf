// Two runs side by side, task by task: which tasks improved, which regressed, which are
// only in one of them. Tasks match by key; a task's score is its mean reward over all its
// rollouts, errored rollouts as 0.

import { fmt, h, href } from "./dom.js";
import { dataTable } from "./table.js";

/**
 * A labelled run picker for side `side` that moves to the comparison with that run.
 * @param {"A" | "B"} side @param {any[]} views @param {number} ra @param {number} rb
 */
function runPicker(side, views, ra, rb) {
  const current = side === "A" ? ra : rb;
  const select = h(
    "select",
    {
      id: `compare-pick-${side}`,
      onchange: (/** @type {Event} */ ev) => {
        const v = Number(/** @type {HTMLSelectElement} */ (ev.target).value);
        location.hash = side === "A" ? `compare=${v},${rb}` : `compare=${ra},${v}`;
      },
    },
    views.map((v, i) =>
      h("option", { value: i, selected: i === current }, `${i + 1}: ${v.header.title}`)
    ),
  );
  return [h("label", { for: `compare-pick-${side}` }, ` Run ${side} `), select];
}

/**
 * @param {any[]} views every run's view (for the run pickers)
 * @param {number} ra @param {number} rb the positions of the two runs compared
 */
export function comparePage(views, ra, rb) {
  const a = views[ra];
  const b = views[rb];
  const byKey = new Map();
  for (const t of a.tasks) byKey.set(t.key, { key: t.key, label: t.label, a: t, b: null });
  for (const t of b.tasks) {
    const row = byKey.get(t.key);
    if (row) row.b = t;
    else byKey.set(t.key, { key: t.key, label: t.label, a: null, b: t });
  }
  const rows = [...byKey.values()].map((r) => {
    const delta = r.a && r.b ? r.b.meanAll - r.a.meanAll : null;
    const status = !r.a
      ? "only in B"
      : !r.b
      ? "only in A"
      : delta > 1e-9
      ? "improved"
      : delta < -1e-9
      ? "regressed"
      : "same";
    return { ...r, delta, status };
  });
  const counts = { improved: 0, regressed: 0, same: 0, "only in A": 0, "only in B": 0 };
  for (const r of rows) counts[/** @type {keyof typeof counts} */ (r.status)]++;
  const table = dataTable({
    id: `compare-${ra}-${rb}`,
    caption: "Tasks compared",
    noun: "tasks",
    rows,
    search: (r) => `${r.key} ${r.label} ${r.status}`,
    initialSort: { key: "delta", dir: 1 },
    choice: {
      label: "Show",
      options: [
        { value: "all", label: "all tasks", test: () => true },
        {
          value: "changed",
          label: "changed",
          test: (r) => r.status === "improved" || r.status === "regressed",
        },
        { value: "improved", label: "improved", test: (r) => r.status === "improved" },
        { value: "regressed", label: "regressed", test: (r) => r.status === "regressed" },
      ],
    },
    columns: [
      { key: "task", label: "Task", cell: (r) => r.label, sort: (r) => r.label },
      {
        key: "a",
        label: "A mean",
        numeric: true,
        cell: (r) => r.a ? h("a", { href: href({ run: ra, task: r.key }) }, fmt(r.a.meanAll)) : "—",
        sort: (r) => r.a?.meanAll ?? null,
      },
      {
        key: "b",
        label: "B mean",
        numeric: true,
        cell: (r) => r.b ? h("a", { href: href({ run: rb, task: r.key }) }, fmt(r.b.meanAll)) : "—",
        sort: (r) => r.b?.meanAll ?? null,
      },
      {
        key: "delta",
        label: "Change",
        numeric: true,
        cell: (r) => r.delta === null ? "—" : (r.delta > 0 ? "+" : "") + fmt(r.delta),
        sort: (r) => r.delta,
      },
      {
        key: "status",
        label: "Status",
        cell: (r) => h("span", { class: `badge ${r.status.replace(/ /g, "-")}` }, r.status),
        sort: (r) => r.status,
      },
    ],
  });
  const el = h(
    "div",
    null,
    h("h2", null, "Comparison"),
    h("div", { class: "controls" }, runPicker("A", views, ra, rb), runPicker("B", views, ra, rb)),
    h(
      "dl",
      { class: "facts" },
      h(
        "div",
        null,
        h("dt", null, "A"),
        h(
          "dd",
          null,
          h("a", { href: href({ run: ra }) }, a.header.title),
          ` — mean ${fmt(a.reward.mean)}`,
        ),
      ),
      h(
        "div",
        null,
        h("dt", null, "B"),
        h(
          "dd",
          null,
          h("a", { href: href({ run: rb }) }, b.header.title),
          ` — mean ${fmt(b.reward.mean)}`,
        ),
      ),
    ),
    h(
      "p",
      { class: "compare-counts", "data-testid": "compare-counts" },
      `${counts.improved} improved, ${counts.regressed} regressed, ${counts.same} same` +
        (counts["only in A"] || counts["only in B"]
          ? `, ${counts["only in A"]} only in A, ${counts["only in B"]} only in B`
          : ""),
    ),
    table.el,
  );
  return { el, mount: table.mount, destroy: table.destroy };
}
