// DOM and formatting helpers of the run viewer page. Every value from a run is put in the
// page as text (textContent / attributes), never parsed as HTML.

/**
 * Creates an element: `h("a", { href: "#x", class: "y" }, "text", child)`. Attributes that
 * are null, undefined or false are left out; `on*` functions become event listeners.
 * @param {string} tag
 * @param {Record<string, unknown> | null} [attrs]
 * @param {...unknown} children
 * @returns {HTMLElement}
 */
export function h(tag, attrs, ...children) {
  const el = tag.startsWith("svg:")
    ? document.createElementNS("http://www.w3.org/2000/svg", tag.slice(4))
    : document.createElement(tag);
  for (const [k, v] of Object.entries(attrs ?? {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k.startsWith("on") && typeof v === "function") el.addEventListener(k.slice(2), v);
    else el.setAttribute(k, v === true ? "" : String(v));
  }
  append(el, children);
  return /** @type {HTMLElement} */ (el);
}

/**
 * Appends children (strings, numbers, nodes, nested arrays; null skipped).
 * @param {Element} el
 * @param {unknown[]} children
 */
export function append(el, children) {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else if (c instanceof Node) el.appendChild(c);
    else el.appendChild(document.createTextNode(String(c)));
  }
}

/** @param {unknown} v @returns {v is Record<string, any>} */
export const isObj = (v) => typeof v === "object" && v !== null && !Array.isArray(v);
/** @param {unknown} v @returns {unknown[]} */
export const arr = (v) => (Array.isArray(v) ? v : []);
/** @param {unknown} v @returns {number | null} */
export const num = (v) => (typeof v === "number" && Number.isFinite(v) ? v : null);

/** A number with up to `digits` decimals, or an em dash. @param {unknown} v */
export function fmt(v, digits = 3) {
  const n = num(v);
  if (n === null) return "—";
  return Number.isInteger(n) ? String(n) : n.toFixed(digits).replace(/\.?0+$/, "");
}

/** A fraction as a percentage. @param {unknown} v */
export function pct(v) {
  const n = num(v);
  return n === null ? "—" : `${(n * 100).toFixed(1)}%`;
}

/** A token count: 950, 12.3k, 4.5M. @param {unknown} v */
export function tokens(v) {
  const n = num(v);
  if (n === null) return "—";
  if (n < 1000) return String(n);
  if (n < 1e6) return `${(n / 1e3).toFixed(1)}k`;
  return `${(n / 1e6).toFixed(2)}M`;
}

/** Seconds as 850 ms, 12.3 s, 4m 05s. @param {unknown} v */
export function seconds(v) {
  const n = num(v);
  if (n === null) return "—";
  if (n < 1) return `${Math.round(n * 1000)} ms`;
  if (n < 120) return `${n.toFixed(1)} s`;
  const m = Math.floor(n / 60);
  return `${m}m ${String(Math.round(n - m * 60)).padStart(2, "0")}s`;
}

/** Epoch seconds as a local date and time. @param {unknown} v */
export function when(v) {
  const n = num(v);
  return n === null ? "—" : new Date(n * 1000).toLocaleString();
}

/** Cost in dollars. @param {unknown} v */
export function cost(v) {
  const n = num(v);
  return n === null ? "—" : `$${n < 0.01 && n > 0 ? n.toPrecision(2) : n.toFixed(2)}`;
}

/** JSON text of a value, indented. @param {unknown} v */
export function json(v) {
  try {
    return JSON.stringify(v, null, 2) ?? String(v);
  } catch {
    return String(v);
  }
}

/**
 * A hash link to a route of the page.
 * @param {Record<string, string | number>} route
 */
export function href(route) {
  return "#" + new URLSearchParams(
    Object.entries(route).map(([k, v]) => [k, String(v)]),
  ).toString();
}

/** A definition list of label/value pairs (null values skipped). @param {[string, unknown][]} pairs */
export function facts(pairs) {
  return h(
    "dl",
    { class: "facts" },
    pairs.filter(([, v]) => v !== null && v !== undefined).map(([k, v]) =>
      h("div", null, h("dt", null, k), h("dd", null, v))
    ),
  );
}

/** A badge for an ok / error outcome. @param {boolean} ok @param {string | null} [label] */
export function outcome(ok, label) {
  return h("span", { class: ok ? "badge ok" : "badge err" }, label ?? (ok ? "ok" : "error"));
}
