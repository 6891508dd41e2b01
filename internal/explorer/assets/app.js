// The explorer page: sends the robots.txt, product tokens and URLs to
// POST /api/decide as the person types, and draws the answer: the file line
// by line with its warnings, the groups that apply boxed, each deciding rule
// and each line stating an AI usage preference highlighted, and one verdict
// per URL with its preferences.
"use strict";

const $ = (id) => document.getElementById(id);
const robotsEl = $("robots"), agentsEl = $("agents"), urlsEl = $("urls");

let seq = 0;          // number of the latest request; older answers are dropped
let pending = null;   // AbortController of the request in flight
let timer = 0;
let active = 0;       // index of the decision whose line is brought forward
let last = null;      // the latest answer drawn
let urlLines = [];    // for each URL sent, its line in the URLs box

function el(tag, attrs, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") e.className = v;
    else if (k === "text") e.textContent = v;
    else e.setAttribute(k, v);
  }
  for (const k of kids) if (k != null) e.append(k);
  return e;
}

// splitLines splits as the parser does: LF, CRLF or CR end a line, a
// leading byte order mark is skipped, and a final line end adds no line.
function splitLines(text) {
  text = text.replace(/^\uFEFF/, "");
  if (text === "") return [];
  const lines = text.split(/\r\n|\r|\n/);
  if (lines[lines.length - 1] === "") lines.pop();
  return lines;
}

function agents() {
  return agentsEl.value.split(/[\s,]+/).filter((a) => a !== "");
}

function urls() {
  const out = [];
  urlLines = [];
  urlsEl.value.split("\n").forEach((u, i) => {
    u = u.trim();
    if (u !== "") { out.push(u); urlLines.push(i); }
  });
  return out;
}

function showError(msg) {
  $("error").textContent = msg ? "⚠ " + msg : "";
  $("error").hidden = !msg;
}

function schedule() {
  clearTimeout(timer);
  timer = setTimeout(decide, 150);
}

async function post(path, body, signal) {
  const resp = await fetch(path, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(body),
    signal,
  });
  let data;
  try {
    data = await resp.json();
  } catch {
    data = { error: `the server answered ${resp.status} without JSON` };
  }
  return { status: resp.status, data };
}

async function decide() {
  if (pending) pending.abort();
  pending = new AbortController();
  const n = ++seq;
  const body = { robots: robotsEl.value, agents: agents(), urls: urls() };
  let r;
  try {
    r = await post("/api/decide", body, pending.signal);
  } catch (e) {
    if (e.name !== "AbortError") showError("the explorer server did not answer: " + e.message);
    return;
  }
  if (n !== seq) return;
  showError(r.data.error || "");
  if (r.data.decisions) {
    last = r.data;
    draw();
  } else {
    // Without an answer the file is drawn plain, unless it was refused for
    // its size: thousands of lines redrawn on each key would stall the page.
    last = null;
    $("decisions").replaceChildren();
    $("token").textContent = "";
    drawFile(r.status === 413 ? [] : splitLines(robotsEl.value), null);
    if (r.status === 413) $("summary").textContent = "Not drawn: see the message above.";
  }
  document.body.dataset.state = r.status === 200 ? "ready" : "error";
}

function ruleText(rule) {
  return (rule.type === "allow" ? "Allow: " : "Disallow: ") + rule.pattern;
}

function groupName(g) {
  return "User-agent: " + g.agents.join(", ");
}

function span(g) {
  return g.line === g.endLine ? `line ${g.line}` : `lines ${g.line}–${g.endLine}`;
}

function draw() {
  const d = last;
  if (active >= d.decisions.length) active = 0;
  const who = agents().join(", ");
  let tok;
  if (d.token === "") tok = `No group applies to ${who}: every URL is allowed.`;
  else if (d.token === "*") tok = `No group names ${who}, so the * group applies (${d.selected.map(span).join(", ")}).`;
  else tok = `The groups naming ${d.token} apply (${d.selected.map(span).join(", ")}); the * group does not.`;
  $("token").textContent = tok;
  drawFile(splitLines(robotsEl.value), d);
  drawDecisions(d);
}

