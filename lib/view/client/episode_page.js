// The trace view of one episode: its outcome and errors, then per trace the conversation
// (tool calls and their results linked both ways, each model call beside the message it
// produced), the model calls with usage and timing, rewards and metrics, the judge's
// calls, timing, tools, and the raw JSON.

import {
  arr,
  cost,
  facts,
  fmt,
  h,
  href,
  isObj,
  json,
  num,
  outcome,
  seconds,
  tokens,
} from "./dom.js";

/** @param {unknown} s */
const spanSeconds = (s) => {
  if (!isObj(s)) return null;
  const a = num(s.start);
  const b = num(s.end);
  return a !== null && b !== null && a > 0 && b > 0 ? b - a : null;
};

/** @param {unknown} v */
const text = (v) => (typeof v === "string" ? v : v === null || v === undefined ? "" : json(v));

/** Message content: a string or a list of parts. @param {unknown} content */
function contentView(content) {
  if (typeof content === "string") return content ? h("pre", { class: "content" }, content) : null;
  if (!Array.isArray(content)) {
    return content == null ? null : h("pre", { class: "content" }, json(content));
  }
  return content.map((part) => {
    if (isObj(part) && typeof part.text === "string") {
      return h("pre", { class: "content" }, part.text);
    }
    if (isObj(part) && part.type === "image_url") {
      const url = isObj(part.image_url) ? String(part.image_url.url ?? "") : "";
      return h(
        "p",
        { class: "note" },
        `[image: ${url.startsWith("data:") ? `inline, ${url.length} characters` : url}]`,
      );
    }
    return h("pre", { class: "content" }, json(part));
  });
}

/** Tool call arguments, pretty-printed when they are JSON. @param {unknown} args */
function argsText(args) {
  if (typeof args !== "string") return json(args);
  try {
    return json(JSON.parse(args));
  } catch {
    return args;
  }
}

/** @param {any} u */
function usageText(u) {
  if (!isObj(u)) return "no usage reported";
  const parts = [`${tokens(u.prompt_tokens)} prompt`];
  if (num(u.cached_input_tokens)) parts.push(`${tokens(u.cached_input_tokens)} cached`);
  parts.push(`${tokens(u.completion_tokens)} completion`);
  if (num(u.reasoning_tokens)) parts.push(`${tokens(u.reasoning_tokens)} reasoning`);
  if (num(u.cost) !== null) parts.push(cost(u.cost));
  return parts.join(" · ");
}

/** @param {unknown} e */
function errorText(e) {
  if (e === null || e === undefined) return null;
  if (typeof e === "string") return e;
  if (isObj(e)) return `${e.type ?? "Error"}: ${e.message ?? ""}`;
  return json(e);
}

/** @param {unknown[]} errors */
function errorList(errors) {
  return h(
    "ul",
    { class: "error-list" },
    errors.map((e) => {
      const o = isObj(e) ? e : { message: String(e) };
      return h(
        "li",
        null,
        h("strong", null, o.type ?? "Error"),
        o.status_code ? ` (HTTP ${o.status_code})` : "",
        h("pre", { class: "msg" }, text(o.message)),
        o.traceback
          ? h("details", null, h("summary", null, "Traceback"), h("pre", null, text(o.traceback)))
          : null,
      );
    }),
  );
}

/** @param {string} caption @param {string[]} head @param {unknown[][]} rows @param {string} [cls] */
function simpleTable(caption, head, rows, cls) {
  return h(
    "table",
    { class: cls ?? "plain" },
    h("caption", null, caption),
    h("thead", null, h("tr", null, head.map((x) => h("th", { scope: "col" }, x)))),
    h(
      "tbody",
      null,
      rows.map((r) =>
        h(
          "tr",
          null,
          r.map((c, i) => h(i === 0 ? "th" : "td", i === 0 ? { scope: "row" } : null, c)),
        )
      ),
    ),
  );
}

