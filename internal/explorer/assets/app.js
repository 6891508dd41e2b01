// The explorer page: sends the robots.txt, product tokens and URLs to
// POST /api/decide as the person types, and draws the answer: the file line
// by line with its warnings, the groups that apply boxed, each deciding rule
// and each line stating an AI usage preference highlighted, where crawlers
// stop reading a file over 500 KiB and the lines they never read, and one
// verdict per URL with its preferences. The page's state (the robots.txt or the
// origin it was fetched from, the product tokens, the URLs and the decision
// selected) is kept in the page's URL, so that a decision can be linked.
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
  saveState();
  showError(r.data.error || "");
  if (r.data.decisions) {
    last = r.data;
    draw();
  } else {
    // Without an answer the file is drawn plain, unless it was refused for
    // its size: a hundred thousand lines redrawn on each key would stall
    // the page.
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
  const cut = d && d.cut ? d.cut.line : 0;
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
    if (n === cut) {
      if (box !== root) box = root;
      root.append(cutMark(d.cut));
    }
    const line = el("div", { class: "line" + (cut && n >= cut ? " unread" : ""), "data-line": String(n), id: "L" + n },
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
    if (d.cut) summary += `; crawlers read lines 1–${d.cut.line - 1} (the first ${kib(d.cut.bytes)} of ${kib(d.cut.size)}) and never the ${unread(d.cut)} after`;
  }
  $("summary").textContent = summary;
  if (d) showLine(decidingLine(d));
}

function kib(bytes) {
  return `${Math.round(bytes / 1024)} KiB`;
}

function unread(cut) {
  const n = cut.lines - cut.line + 1;
  return `${n} line${n === 1 ? "" : "s"}`;
}

// cutMark is drawn above the first line crawlers never read.
function cutMark(cut) {
  return el("div", { class: "cut", id: "cut", role: "separator", "data-line": String(cut.line) },
    `✂ 500 KiB: crawlers stop reading here. Lines ${cut.line}–${cut.lines} below (${unread(cut)}, ` +
    `${kib(cut.size - cut.bytes)}) are never read: their rules apply to no crawler (RFC 9309 section 2.5).`);
}

// decidingLine is the line to show for the decision selected: the rule
// that decides it, else the rule past the cut that would, else the first
// line stating one of its preferences, else the first group that applies;
// 0 when there is none.
function decidingLine(d) {
  const dec = d.decisions[active];
  if (!dec || dec.error) return 0;
  if (dec.rule) return dec.rule.line;
  if (dec.pastCut && dec.pastCut.rule) return dec.pastCut.rule.line;
  for (const p of dec.preferences || []) if (p.from.length) return p.from[0].line;
  return d.selected.length ? d.selected[0].line : 0;
}

// showLine scrolls the file panel, and only it, so that line n is in
// view, in its middle when it was out of view.
function showLine(n) {
  const file = $("file"), line = n && $("L" + n);
  if (!line) return;
  const f = file.getBoundingClientRect(), l = line.getBoundingClientRect();
  if (l.top >= f.top && l.bottom <= f.bottom) return;
  file.scrollTop += l.top - f.top - (file.clientHeight - l.height) / 2;
}

function drawDecisions(d) {
  const list = $("decisions");
  // The file's text is encoded once per drawing, not once per link.
  const base = stateURL(0);
  const link = (i) => (i ? base + "&selected=" + i : base);
  list.replaceChildren(...d.decisions.map((dec, i) => {
    const state = dec.error ? "error" : dec.allowed ? "allowed" : "disallowed";
    const verdict = { error: "⚠ cannot decide", allowed: "✓ allowed", disallowed: "✗ disallowed" }[state];
    const item = el("li", { class: "decision " + state + (i === active ? " active" : ""),
      "data-decision": state, "data-index": String(i), tabindex: "0" },
      el("div", { class: "head" },
        el("span", { class: "verdict", text: verdict }),
        el("code", { class: "url", text: dec.url }),
        el("a", { class: "permalink", href: link(i), title: "A link to this page deciding this URL", text: "🔗 link" })));
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
    if (dec.pastCut) {
      item.dataset.pastCut = dec.pastCut.rule ? String(dec.pastCut.rule.line) : "";
      item.append(el("div", { class: "past-cut", text: "✂ " + dec.pastCut.reason }));
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
  saveState();
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
let fetchedFrom = ""; // the origin the robots.txt was fetched from, while not edited
robotsEl.addEventListener("input", () => {
  if (!edited) { edited = true; $("source").textContent += " (edited)"; }
  fetchedFrom = "";
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

$("fetch-form").addEventListener("submit", (ev) => {
  ev.preventDefault();
  fetchLive($("origin").value.trim());
});

// fetchLive fetches origin's robots.txt through the server into the editor
// and decides on it.
async function fetchLive(origin) {
  const out = $("fetch-result");
  out.hidden = false;
  out.className = "fetch-result";
  out.textContent = "Fetching…";
  $("fetch").disabled = true;
  try {
    const r = await post("/api/fetch", { origin });
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
    fetchedFrom = origin;
    decide();
  } catch (e) {
    out.classList.add("failed");
    out.textContent = "⚠ the explorer server did not answer: " + e.message;
  } finally {
    $("fetch").disabled = false;
  }
}

// The page's URL holds its state in its query: robots (the file's text)
// or origin (where it is fetched from live, when it was fetched and not
// edited since), agents (the product tokens, comma-separated), urls (one
// a line) and selected (the index of the decision whose line is shown).
function stateURL(selected) {
  const q = new URLSearchParams();
  if (fetchedFrom) q.set("origin", fetchedFrom);
  else q.set("robots", robotsEl.value);
  q.set("agents", agents().join(", "));
  q.set("urls", urlsEl.value.split("\n").map((u) => u.trim()).filter((u) => u !== "").join("\n"));
  if (selected) q.set("selected", String(selected));
  return location.pathname + "?" + q.toString();
}

// saveState puts the page's state in its URL, replacing the history entry
// rather than adding one per key typed. A browser that refuses an address
// that long leaves the last one: the page itself goes on.
function saveState() {
  try {
    history.replaceState(null, "", stateURL(active) + location.hash);
  } catch (e) {
    console.warn("the page's state is too large for its address:", e.message);
  }
}

async function start() {
  const q = new URLSearchParams(location.search);
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
  // A linked state replaces the server's, piece by piece.
  if (q.has("robots")) {
    robotsEl.value = q.get("robots");
    $("source").textContent = "(from the page's link)";
  }
  if (q.has("agents")) agentsEl.value = q.get("agents");
  if (q.has("urls")) urlsEl.value = q.get("urls");
  const sel = Number(q.get("selected"));
  if (Number.isInteger(sel) && sel > 0) active = sel;
  if (q.has("origin") && !q.has("robots")) {
    $("origin").value = q.get("origin");
    fetchLive(q.get("origin"));
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