// drawFile draws the file line by line: warnings under their lines, the
// groups boxed (those that apply drawn bold), and each deciding rule marked
// allow or disallow in words as well as colour.
function drawFile(lines, d) {
  const warnings = new Map(), deciding = new Map(), groupAt = new Map();
  const selected = new Set();
  if (d) {
    for (const w of d.warnings) {
      if (!warnings.has(w.line)) warnings.set(w.line, []);
      warnings.get(w.line).push(w);
    }
    d.decisions.forEach((dec, i) => {
      if (!dec.rule) return;
      if (!deciding.has(dec.rule.line)) deciding.set(dec.rule.line, { type: dec.rule.type, urls: [], active: false });
      const m = deciding.get(dec.rule.line);
      m.urls.push(dec.url);
      if (i === active) m.active = true;
    });
    for (const g of d.selected) selected.add(g.line);
    for (const g of d.groups) groupAt.set(g.line, g);
  }
  const stating = preferenceLines(d);
  const file = $("file");
  const root = document.createDocumentFragment();
  let box = root, end = 0;
  lines.forEach((text, i) => {
    const n = i + 1;
    const g = groupAt.get(n);
    if (g) {
      const sel = selected.has(g.line);
      const label = el("div", { class: "group-label" },
        (sel ? "▣ applies: " : "group: ") + groupName(g) + " · " + span(g));
      box = el("div", { class: "group" + (sel ? " selected" : ""), "data-group": `${g.line}-${g.endLine}` }, label);
      root.append(box);
      end = g.endLine;
    }
    const line = el("div", { class: "line", "data-line": String(n), id: "L" + n },
      el("span", { class: "ln", text: String(n) }),
      el("code", { class: "code", text: text === "" ? " " : text }));
    const m = deciding.get(n);
    if (m) {
      line.classList.add(m.type === "allow" ? "hl-allow" : "hl-disallow");
      if (m.active) line.classList.add("active");
      const word = m.type === "allow" ? "✓ allow" : "✗ disallow";
      line.append(el("span", { class: "mark", title: m.urls.join("\n"), text: `${word} ← ${m.urls.join(", ")}` }));
    }
    markPreference(line, stating.get(n));
    // A note marks a valid line without effect: shown, but not as a fault.
    for (const w of warnings.get(n) || []) {
      line.classList.add(w.severity === "note" ? "noted" : "warned");
      line.append(el("div", { class: w.severity === "note" ? "note" : "warning", text: (w.severity === "note" ? "ℹ note: " : w.severity === "error" ? "⚠ error: " : "⚠ ") + w.message }));
    }
    box.append(line);
    if (box !== root && n >= end) box = root;
  });
  file.replaceChildren(root);
  let summary = `${lines.length} line${lines.length === 1 ? "" : "s"}`;
  if (d) {
    const notes = d.warnings.filter((w) => w.severity === "note").length;
    const errors = d.warnings.filter((w) => w.severity === "error").length, warned = d.warnings.length - notes - errors;
    summary += `, ${d.groups.length} group${d.groups.length === 1 ? "" : "s"}, ` +
      (errors ? `${errors} error${errors === 1 ? "" : "s"}, ` : "") +
      `${warned} warning${warned === 1 ? "" : "s"}`;
    if (notes) summary += `, ${notes} note${notes === 1 ? "" : "s"}`;
  }
  $("summary").textContent = summary;
  const act = file.querySelector(".line.active");
  if (act) act.scrollIntoView({ block: "nearest" });
}

function drawDecisions(d) {
  const list = $("decisions");
  list.replaceChildren(...d.decisions.map((dec, i) => {
    const state = dec.error ? "error" : dec.allowed ? "allowed" : "disallowed";
    const verdict = { error: "⚠ cannot decide", allowed: "✓ allowed", disallowed: "✗ disallowed" }[state];
    const item = el("li", { class: "decision " + state + (i === active ? " active" : ""),
      "data-decision": state, "data-index": String(i), tabindex: "0" },
      el("div", { class: "head" },
        el("span", { class: "verdict", text: verdict }),
        el("code", { class: "url", text: dec.url })));
    if (dec.error) {
      item.append(el("div", { class: "reason", text: dec.error }));
      return item;
    }
    if (dec.rule) {
      item.dataset.line = String(dec.rule.line);
      item.append(el("div", { class: "rule" }, "by ",
        el("a", { href: "#L" + dec.rule.line, text: "line " + dec.rule.line }), ": ",
        el("code", { text: ruleText(dec.rule) })));
    }
    item.append(el("div", { class: "reason", text: dec.reason }));
    if (!dec.rule && dec.groups.length) {
      item.append(el("div", { class: "reason",
        text: "checked only " + dec.groups.map((g) => `${groupName(g)} (${span(g)})`).join("; ") }));
    }
    if (dec.path && dec.path !== dec.url) {
      item.append(el("div", { class: "path", text: "matched as " + dec.path }));
    }
    if (dec.preferences) item.append(drawPreferences(dec));
    // Only the deciding line's warnings: the file shows the others by
    // their lines.
    for (const w of (dec.warnings || []).filter((w) => dec.rule && w.line === dec.rule.line)) {
      item.append(el("div", { class: w.severity === "note" ? "note" : "warning",
        text: `${w.severity === "note" ? "ℹ note:" : "⚠"} line ${w.line}: ${w.message}` }));
    }
    return item;
  }));
}

