extension IncidentPage {
    /// The view's one script (served as `/assets/incident.js`, inlined in reports). It reads the API with the key
    /// kept in sessionStorage, or the data a report embeds, and writes every ledger value as text.
    public static let script = #"""
// ActivityLedger incident view: one vanilla module for the page `serve` gives at / and for the file
// `activity-ledger report` writes. Every value from the ledger is put into the page as text (textContent,
// setAttribute), never as HTML, so nothing a client recorded can run here.
"use strict";
(() => {

const KEY_NAME = "activityLedger.apiKey";
const PAGE = 100;
const SVG = "http://www.w3.org/2000/svg";

// ---- JSON: number literals kept as sent -------------------------------------------------------------
// A number whose text JSON.parse would change (4.90, -0.0, 1e3, 12345678901234567890) becomes a Literal, shown
// as its text: the card shows content as the app sent it.
class Literal {
  constructor(text) { this.text = text; }
  toString() { return this.text; }
}
function parse(text) {
  return JSON.parse(text, (key, value, context) => {
    if (typeof value === "number" && context && typeof context.source === "string" && String(value) !== context.source) {
      return new Literal(context.source);
    }
    return value;
  });
}
function literal(value) {
  if (value === null) return "null";
  if (value instanceof Literal) return value.text;
  if (typeof value === "string") return value;
  if (typeof value === "object") return JSON.stringify(value);
  return String(value);
}
// [path, text] pairs of a JSON value, depth first, key order kept: driver.vehicle.make, stops[0].
function flatten(value, path = "", out = []) {
  if (value !== null && typeof value === "object" && !(value instanceof Literal)) {
    const entries = Array.isArray(value) ? value.map((v, i) => [`[${i}]`, v]) : Object.entries(value).map(([k, v]) => [path ? `.${k}` : k, v]);
    if (entries.length === 0) out.push([path || "(empty)", Array.isArray(value) ? "[]" : "{}"]);
    for (const [step, v] of entries) flatten(v, path + step, out);
  } else {
    out.push([path || "(value)", literal(value)]);
  }
  return out;
}

const embeddedNode = document.getElementById("incident-data");
const embedded = embeddedNode ? parse(embeddedNode.textContent) : null;

// ---- DOM helpers ------------------------------------------------------------------------------------
function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) continue;
    if (name === "text") node.textContent = value;
    else if (name.startsWith("on")) node.addEventListener(name.slice(2), value);
    else node.setAttribute(name, value === true ? "" : String(value));
  }
  for (const child of children) if (child !== null && child !== undefined) node.append(child);
  return node;
}
function svg(tag, attrs = {}) {
  const node = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attrs)) node.setAttribute(name, String(value));
  return node;
}
function status(message, isError = false) {
  const node = document.getElementById("status");
  node.textContent = message;
  node.className = isError ? "error" : "";
  node.setAttribute("role", isError ? "alert" : "status");
}
const ms = (text) => Date.parse(text);
const iso = (millis) => new Date(millis).toISOString();
function human(millis) { return iso(millis).replace("T", " ").replace(".000Z", "Z"); }

// ---- The API (the page at /) --------------------------------------------------------------------------
function apiKey() { return sessionStorage.getItem(KEY_NAME); }
async function api(path) {
  const key = apiKey();
  if (!key) throw new Error("type an API key with read scope first");
  const response = await fetch(path, { headers: { Authorization: `Bearer ${key}`, Accept: "application/json" } });
  const text = await response.text();
  if (!response.ok) {
    let reason = text;
    try { const body = JSON.parse(text); reason = body.error?.message ?? body.message ?? body.reason ?? text; } catch (_) {}
    if (typeof reason === "object") reason = JSON.stringify(reason);
    throw new Error(`${response.status}: ${reason}`);
  }
  return { path, text, json: parse(text) };
}
const q = (params) => {
  const search = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== null && v !== undefined && v !== "") search.set(k, v);
  const s = search.toString();
  return s ? `?${s}` : "";
};
const enc = encodeURIComponent;