/** @param {any} t @param {number} k */
function traceSection(t, k) {
  const id = (/** @type {string} */ s) => `t${k}-${s}`;
  const nodes = arr(t.nodes);
  const calls = arr(t.calls);
  /** @type {Map<number, number[]>} */
  const callsByNode = new Map();
  calls.forEach((c, ci) => {
    const n = isObj(c) ? num(c.node) : null;
    if (n !== null) callsByNode.set(n, [...(callsByNode.get(n) ?? []), ci]);
  });
  /** @type {Map<string, { node: number, name: string }>} */
  const toolCalls = new Map();
  nodes.forEach((n, i) => {
    const m = isObj(n) && isObj(n.message) ? n.message : {};
    for (const tc of arr(m.tool_calls)) {
      if (isObj(tc) && tc.id) {
        toolCalls.set(String(tc.id), { node: i, name: String(tc.name ?? "") });
      }
    }
  });
  const rewardRows = Object.entries(isObj(t.rewards) ? t.rewards : {}).map(([name, r]) =>
    isObj(r) ? [name, fmt(r.score), fmt(r.weight ?? 1)] : [name, "missing", "—"]
  );
  const metricRows = Object.entries(isObj(t.metrics) ? t.metrics : {}).map((
    [name, v],
  ) => [name, fmt(v)]);
  const judges = arr(isObj(t.info) ? t.info.judge : null);
  const info = isObj(t.info)
    ? Object.fromEntries(Object.entries(t.info).filter(([key]) => key !== "judge"))
    : {};
  const timing = isObj(t.timing) ? t.timing : {};
  const agent = isObj(t.agent) ? t.agent : {};
  const runtime = isObj(agent.runtime) ? agent.runtime : {};
  let total = 0;
  for (const r of Object.values(isObj(t.rewards) ? t.rewards : {})) {
    if (isObj(r) && num(r.score) !== null) total += r.score * (num(r.weight) ?? 1);
  }

  const conversation = h(
    "ol",
    { class: "conversation" },
    nodes.map((n, i) => {
      const node = isObj(n) ? n : {};
      const m = isObj(node.message) ? node.message : {};
      const role = String(m.role ?? "?");
      const parent = num(node.parent);
      const toolOf = m.tool_call_id ? toolCalls.get(String(m.tool_call_id)) : undefined;
      return h(
        "li",
        { id: id(`n${i}`), class: `msg role-${role}` },
        h(
          "div",
          { class: "msg-head" },
          h("span", { class: "role" }, role),
          role === "tool" && toolOf
            ? [
              " result of ",
              h(
                "a",
                { href: `#${id(`tc-${m.tool_call_id}`)}`, "data-anchor": "1" },
                `${toolOf.name} call`,
              ),
            ]
            : null,
          role === "tool" && !toolOf && m.name ? ` ${m.name}` : null,
          parent !== null && parent !== i - 1
            ? [
              " (follows ",
              h("a", { href: `#${id(`n${parent}`)}`, "data-anchor": "1" }, `message ${parent + 1}`),
              ")",
            ]
            : null,
          h("span", { class: "node-no" }, ` #${i + 1}`),
        ),
        m.reasoning_content
          ? h(
            "details",
            null,
            h("summary", null, "Reasoning"),
            h("pre", { class: "content" }, text(m.reasoning_content)),
          )
          : null,
        contentView(m.content),
        arr(m.tool_calls).map((tc) => {
          const c = isObj(tc) ? tc : {};
          const result = nodes.findIndex((x) =>
            isObj(x) && isObj(x.message) && x.message.tool_call_id === c.id && c.id
          );
          return h(
            "div",
            { class: "tool-call", id: id(`tc-${c.id}`) },
            h("span", { class: "tool-name" }, `→ ${c.name ?? "tool"}`),
            result >= 0
              ? [" ", h("a", { href: `#${id(`n${result}`)}`, "data-anchor": "1" }, "result")]
              : null,
            h("pre", { class: "args" }, argsText(c.arguments)),
          );
        }),
        (callsByNode.get(i) ?? []).map((ci) => {
          const c = calls[ci];
          return h(
            "p",
            { class: "call-note" },
            h("a", { href: `#${id(`call${ci}`)}`, "data-anchor": "1" }, `model call ${ci + 1}`),
            `: ${c.model ?? "?"}, ${c.finish_reason ?? "no finish reason"}, ${
              usageText(c.usage)
            }, ${seconds(spanSeconds(c.time))}`,
          );
        }),
      );
    }),
  );

  const callRows = calls.map((c, ci) => {
    const o = isObj(c) ? c : {};
    const node = num(o.node);
    return [
      h("span", { id: id(`call${ci}`) }, String(ci + 1)),
      node === null
        ? "—"
        : h("a", { href: `#${id(`n${node}`)}`, "data-anchor": "1" }, `message ${node + 1}`),
      text(o.model),
      text(o.finish_reason),
      usageText(o.usage),
      seconds(spanSeconds(o.time)),
      errorText(o.error) ?? "",
    ];
  });

  return h(
    "section",
    { class: "trace", "aria-labelledby": id("h") },
    h("h3", { id: id("h") }, `Trace ${k + 1}: ${agent.name ?? "agent"}`),
    facts([
      ["Outcome", outcome(t.ok === true)],
      ["Stop condition", text(t.stop_condition) || "—"],
      ["Completed", t.is_completed === true ? "yes" : "no"],
      ["Reward", fmt(total)],
      ["Runtime", `${runtime.type ?? "?"}${runtime.id ? ` (${runtime.id})` : ""}`],
      ["Turns", nodes.filter((n) => isObj(n) && n.sampled).length],
      [
        "Duration",
        seconds(
          spanSeconds({
            start: timing.start,
            end: isObj(timing.scoring) ? timing.scoring.end : null,
          }),
        ),
      ],
    ]),
    arr(t.errors).length ? [h("h4", null, "Errors"), errorList(arr(t.errors))] : null,
    h(
      "div",
      { class: "cols" },
      rewardRows.length
        ? simpleTable("Rewards", ["Name", "Score", "Weight"], rewardRows)
        : h("p", null, "No rewards."),
      metricRows.length ? simpleTable("Metrics", ["Name", "Value"], metricRows) : null,
      simpleTable(
        "Timing",
        ["Phase", "Duration"],
        ["boot", "setup", "agent", "finalize", "scoring"].map((
          p,
        ) => [p, seconds(spanSeconds(timing[p]))])
          .concat(
            isObj(timing.agent)
              ? [["model (in agent)", seconds(num(timing.agent.model?.duration))], [
                "harness (in agent)",
                seconds(num(timing.agent.harness?.duration)),
              ]]
              : [],
          ),
      ),
    ),
    h("h4", null, "Conversation"),
    conversation,
    calls.length
      ? simpleTable(
        "Model calls",
        ["#", "Message", "Model", "Finish", "Usage", "Time", "Error"],
        callRows,
        "plain calls",
      )
      : h("p", null, "No model calls."),
    h("h4", null, "Judge calls"),
    judges.length
      ? h(
        "ol",
        { class: "judges" },
        judges.map((j) => {
          const o = isObj(j) ? j : {};
          return h(
            "li",
            null,
            facts([
              ["Judge", text(o.judge ?? o.name) || "—"],
              ["Model", text(o.model) || "—"],
              ["Parsed", o.parsed === undefined ? null : text(o.parsed)],
              ["Usage", usageText(o.usage)],
              ["Time", seconds(spanSeconds(o.time))],
            ]),
            o.text ? h("pre", { class: "content" }, text(o.text)) : null,
            h("details", null, h("summary", null, "Record"), h("pre", null, json(o))),
          );
        }),
      )
      : h("p", null, "No judge calls."),
    arr(t.extra_usage).length
      ? simpleTable(
        "Out-of-band usage (judges)",
        ["Source", "Model", "Usage"],
        arr(t.extra_usage).map((
          u,
        ) => [text(u?.source) || "—", text(u?.model) || "—", usageText(u)]),
      )
      : null,
    arr(t.tools).length
      ? h(
        "details",
        null,
        h("summary", null, `Tools (${arr(t.tools).length})`),
        h(
          "ul",
          null,
          arr(t.tools).map((x) =>
            h("li", null, h("strong", null, text(x?.name)), ` — ${text(x?.description)}`)
          ),
        ),
      )
      : null,
    Object.keys(info).length
      ? h("details", null, h("summary", null, "Info"), h("pre", null, json(info)))
      : null,
  );
}