// preferenceLines maps each line that states a URL's AI usage preference
// to what it states and for which URLs: line → {says: Set, urls: [], active}.
function preferenceLines(d) {
  const out = new Map();
  if (!d) return out;
  d.decisions.forEach((dec, i) => {
    for (const p of dec.preferences || []) {
      for (const f of p.from) {
        if (!out.has(f.line)) out.set(f.line, { says: new Set(), urls: [], active: false });
        const m = out.get(f.line);
        m.says.add(`${p.label}=${p.value}`);
        if (!m.urls.includes(dec.url)) m.urls.push(dec.url);
        if (i === active) m.active = true;
      }
    }
  });
  return out;
}

// markPreference highlights a line that states a preference, in words as
// well as colour: "◆ train-ai=n ← /page".
function markPreference(line, m) {
  if (!m) return;
  line.classList.add("hl-pref");
  if (m.active) line.classList.add("active");
  line.append(el("span", { class: "mark pref-mark", title: m.urls.join("\n"),
    text: `◆ ${[...m.says].join(" ")} ← ${m.urls.join(", ")}` }));
}

// drawPreferences lists a URL's preferences, one per label, each with the
// lines that stated it linked.
function drawPreferences(dec) {
  const box = el("div", { class: "prefs" }, "AI use: ");
  for (const p of dec.preferences) {
    const chip = el("span", { class: "pref pref-" + (p.value === "unknown" ? "unknown" : p.value),
      "data-label": p.label, "data-value": p.value }, `${p.label}=${p.value}`);
    p.from.forEach((f, k) => {
      chip.append(k === 0 ? " (" : ", ", el("a", { href: "#L" + f.line, title: f.directive, text: "line " + f.line }));
      if (k === p.from.length - 1) chip.append(")");
    });
    box.append(chip, " ");
  }
  if (!dec.allowed) box.append(el("span", { class: "pref-note", text: "disallowed: no Content-Usage applies" }));
  return box;
}

function setActive(i) {
  if (!last || i === active || i < 0 || i >= last.decisions.length) return;
  active = i;
  drawFile(splitLines(robotsEl.value), last);
  drawDecisions(last);
}

// The decision under the pointer, focused, or on the caret's line in the
// URLs box is the one whose rule is brought forward in the file.
function activateFrom(ev) {
  const item = ev.target.closest && ev.target.closest(".decision");
  if (item) setActive(Number(item.dataset.index));
}
$("decisions").addEventListener("mouseover", activateFrom);
$("decisions").addEventListener("focusin", activateFrom);
$("decisions").addEventListener("click", activateFrom);

function caretURL() {
  const line = urlsEl.value.slice(0, urlsEl.selectionStart).split("\n").length - 1;
  const i = urlLines.indexOf(line);
  if (i >= 0) setActive(i);
}
urlsEl.addEventListener("keyup", caretURL);
urlsEl.addEventListener("click", caretURL);

let edited = false;
robotsEl.addEventListener("input", () => {
  if (!edited) { edited = true; $("source").textContent += " (edited)"; }
  schedule();
});
agentsEl.addEventListener("input", schedule);
urlsEl.addEventListener("input", schedule);

function when(t) {
  return t ? new Date(t).toLocaleString() : "";
}

const meaning = {
  parsed: "its rules apply",
  unavailable: "crawlers may fetch every URL",
  unreachable: "crawlers must fetch no URL until it can be read",
};