// A link that shows an answer's JSON as returned (fetched with the key; a plain link could not send it).
function jsonLink(label, answer) {
  const pre = el("pre", { class: "json", hidden: true, tabindex: "0" });
  const button = el("button", {
    type: "button", class: "json-link", "aria-expanded": "false",
    onclick: async () => {
      if (!pre.hidden) { pre.hidden = true; button.setAttribute("aria-expanded", "false"); return; }
      try {
        const current = typeof answer === "function" ? await answer() : answer;
        // A 10k-event answer is megabytes: show its start (the whole answer is one curl away at the path shown).
        const limit = 200000;
        const body = current.text.length > limit ? `${current.text.slice(0, limit)}\n… (${current.text.length} characters in all; shown: the first ${limit})` : current.text;
        pre.textContent = (current.path ? `GET ${current.path}\n\n` : "") + body;
        pre.hidden = false;
        button.setAttribute("aria-expanded", "true");
      } catch (error) { status(error.message, true); }
    },
  }, `JSON: ${label}`);
  return el("span", { class: "json-box" }, button, pre);
}

// ---- Verdicts and event kinds -------------------------------------------------------------------------
const VERDICT_GLYPH = { applied: "●", accepted: "■", superseded: "◆", rejected: "✕", lost: "▲", pending: "○" };
const ROWS = [
  ["content", ["request", "update", "end"]],
  ["pushes", ["push"]],
  ["device", ["observe", "dismiss"]],
  ["tokens & other", ["token", "startToken", "subscribe", "reconcile"]],
];
const rowOf = (type) => Math.max(0, ROWS.findIndex(([, types]) => types.includes(type)));
function verdictCell(verdict, reason) {
  return el("span", { class: `verdict v-${verdict}` }, el("span", { "aria-hidden": "true", text: `${VERDICT_GLYPH[verdict] ?? "?"} ` }), verdict + (reason ? ` (${reason})` : ""));
}

// ---- Phase bands from the cards -------------------------------------------------------------------------
function bands(cards, from, to) {
  const out = [];
  cards.forEach((card, i) => {
    const start = Math.max(ms(card.at), from);
    const end = i + 1 < cards.length ? ms(cards[i + 1].at) : to;
    if (end <= start && i + 1 < cards.length) return;
    const reason = card.dismissedBy ?? card.endedBy;
    const label = card.phase + (reason ? ` · ${reason}` : "");
    const last = out[out.length - 1];
    if (last && last.label === label) last.end = Math.max(end, start);
    else out.push({ start, end: Math.max(end, start), phase: card.phase, label });
  });
  return out;
}
function cardAt(cards, t) {
  let lo = 0, hi = cards.length - 1, found = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (ms(cards[mid].at) <= t) { found = mid; lo = mid + 1; } else hi = mid - 1;
  }
  return found < 0 ? null : cards[found];
}