/**
 * The trace view of episode `i` of run `run`.
 * @param {any} view @param {number} run @param {number} i @param {any} ep
 */
export function episodePage(view, run, i, ep) {
  const e = isObj(ep) ? ep : {};
  const task = isObj(e.task) ? e.task : {};
  const taskKey = String(task.key ?? task.hash ?? JSON.stringify(task.data ?? {}));
  const traces = arr(e.traces);
  const raw = h("pre", { class: "raw" });
  const count = view.header.episodes;
  return h(
    "article",
    { "aria-labelledby": "episode-h" },
    h(
      "nav",
      { "aria-label": "Breadcrumb", class: "crumbs" },
      h("a", { href: href({ run }) }, view.header.title),
      " › ",
      h("a", { href: href({ run, task: taskKey }) }, `task ${taskKey}`),
      " › ",
      `episode #${i + 1}`,
    ),
    h(
      "nav",
      { "aria-label": "Episodes", class: "pager" },
      i > 0
        ? h("a", { href: href({ run, episode: i - 1 }), rel: "prev" }, "← previous episode")
        : null,
      i + 1 < count
        ? h("a", { href: href({ run, episode: i + 1 }), rel: "next" }, "next episode →")
        : null,
    ),
    h("h2", { id: "episode-h" }, `Episode #${i + 1}`, " ", outcome(e.ok === true)),
    facts([
      ["Episode id", text(e.id) || "—"],
      ["Task", taskKey],
      ["Env", isObj(e.env) ? text(e.env.id) || text(e.env.name) || "—" : "—"],
      ["Group", isObj(e.group) ? text(e.group.id) : e.group ? text(e.group) : null],
      ["Traces", traces.length],
    ]),
    arr(e.errors).length ? [h("h3", null, "Episode errors"), errorList(arr(e.errors))] : null,
    traces.map((t, k) => traceSection(isObj(t) ? t : {}, k)),
    h(
      "details",
      { ontoggle: () => (raw.textContent ||= json(ep)) },
      h("summary", null, "Raw episode JSON"),
      raw,
    ),
  );
}