$("fetch-form").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  const out = $("fetch-result");
  out.hidden = false;
  out.className = "fetch-result";
  out.textContent = "Fetching…";
  $("fetch").disabled = true;
  try {
    const r = await post("/api/fetch", { origin: $("origin").value.trim() });
    const d = r.data;
    if (r.status !== 200) {
      out.classList.add("failed");
      out.textContent = "⚠ " + d.error;
      return;
    }
    out.dataset.outcome = d.outcome;
    out.classList.add(d.outcome);
    let text = `${d.url} → ` + (d.statusCode ? `HTTP ${d.statusCode}: ` : "") +
      `${d.outcome}: ${meaning[d.outcome] || ""}.`;
    if (d.fetchError) text += ` (${d.fetchError})`;
    if (d.retryAt) text += ` Retry after ${when(d.retryAt)}.`;
    if (d.truncated) text += " Only its first 500 KiB count, up to the last whole line.";
    out.textContent = text;
    robotsEl.value = d.robots;
    $("source").textContent = d.outcome === "parsed"
      ? `(fetched from ${d.url} at ${when(d.fetchedAt)})`
      : `(nothing to parse: ${d.url} was ${d.outcome})`;
    edited = false;
    decide();
  } catch (e) {
    out.classList.add("failed");
    out.textContent = "⚠ the explorer server did not answer: " + e.message;
  } finally {
    $("fetch").disabled = false;
  }
});

async function start() {
  try {
    const resp = await fetch("/api/start");
    const s = await resp.json();
    robotsEl.value = s.robots;
    agentsEl.value = s.agents.join(", ");
    urlsEl.value = s.urls.join("\n");
    $("source").textContent = s.source ? `(${s.source})` : "";
  } catch (e) {
    showError("the explorer server did not answer: " + e.message);
    return;
  }
  decide();
}

// The comparison: two files side by side, POST /api/compare, and the URLs
// whose decision changes, each with the deciding line of both files.
function lines(el) {
  return el.value.split("\n").map((l) => l.trim()).filter((l) => l !== "");
}

function sideText(d) {
  const verdict = d.allowed ? "✓ allowed" : "✗ disallowed";
  return d.rule ? `${verdict} by line ${d.rule.line}: ${ruleText(d.rule)}` : `${verdict}: ${d.reason.replace(/^(dis)?allowed:? ?/, "")}`;
}

$("compare-copy").addEventListener("click", () => { $("compare-old").value = robotsEl.value; });

$("compare-form").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  const summary = $("compare-summary"), list = $("changes");
  summary.textContent = "Comparing…";
  list.replaceChildren();
  delete $("compare").dataset.state;
  const body = { old: $("compare-old").value, new: $("compare-new").value,
    agents: lines($("compare-agents")), urls: lines($("compare-urls")) };
  let r;
  try {
    r = await post("/api/compare", body);
  } catch (e) {
    summary.textContent = "⚠ the explorer server did not answer: " + e.message;
    $("compare").dataset.state = "error";
    return;
  }
  const d = r.data;
  if (r.status !== 200) {
    summary.textContent = "⚠ " + d.error;
    $("compare").dataset.state = "error";
    return;
  }
  const n = d.changes.length + (d.more || 0);
  summary.textContent = `${n} of ${d.compared} decision${d.compared === 1 ? "" : "s"} change` +
    (d.more ? ` (the first ${d.changes.length} listed)` : "") +
    ` (${d.urls.length} URL${d.urls.length === 1 ? "" : "s"}, crawlers: ${d.agents.join("; ")})` +
    (d.unreadable ? `; not compared: ${d.unreadable.join(", ")}` : "") + ".";
  list.replaceChildren(...d.changes.map((c) => el("li",
    { class: "change " + (c.new.allowed ? "now-allowed" : "now-disallowed"), "data-url": c.url, "data-agent": c.agent },
    el("div", { class: "head" },
      el("code", { class: "url", text: c.url }), " for ", el("code", { class: "agent", text: c.agent })),
    el("div", { class: "sides" },
      el("div", { class: "old", text: "old: " + sideText(c.old) }),
      el("div", { class: "new", text: "new: " + sideText(c.new) })))));
  $("compare").dataset.state = "ready";
});

start();