// ---- Activity view ------------------------------------------------------------------------------------
async function showActivity(activity, at) {
  const view = document.getElementById("view");
  view.replaceChildren(el("p", { text: `Loading ${activity}…` }));
  let report, answer = null;
  if (embedded) {
    report = embedded;
  } else {
    const path = `/v1/activities/${enc(activity)}/incident`;
    answer = await api(path);
    report = answer.json;
    // A deep link outside the default window widens it.
    if (at && (ms(at) < ms(report.from) || ms(at) > ms(report.to))) {
      answer = await api(path + q({ from: ms(at) < ms(report.from) ? at : report.from, to: ms(at) > ms(report.to) ? at : report.to }));
      report = answer.json;
    }
  }
  const from = ms(report.from), to = Math.max(ms(report.to), from + 1000);
  const start = at ? Math.min(Math.max(ms(at), from), to) : to;
  document.title = `${report.activity} · incident view`;

  const title = el("h1", { id: "activity-title" }, `Activity ${report.activity}`);
  const summary = el("p", { class: "summary" },
    `${report.state.attributesType} · window ${human(from)} → ${human(ms(report.to))} · ${report.timeline.entries.length} events · state now: ${report.state.phase}`);
  const links = el("p", { class: "links" });
  if (answer) {
    links.append(jsonLink("incident", answer), " ",
      jsonLink("timeline", () => api(`/v1/activities/${enc(report.activity)}/timeline${q({ from: report.from, to: report.to })}`)), " ",
      jsonLink("audit", () => api(`/v1/activities/${enc(report.activity)}/audit`)));
  } else {
    links.append(jsonLink("report data", { text: embeddedNode.textContent }));
  }

  // Axis.
  const width = 960, laneHeight = 26, top = 24, height = top + ROWS.length * laneHeight + 28;
  const x = (t) => 110 + ((t - from) / (to - from)) * (width - 120);
  const axis = svg("svg", { id: "axis", viewBox: `0 0 ${width} ${height}`, role: "img", "aria-label": `Time axis of ${report.activity} with phase bands and events` });
  for (const band of bands(report.cards, from, to)) {
    const rect = svg("rect", { x: x(band.start), y: top - 6, width: Math.max(1, x(band.end) - x(band.start)), height: ROWS.length * laneHeight + 6, class: `band phase-${band.phase}`, "data-phase": band.phase });
    const t = svg("title"); t.textContent = `${band.label}: ${human(band.start)} → ${human(band.end)}`; rect.append(t);
    axis.append(rect);
    if (x(band.end) - x(band.start) > 48) {
      const label = svg("text", { x: x(band.start) + 3, y: top + 4, class: "band-label" }); label.textContent = band.label; axis.append(label);
    }
  }
  ROWS.forEach(([name], i) => {
    const label = svg("text", { x: 4, y: top + i * laneHeight + laneHeight / 2 + 4, class: "lane-label" }); label.textContent = name; axis.append(label);
  });
  const verdictOf = new Map(report.audit.deliveries.map((d) => [d.event, d]));
  // Marks: one per event, or one per (lane, pixel, kind) when there are many (the count is in its title).
  const buckets = new Map();
  for (const entry of report.timeline.entries) {
    const e = entry.event, t = ms(e.at), lane = rowOf(e.type);
    const verdict = verdictOf.get(e.id)?.verdict ?? null;
    const px = Math.round(x(t));
    const keyOf = report.timeline.entries.length > 2000 ? `${lane}:${px}:${e.type}:${verdict}` : e.id ?? `${e.position}`;
    const bucket = buckets.get(keyOf);
    if (bucket) { bucket.count += 1; bucket.last = e; continue; }
    buckets.set(keyOf, { lane, px, t, type: e.type, verdict, count: 1, first: e, last: e });
  }
  for (const b of buckets.values()) {
    const cy = top + b.lane * laneHeight + laneHeight / 2;
    const mark = b.verdict ? svg("text", { x: b.px, y: cy + 5, class: `mark type-${b.type} v-${b.verdict}`, "text-anchor": "middle" }) : svg("circle", { cx: b.px, cy, r: b.count > 1 ? 5 : 4, class: `mark type-${b.type}` });
    if (b.verdict) mark.textContent = VERDICT_GLYPH[b.verdict] ?? "?";
    const t = svg("title");
    t.textContent = b.count > 1 ? `${b.count} × ${b.type}${b.verdict ? ` (${b.verdict})` : ""} around ${human(b.t)}` : `${b.type} ${b.first.id ?? ""} at ${b.first.at}${b.verdict ? ` — ${b.verdict}` : ""}`;
    mark.append(t);
    axis.append(mark);
  }
  const tickCount = 6;
  for (let i = 0; i <= tickCount; i++) {
    const t = from + ((to - from) * i) / tickCount;
    const tick = svg("text", { x: x(t), y: height - 6, class: "tick", "text-anchor": i === 0 ? "start" : i === tickCount ? "end" : "middle" });
    tick.textContent = iso(t).slice(11, 19);
    axis.append(tick);
  }
  const cursor = svg("line", { y1: top - 8, y2: height - 20, class: "cursor" });
  axis.append(cursor);

  // Slider: arrows jump between moments (events and deadlines), Shift+arrows ±1 minute, PageUp/Down ±10 minutes.
  const moments = [...new Set([from, ...report.cards.map((c) => ms(c.at)), to])].filter((t) => t >= from && t <= to).sort((a, b) => a - b);
  const slider = el("input", { id: "slider", type: "range", min: from, max: to, step: "any", value: start, "aria-label": "Time: the Lock Screen card shows the activity as of this time" });
  const timeOut = el("output", { id: "slider-time", for: "slider" });
  const prev = el("button", { type: "button", id: "prev-moment", text: "◀ previous change" });
  const next = el("button", { type: "button", id: "next-moment", text: "next change ▶" });
  const card = el("section", { id: "card", class: "card", "aria-live": "polite", "aria-label": "Lock Screen card" });
  let pending = 0;
  const setTime = async (t, push = true) => {
    t = Math.min(Math.max(t, from), to);
    slider.value = String(t);
    timeOut.textContent = iso(t);
    slider.setAttribute("aria-valuetext", iso(t));
    cursor.setAttribute("x1", x(t)); cursor.setAttribute("x2", x(t));
    if (push && !embedded) history.replaceState(null, "", `${location.pathname}${q({ at: iso(t) })}`);
    const ticket = ++pending;
    if (embedded) {
      renderCard(card, report, cardAt(report.cards, t), iso(t), null);
    } else {
      card.setAttribute("aria-busy", "true");
      const path = `/v1/activities/${enc(report.activity)}/state${q({ at: iso(t) })}`;
      try {
        const state = await api(path);
        if (ticket === pending) renderCard(card, report, state.json, iso(t), state);
      } catch (error) {
        if (ticket === pending) renderCard(card, report, null, iso(t), null, error.message);
      } finally {
        if (ticket === pending) card.removeAttribute("aria-busy");
      }
    }
  };
  const step = (direction) => {
    const t = Number(slider.value);
    const target = direction > 0 ? moments.find((m) => m > t) : [...moments].reverse().find((m) => m < t);
    if (target !== undefined) setTime(target);
  };
  let inputTimer = null;
  slider.addEventListener("input", () => {
    const t = Number(slider.value);
    timeOut.textContent = iso(t);
    cursor.setAttribute("x1", x(t)); cursor.setAttribute("x2", x(t));
    clearTimeout(inputTimer);
    inputTimer = setTimeout(() => setTime(t), embedded ? 0 : 120);
  });
  slider.addEventListener("keydown", (event) => {
    const t = Number(slider.value);
    const jumps = { PageUp: 600000, PageDown: -600000 };
    if ((event.key === "ArrowRight" || event.key === "ArrowUp") && !event.shiftKey) step(1);
    else if ((event.key === "ArrowLeft" || event.key === "ArrowDown") && !event.shiftKey) step(-1);
    else if (event.key === "ArrowRight" || event.key === "ArrowUp") setTime(t + 60000);
    else if (event.key === "ArrowLeft" || event.key === "ArrowDown") setTime(t - 60000);
    else if (event.key in jumps) setTime(t + jumps[event.key]);
    else if (event.key === "Home") setTime(from);
    else if (event.key === "End") setTime(to);
    else return;
    event.preventDefault();
  });
  prev.addEventListener("click", () => step(-1));
  next.addEventListener("click", () => step(1));

  view.replaceChildren(
    title, summary, links,
    el("figure", { class: "axis" }, axis, legend()),
    el("div", { class: "slider-row" }, el("label", { for: "slider", text: "As of" }), slider, timeOut, prev, next),
    el("div", { class: "columns" }, card, tokenHistory(report)),
    deliveryMatrix(report),
  );
  await setTime(start, Boolean(at));
}

