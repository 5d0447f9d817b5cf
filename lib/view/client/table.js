// A sortable, filterable table. Long tables are virtualized with @tanstack/virtual-core:
// only the rows in view (plus overscan) are in the DOM, between two spacer rows, and the
// table keeps its full size in aria-rowcount / aria-rowindex.

import {
  elementScroll,
  observeElementOffset,
  observeElementRect,
  Virtualizer,
} from "@tanstack/virtual-core";
import { h } from "./dom.js";

/** Tables up to this many rows are rendered whole. */
const VIRTUAL_FROM = 200;
const ROW_HEIGHT = 34;

/**
 * @typedef {{
 *   key: string, label: string, numeric?: boolean,
 *   cell(row: any): unknown, sort?(row: any): number | string | null, title?: string,
 * }} Column
 * @typedef {{ label: string, options: { value: string, label: string, test(row: any): boolean }[] }} Choice
 * @typedef {{ text: string, choice: string, sortKey: string | null, sortDir: 1 | -1 }} TableState
 */

/** Filter, choice and sort of each table by id, kept across re-renders. @type {Map<string, TableState>} */
const states = new Map();

/** @param {number | string | null} a @param {number | string | null} b */
function compare(a, b) {
  if (a === b) return 0;
  if (a === null || a === undefined) return 1;
  if (b === null || b === undefined) return -1;
  if (typeof a === "number" && typeof b === "number") return a - b;
  return String(a).localeCompare(String(b), undefined, { numeric: true });
}

/**
 * Builds the table. Call the returned `mount()` once the element is in the document.
 * @param {{
 *   id: string, caption: string, noun: string, columns: Column[], rows: any[],
 *   search(row: any): string, choice?: Choice, initialSort?: { key: string, dir: 1 | -1 },
 * }} spec
 * @returns {{ el: HTMLElement, mount(): void, destroy(): void }}
 */
