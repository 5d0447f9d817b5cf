// The run viewer page: reads its boot data, routes on the URL hash (#run=0, #run=0&task=…,
// #run=0&error=…, #run=0&episode=…, #compare=0,1), renders, and — served by `vf view` —
// polls for new episodes of runs still being written.

import { checkPage, replaySection, validatePage } from "./check_pages.js";
import { comparePage } from "./compare_page.js";
import { embeddedSource, serverSource } from "./data.js";
import { h, href } from "./dom.js";
import { episodePage } from "./episode_page.js";
import { episodeListPage, runPage, taskFacts } from "./run_page.js";

const POLL_MS = 1500;

/** @param {string} id */
function readJsonScript(id) {
  const el = document.getElementById(id);
  return el ? JSON.parse(el.textContent || "null") : null;
}

const boot = readJsonScript("vf-boot");
/** @type {import("./data.js").DataSource} */
const source = boot.mode === "file"
  ? embeddedSource(boot.data, readJsonScript("vf-episodes") ?? [])
  : serverSource(boot.runCount);

const main = /** @type {HTMLElement} */ (document.getElementById("main"));
const runsNav = /** @type {HTMLElement} */ (document.getElementById("runs"));
const liveRegion = /** @type {HTMLElement} */ (document.getElementById("live"));
/** @type {any[]} */
const views = [];
let renderCount = 0;
/** @type {{ destroy?: () => void } | null} */
let current = null;

function route() {
  const q = new URLSearchParams(location.hash.slice(1));
  const int = (/** @type {string} */ k) => {
    const v = q.get(k);
    return v !== null && /^\d+$/.test(v) ? Number(v) : null;
  };
  const compare = q.get("compare")?.split(",").map(Number).filter((n) => Number.isInteger(n));
  return {
    run: Math.min(int("run") ?? 0, source.runCount - 1),
    task: q.get("task"),
    error: q.get("error"),
    episode: int("episode"),
    compare: compare && compare.length === 2 ? compare : null,
  };
}

function renderNav() {
  const r = route();
  runsNav.replaceChildren(
    h(
      "ul",
      null,
      views.map((v, i) =>
        h(
          "li",
          null,
          h(
            "a",
            {
              href: href({ run: i }),
              "aria-current": !r.compare && r.run === i ? "page" : null,
            },
            `${views.length > 1 ? `${"AB"[i] ?? i + 1}: ` : ""}${v.header.title}${
              v.kind && v.kind !== "eval" ? ` (${v.kind})` : ""
            }`,
          ),
        )
      ),
      views.length >= 2
        ? h(
          "li",
          null,
          h(
            "a",
            { href: "#compare=0,1", "aria-current": r.compare ? "page" : null },
            "Compare A ↔ B",
          ),
        )
        : null,
    ),
  );
}

/** @param {boolean} navigated true after a hash change (focus moves to the content) */
async function render(navigated) {
  const n = ++renderCount;
  const r = route();
  let page;
  try {
    if (r.compare) {
      const [a, b] = r.compare;
      if (!views[a] || !views[b]) throw new Error("no such runs to compare");
      page = comparePage(views, a, b);
    } else if (views[r.run].kind === "validate") {
      page = r.task !== null
        ? checkPage(views[r.run], r.run, r.task)
        : validatePage(views[r.run], r.run);
    } else if (r.episode !== null) {
      const ep = await source.episode(r.run, r.episode);
      page = { el: episodePage(views[r.run], r.run, r.episode, ep) };
    } else if (r.task !== null) {
      const items = await source.episodes(r.run, { task: r.task });
      const t = views[r.run].tasks.find((/** @type {any} */ x) => x.key === r.task);
      page = episodeListPage(views[r.run], r.run, items, {
        id: `task-${r.run}`,
        title: `Task ${t?.label ?? r.task}`,
        intro: t ? taskFacts(t) : h("p", null, "No episodes of this task yet."),
      });
    } else if (r.error !== null) {
      const items = await source.episodes(r.run, { error: r.error });
      const g = views[r.run].errors.find((/** @type {any} */ x) => x.type === r.error);
      page = episodeListPage(views[r.run], r.run, items, {
        id: `error-${r.run}`,
        title: `Errors: ${r.error}`,
        intro: g
          ? h(
            "ul",
            { class: "error-messages" },
            g.messages.map((/** @type {any} */ m) =>
              h("li", null, h("pre", { class: "msg" }, m.message), ` × ${m.count}`)
            ),
          )
          : null,
      });
    } else {
      const v = views[r.run];
      page = runPage(v, r.run, v.replay ? replaySection(v, r.run, views) : null);
    }
  } catch (e) {
    page = {
      el: h(
        "p",
        { class: "warn", role: "alert" },
        `Could not show this page: ${e instanceof Error ? e.message : String(e)}`,
      ),
    };
  }
  if (n !== renderCount) return;
  const active = document.activeElement;
  const activeId = active instanceof HTMLInputElement || active instanceof HTMLSelectElement
    ? active.id
    : null;
  const caret = active instanceof HTMLInputElement ? active.selectionStart : null;
  const scroll = globalThis.scrollY;
  current?.destroy?.();
  main.replaceChildren(page.el);
  current = page;
  page.mount?.();
  renderNav();
  document.title = `${views[r.run]?.header.title ?? "run"} — vf view`;
  if (navigated) {
    globalThis.scrollTo(0, 0);
    main.focus({ preventScroll: true });
  } else {
    globalThis.scrollTo(0, scroll);
    const again = activeId ? document.getElementById(activeId) : null;
    if (again instanceof HTMLInputElement || again instanceof HTMLSelectElement) {
      again.focus();
      if (again instanceof HTMLInputElement && caret !== null) {
        again.setSelectionRange(caret, caret);
      }
    }
  }
  main.setAttribute("aria-busy", "false");
}

async function loadViews() {
  for (let i = 0; i < source.runCount; i++) views[i] = await source.view(i);
}

async function poll() {
  try {
    const versions = await source.versions();
    const changed = versions.map((v, i) => v !== views[i]?.version ? i : -1).filter((i) => i >= 0);
    if (changed.length) {
      const before = views.reduce((s, v) => s + v.header.episodes, 0);
      for (const i of changed) views[i] = await source.view(i);
      const after = views.reduce((s, v) => s + v.header.episodes, 0);
      if (after !== before) liveRegion.textContent = `${after - before} new episode(s)`;
      if (route().episode === null) await render(false);
      else renderNav();
    }
  } catch {
    // the server went away; keep what is shown
  }
  setTimeout(poll, POLL_MS);
}

document.addEventListener("click", (ev) => {
  const a = ev.target instanceof Element ? ev.target.closest("a[data-anchor]") : null;
  if (!a) return;
  const target = document.getElementById((a.getAttribute("href") ?? "").slice(1));
  if (!target) return;
  ev.preventDefault();
  target.setAttribute("tabindex", "-1");
  target.scrollIntoView({ block: "start" });
  target.focus({ preventScroll: true });
  target.classList.add("flash");
  setTimeout(() => target.classList.remove("flash"), 1200);
});
globalThis.addEventListener("hashchange", () => render(true));

loadViews().then(() => render(false)).then(() => {
  if (source.live) setTimeout(poll, POLL_MS);
}, (e) => {
  main.replaceChildren(
    h(
      "p",
      { class: "warn", role: "alert" },
      `Could not load the run: ${e instanceof Error ? e.message : String(e)}`,
    ),
  );
});