function legend() {
  const box = el("figcaption", { class: "legend" });
  for (const phase of ["pending", "active", "stale", "ended", "dismissed"]) box.append(el("span", { class: `swatch phase-${phase}` }, phase));
  for (const [verdict, glyph] of Object.entries(VERDICT_GLYPH)) box.append(el("span", { class: `key v-${verdict}` }, `${glyph} ${verdict}`));
  box.append(el("span", { class: "key" }, "● other events by lane"));
  return box;
}

function renderCard(node, report, state, asOf, answer, error) {
  node.replaceChildren(el("h2", { text: "Lock Screen" }));
  node.append(el("p", { class: "card-asof" }, "as of ", el("time", { id: "card-asof", datetime: asOf, text: asOf })));
  if (error || !state) {
    node.append(el("p", { id: "card-missing", class: "missing", text: error ?? `no such activity at ${asOf}` }));
    return;
  }
  node.dataset.phase = state.phase;
  const reason = state.dismissedBy ? `dismissed by ${state.dismissedBy}` : state.endedBy ? `ended by ${state.endedBy}` : "";
  const facts = el("dl", { class: "facts" });
  const fact = (name, label, value) => facts.append(el("dt", { text: label }), el("dd", { "data-field": name, text: value }));
  fact("phase", "Phase", state.phase);
  fact("reason", "Why", reason || "—");
  fact("staleDate", "Stale date", state.staleDate ?? state.displayed?.staleDate ?? "none");
  fact("token", "Token", state.token ?? "none");
  fact("tokenDead", "Token alive", state.token ? (state.tokenDead ? "no (dead: APNs 410)" : "yes") : "—");
  fact("displayedTimestamp", "Content timestamp", state.displayed ? literal(state.displayed.timestamp) : "nothing displayed");
  fact("events", "Events so far", literal(state.events));
  node.append(facts);
  node.append(el("h3", { text: "Displayed content" }));
  node.append(keyValues("card-content", state.displayed ? state.displayed.state : null, "nothing displayed"));
  node.append(el("h3", { text: `Attributes (${report.state.attributesType})` }));
  node.append(keyValues("card-attributes", report.state.attributes, "none"));
  if (answer) node.append(jsonLink(`state at ${asOf}`, answer));
}