export function dataTable(spec) {
  const state = states.get(spec.id) ?? {
    text: "",
    choice: spec.choice?.options[0]?.value ?? "",
    sortKey: spec.initialSort?.key ?? null,
    sortDir: spec.initialSort?.dir ?? 1,
  };
  states.set(spec.id, state);
  const count = h("p", { class: "count", role: "status", "aria-live": "polite" });
  const search = /** @type {HTMLInputElement} */ (h("input", {
    type: "search",
    id: `${spec.id}-filter`,
    value: state.text,
    placeholder: `Filter ${spec.noun}…`,
    autocomplete: "off",
  }));
  const select = spec.choice
    ? /** @type {HTMLSelectElement} */ (h(
      "select",
      { id: `${spec.id}-choice` },
      spec.choice.options.map((o) =>
        h("option", { value: o.value, selected: o.value === state.choice }, o.label)
      ),
    ))
    : null;
  const headRow = h("tr", { "aria-rowindex": 1 });
  const thead = h("thead", null, headRow);
  const tbody = h("tbody");
  const table = h("table", { id: spec.id }, h("caption", null, spec.caption), thead, tbody);
  const scroller = h("div", {
    class: "scroller",
    tabindex: 0,
    role: "region",
    "aria-label": `${spec.caption}, scrollable`,
  }, table);
  /** @type {any[]} */
  let shown = [];
  /** @type {Virtualizer<HTMLElement, Element> | null} */
  let virtualizer = null;
  /** @type {(() => void) | null} */
  let unmount = null;

  const renderHead = () => {
    headRow.replaceChildren(...spec.columns.map((c) => {
      const sorted = state.sortKey === c.key;
      return h(
        "th",
        {
          scope: "col",
          class: c.numeric ? "num" : null,
          "aria-sort": sorted ? (state.sortDir === 1 ? "ascending" : "descending") : "none",
        },
        c.sort
          ? h(
            "button",
            {
              type: "button",
              title: c.title ?? `Sort by ${c.label}`,
              onclick: () => {
                if (state.sortKey === c.key) state.sortDir = state.sortDir === 1 ? -1 : 1;
                else {
                  state.sortKey = c.key;
                  state.sortDir = c.numeric ? -1 : 1;
                }
                update();
              },
            },
            c.label,
            h(
              "span",
              { class: "arrow", "aria-hidden": "true" },
              sorted ? (state.sortDir === 1 ? " ▲" : " ▼") : "",
            ),
          )
          : c.label,
      );
    }));
  };

  /** @param {any} row @param {number} i */
  const renderRow = (row, i) =>
    h(
      "tr",
      { "aria-rowindex": i + 2 },
      spec.columns.map((c, ci) =>
        h(ci === 0 ? "th" : "td", {
          class: c.numeric ? "num" : null,
          scope: ci === 0 ? "row" : null,
        }, c.cell(row))
      ),
    );

  // The spacer's height is set through the CSSOM: the page's CSP (style-src by hash) blocks
  // every `style` attribute, which would leave the scroller as tall as the rows in the DOM.
  const spacer = (/** @type {number} */ px) => {
    const td = h("td", { colspan: spec.columns.length });
    td.style.height = `${px}px`;
    return h("tr", { class: "spacer", "aria-hidden": "true" }, td);
  };

  const renderBody = () => {
    if (!virtualizer) {
      tbody.replaceChildren(...shown.map(renderRow));
      return;
    }
    const items = virtualizer.getVirtualItems();
    const margin = virtualizer.options.scrollMargin;
    const top = items.length ? items[0].start - margin : 0;
    const bottom = items.length
      ? virtualizer.getTotalSize() - (items[items.length - 1].end - margin)
      : 0;
    tbody.replaceChildren(
      spacer(top),
      ...items.map((it) => renderRow(shown[it.index], it.index)),
      spacer(Math.max(0, bottom)),
    );
  };

  const update = () => {
    const text = state.text.trim().toLowerCase();
    const test = spec.choice?.options.find((o) => o.value === state.choice)?.test ?? (() => true);
    shown = spec.rows.filter((r) =>
      test(r) && (!text || spec.search(r).toLowerCase().includes(text))
    );
    const col = spec.columns.find((c) => c.key === state.sortKey);
    if (col?.sort) {
      const key = col.sort;
      shown.sort((a, b) => state.sortDir * compare(key(a), key(b)));
    }
    table.setAttribute("aria-rowcount", String(shown.length + 1));
    count.textContent = shown.length === spec.rows.length
      ? `${spec.rows.length} ${spec.noun}`
      : `${shown.length} of ${spec.rows.length} ${spec.noun}`;
    renderHead();
    if (virtualizer) {
      virtualizer.setOptions({ ...virtualizer.options, count: shown.length });
      virtualizer._willUpdate();
      virtualizer.measure();
    }
    renderBody();
  };

  search.addEventListener("input", () => {
    state.text = search.value;
    update();
  });
  select?.addEventListener("change", () => {
    state.choice = select.value;
    update();
  });

  const el = h(
    "div",
    { class: "table-block" },
    h(
      "div",
      { class: "controls" },
      h("label", { for: search.id }, "Filter "),
      search,
      select ? [h("label", { for: select.id }, " Show "), select] : null,
      count,
    ),
    scroller,
  );
  update();
  return {
    el,
    mount() {
      if (spec.rows.length <= VIRTUAL_FROM || virtualizer) return;
      scroller.classList.add("virtual");
      virtualizer = new Virtualizer({
        count: shown.length,
        getScrollElement: () => scroller,
        estimateSize: () => ROW_HEIGHT,
        overscan: 12,
        scrollMargin: /** @type {HTMLElement} */ (tbody).offsetTop,
        scrollToFn: elementScroll,
        observeElementRect,
        observeElementOffset,
        onChange: () => renderBody(),
      });
      unmount = virtualizer._didMount();
      virtualizer._willUpdate();
      renderBody();
    },
    destroy() {
      unmount?.();
      unmount = null;
    },
  };
}