function keyValues(id, value, empty) {
  if (value === null || value === undefined) return el("p", { id, class: "missing", text: empty });
  const table = el("table", { id, class: "kv" }, el("thead", {}, el("tr", {}, el("th", { scope: "col", text: "key" }), el("th", { scope: "col", text: "value" }))));
  const body = el("tbody");
  for (const [path, text] of flatten(value)) body.append(el("tr", { "data-key": path }, el("th", { scope: "row", text: path }), el("td", { text })));
  table.append(body);
  return table;
}

function tokenHistory(report) {
  const box = el("section", { id: "tokens", "aria-label": "Token history" }, el("h2", { text: "Token history" }));
  const history = report.state.tokenHistory ?? [];
  if (!history.length) { box.append(el("p", { class: "missing", text: "no push token recorded" })); return box; }
  const table = el("table", { class: "grid" }, el("thead", {}, el("tr", {}, ...["token", "since", "environment", "status"].map((h) => el("th", { scope: "col", text: h })))));
  const body = el("tbody");
  for (const record of history) {
    body.append(el("tr", { "data-token": record.token },
      el("td", { class: "mono", text: record.token }), el("td", { text: record.at }), el("td", { text: record.environment ?? "—" }),
      el("td", { class: record.deadFrom ? "dead" : "" , text: record.deadFrom ? `✕ dead from ${record.deadFrom}` : "alive" })));
  }
  table.append(body);
  box.append(table);
  return box;
}

function deliveryMatrix(report) {
  const deliveries = report.audit.deliveries;
  const box = el("section", { id: "deliveries", "aria-label": "Delivery matrix" }, el("h2", { text: `Deliveries (${deliveries.length} updates and ends)` }));
  const table = el("table", { class: "grid", id: "delivery-table" });
  table.append(el("thead", {}, el("tr", {}, ...["update", "type", "at", "timestamp", "verdict", "deciding push", "observation", "pushes"].map((h) => el("th", { scope: "col", text: h })))));
  const body = el("tbody");
  table.append(body);
  const pager = el("p", { class: "pager" });
  let page = 0;
  const show = () => {
    body.replaceChildren();
    for (const d of deliveries.slice(page * PAGE, (page + 1) * PAGE)) {
      const id = embedded ? el("span", { class: "mono", text: d.event }) : el("a", { class: "mono", href: `/updates/${enc(d.event)}`, text: d.event });
      body.append(el("tr", { "data-event": d.event, "data-verdict": d.verdict, "data-reason": d.reason ?? "" },
        el("td", {}, id), el("td", { text: d.type }), el("td", { text: d.at }), el("td", { text: literal(d.timestamp) }),
        el("td", {}, verdictCell(d.verdict, d.reason)), el("td", { class: "mono", text: d.decidingPush ?? "—" }),
        el("td", { class: "mono", text: d.observation ?? "—" }), el("td", { text: String(d.pushes.length) })));
    }
    const pages = Math.max(1, Math.ceil(deliveries.length / PAGE));
    pager.replaceChildren(
      el("button", { type: "button", disabled: page === 0, onclick: () => { page -= 1; show(); }, text: "previous" }),
      ` page ${page + 1} of ${pages} `,
      el("button", { type: "button", disabled: page + 1 >= pages, onclick: () => { page += 1; show(); }, text: "next" }));
  };
  show();
  box.append(table, pager);
  return box;
}

// ---- Update view --------------------------------------------------------------------------------------
async function showUpdate(event) {
  const view = document.getElementById("view");
  const title = el("h1", { id: "update-title", text: `Update ${event}` });
  const info = el("p", { class: "summary", text: "Loading…" });
  const table = el("table", { class: "grid", id: "reach-table" });
  table.append(el("thead", {}, el("tr", {}, ...["activity", "verdict", "at", "timestamp", "deciding push", "observation"].map((h) => el("th", { scope: "col", text: h })))));
  const body = el("tbody");
  table.append(body);
  const more = el("button", { type: "button", id: "more-reach", hidden: true, text: `next ${PAGE}` });
  const links = el("p", { class: "links" });
  view.replaceChildren(title, info, links, table, more);
  let shown = 0;
  const load = async (cursor) => {
    const answer = await api(`/v1/updates/${enc(event)}/audit${q({ limit: PAGE, cursor })}`);
    const audit = answer.json;
    title.textContent = `${audit.type === "end" ? "End" : "Update"} ${audit.event}`;
    for (const d of audit.deliveries) {
      body.append(el("tr", { "data-activity": d.activity, "data-verdict": d.verdict },
        el("td", {}, el("a", { href: `/activities/${enc(d.activity)}${q({ at: d.at })}`, text: d.activity })),
        el("td", {}, verdictCell(d.verdict, d.reason)), el("td", { text: d.at }), el("td", { text: literal(d.timestamp) }),
        el("td", { class: "mono", text: d.decidingPush ?? "—" }), el("td", { class: "mono", text: d.observation ?? "—" })));
    }
    shown += audit.deliveries.length;
    info.textContent = `on ${audit.stream} · ${audit.subscribers ?? shown} addressed ${audit.subscribers === 1 ? "activity" : "activities"} · showing ${shown}`;
    links.replaceChildren(jsonLink("this page of the audit", answer));
    more.hidden = !audit.nextCursor;
    more.onclick = () => load(audit.nextCursor).catch((error) => status(error.message, true));
  };
  await load(null);
}

// ---- Search -------------------------------------------------------------------------------------------
function searchForm() {
  const kind = el("select", { id: "search-kind", "aria-label": "Search by" },
    el("option", { value: "activity", text: "activity id" }), el("option", { value: "installation", text: "installation" }),
    el("option", { value: "tokenPrefix", text: "token (prefix)" }), el("option", { value: "channel", text: "channel" }),
    el("option", { value: "update", text: "update event id" }));
  const text = el("input", { id: "search-text", type: "search", required: true, "aria-label": "Search text", placeholder: "RIDE-8812, a token prefix, a channel…" });
  const results = el("div", { id: "search-results" });
  const form = el("form", { id: "search-form", role: "search" }, kind, text, el("button", { type: "submit", text: "Find" }));
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const value = text.value.trim();
    if (!value) return;
    if (kind.value === "activity") { location.assign(`/activities/${enc(value)}`); return; }
    if (kind.value === "update") { location.assign(`/updates/${enc(value)}`); return; }
    try {
      const answer = await api(`/v1/activities${q({ [kind.value]: value, limit: PAGE })}`);
      const list = el("ul", { class: "results" });
      for (const a of answer.json.activities) {
        list.append(el("li", {}, el("a", { href: `/activities/${enc(a.activity)}`, text: a.activity }), ` — ${a.phase}${a.token ? ` · token ${a.token.slice(0, 12)}…` : ""}`));
      }
      results.replaceChildren(el("p", { text: `${answer.json.activities.length}${answer.json.nextCursor ? "+" : ""} found` }), list, jsonLink("list", answer));
      status("");
    } catch (error) { status(error.message, true); }
  });
  return el("section", { class: "search" }, form, results);
}

function keyForm(onReady) {
  const input = el("input", { id: "api-key", type: "password", autocomplete: "off", spellcheck: "false", "aria-label": "API key" });
  const form = el("form", { id: "key-form" }, el("label", { for: "api-key", text: "API key " }), input, el("button", { type: "submit", text: "Use key" }),
    el("button", { type: "button", id: "forget-key", text: "Forget key", onclick: () => { sessionStorage.removeItem(KEY_NAME); location.reload(); } }));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    if (!input.value.trim()) return;
    sessionStorage.setItem(KEY_NAME, input.value.trim());
    input.value = "";
    onReady();
  });
  return form;
}

// ---- Start --------------------------------------------------------------------------------------------
async function route() {
  status("");
  const view = document.getElementById("view");
  try {
    if (embedded) { await showActivity(embedded.activity, null); return; }
    document.getElementById("key-state").textContent = apiKey() ? "key set for this browser session" : "no key yet";
    const path = location.pathname;
    // ?at= takes RFC 3339 or Unix seconds, as the API does; anything else is said and ignored.
    let at = new URLSearchParams(location.search).get("at");
    if (at !== null) {
      const millis = /^-?\d+(\.\d+)?$/.test(at) ? Number(at) * 1000 : Date.parse(at);
      if (Number.isFinite(millis) && Math.abs(millis) <= 8.64e15) {
        at = iso(millis);
      } else {
        status(`at: "${at}" is not an RFC 3339 time or Unix seconds; showing the end of the window`, true);
        at = null;
      }
    }
    if (!apiKey()) { view.replaceChildren(el("p", { id: "need-key", text: "Type an API key (read scope) above to open the ledger." })); return; }
    if (path.startsWith("/activities/")) await showActivity(decodeURIComponent(path.slice("/activities/".length)), at);
    else if (path.startsWith("/updates/")) await showUpdate(decodeURIComponent(path.slice("/updates/".length)));
    else view.replaceChildren(el("p", { text: "Find an activity by id, installation, token prefix or channel, or open an update by its event id." }));
  } catch (error) {
    view.replaceChildren(el("p", { class: "missing", id: "load-error", text: error.message }));
    status(error.message, true);
  }
}

if (!embedded) {
  document.getElementById("tools").replaceChildren(keyForm(route), el("span", { id: "key-state" }), searchForm());
}
route();
})();
"""#
}
