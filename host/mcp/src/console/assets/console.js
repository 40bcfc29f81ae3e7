// The toolhost console: plain browser JavaScript, no framework, no build.
//
// Every string shown comes from the server, and much of it from plugins and
// clients (tool names, audit lines, approval texts): it is put in the page
// as text nodes only (`text` below, `textContent`), never parsed as HTML.
// The bearer token comes from the URL's fragment (#token=...), which the
// browser never sends, or from the form; it is kept in this tab's
// sessionStorage and sent as `Authorization: Bearer` with each request.
"use strict";

const KEY = "toolhost-console-token";
const $ = (id) => document.getElementById(id);

/** An element with `attrs` and `children` (strings become text nodes). */
function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs || {})) {
    if (value !== undefined && value !== null) node.setAttribute(name, String(value));
  }
  for (const child of children) {
    node.append(child instanceof Node ? child : document.createTextNode(child == null ? "" : String(child)));
  }
  return node;
}

function token() {
  return sessionStorage.getItem(KEY);
}

/** Takes a token from the fragment, then removes it from the address bar. */
function tokenFromFragment() {
  const params = new URLSearchParams(location.hash.slice(1));
  const given = params.get("token");
  if (given) {
    sessionStorage.setItem(KEY, given);
    history.replaceState(null, "", location.pathname + location.search);
  }
}

class Refused extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

async function api(path, options = {}) {
  const headers = Object.assign({ Authorization: "Bearer " + token() }, options.headers || {});
  const response = await fetch(path, Object.assign({}, options, { headers, cache: "no-store", credentials: "omit" }));
  let body = null;
  try {
    body = await response.json();
  } catch (_) {
    body = null;
  }
  if (!response.ok) {
    const why = body && typeof body.error === "string" ? body.error : response.status + " " + response.statusText;
    throw new Refused(response.status, why);
  }
  return body;
}

function showLogin(message) {
  // What another token saw (and could do) goes with it.
  $("approvals-list").replaceChildren();
  $("main").hidden = true;
  $("forget").hidden = true;
  $("login").hidden = false;
  $("login-error").textContent = message || "";
}

function showMain() {
  $("login").hidden = true;
  $("main").hidden = false;
  $("forget").hidden = false;
}

function formatMs(ms) {
  if (ms == null) return "";
  if (ms < 1) return (ms * 1000).toFixed(0) + " µs";
  if (ms < 1000) return ms.toFixed(1) + " ms";
  return (ms / 1000).toFixed(2) + " s";
}

function formatBytes(n) {
  if (n == null) return "";
  if (n < 1024) return n + " B";
  if (n < 1 << 20) return (n / 1024).toFixed(0) + " KiB";
  return (n / (1 << 20)).toFixed(1) + " MiB";
}

function formatCount(n) {
  return n == null ? "" : Number(n).toLocaleString("en");
}

/** Replaces the rows of `table`'s body with `rows` (arrays of cells). */
function fill(table, rows, empty) {
  const body = table.tBodies[0];
  const cells = table.tHead.rows[0].cells.length;
  const fresh = rows.map((row) => el("tr", {}, ...row.map((cell) => (cell instanceof Node ? cell : el("td", {}, cell)))));
  if (fresh.length === 0) fresh.push(el("tr", {}, el("td", { colspan: cells, class: "note" }, empty)));
  body.replaceChildren(...fresh);
}

function td(text, cls) {
  return el("td", cls ? { class: cls } : {}, text);
}

function spans(call) {
  if (!call.spans || call.spans.length === 0) return td("");
  const list = el("ul", { class: "spans" });
  for (const span of call.spans) {
    const line = span.name + " +" + formatMs(span.start_offset / 1000) + " " + formatMs(span.duration / 1000);
    list.append(el("li", {}, span.error ? line + " (" + span.error + ")" : line));
  }
  return el("td", {}, el("details", {}, el("summary", {}, String(call.spans.length)), list));
}

function renderCalls(calls) {
  $("calls-total").textContent = "(" + formatCount(calls.total) + " finished since the start)";
  fill(
    $("running"),
    calls.running.map((c) => [
      td(c.call_id, "num"),
      td(c.tool, "mono"),
      td(c.session, "mono"),
      td(c.started),
      td(formatMs(c.duration_ms), "num"),
      td(c.trace_id || "", "mono"),
    ]),
    "No call is running.",
  );
  fill(
    $("finished"),
    calls.finished.map((c) => [
      td(c.call_id, "num"),
      td(c.tool, "mono"),
      td(c.source ? c.source + (c.origin ? " " + c.origin : "") : "", "mono"),
      td(c.session, "mono"),
      td(c.started),
      td(formatMs(c.duration_ms), "num"),
      td(c.outcome, "outcome-" + c.outcome),
      td(c.error_code || ""),
      td(formatCount(c.fuel), "num"),
      td(formatBytes(c.peak_memory_bytes), "num"),
      td(c.trace_id || "", "mono"),
      spans(c),
    ]),
    "No call has finished yet.",
  );
  const codes = Object.entries(calls.errors).sort((a, b) => b[1] - a[1]);
  fill($("errors-table"), codes.map(([code, n]) => [td(code), td(formatCount(n), "num")]), "No call has failed.");
}

function compact(value) {
  if (value == null) return "";
  const text = JSON.stringify(value);
  return text === "{}" || text === "[]" ? "" : text;
}

function renderPlugins(plugins) {
  fill(
    $("plugins-table"),
    plugins.map((p) => [
      td(p.name, "mono"),
      td(p.error ? p.status + ": " + p.error : p.status, p.status === "loaded" ? "state-up" : "state-down"),
      td(p.hash || "", "mono"),
      td(p.version || ""),
      td((p.tools || []).join(", "), "mono"),
      td(compact(p.grants), "mono"),
      td(compact(p.limits), "mono"),
      td(formatCount(p.calls), "num"),
      td(formatCount(p.errors), "num"),
    ]),
    "No plugin is configured.",
  );
}

function renderServers(servers) {
  fill(
    $("servers-table"),
    servers.map((s) => [
      td(s.name, "mono"),
      td(s.available ? "up" : "down", s.available ? "state-up" : "state-down"),
      td((s.tools || []).join(", "), "mono"),
      td(s.error || ""),
    ]),
    "No MCP server is bridged.",
  );
}

/** The approvals, kept by id: an item stays put while it is pending, so
 *  that a refresh never moves a button from under the operator's pointer. */
function renderApprovals(approvals, canOperate) {
  const list = $("approvals-list");
  const pending = approvals.pending || [];
  $("approvals-count").textContent = pending.length ? "(" + pending.length + ")" : "";
  let note = "";
  if (!approvals.enabled) note = "Approvals are not decided on this console.";
  else if (pending.length === 0) note = "Nothing waits for approval.";
  else if (!canOperate) note = "Read-only: this token cannot decide approvals.";
  $("approvals-note").textContent = note;
  const ids = new Set(pending.map((p) => String(p.id)));
  for (const item of Array.from(list.children)) {
    if (!ids.has(item.dataset.id)) item.remove();
  }
  const shown = new Set(Array.from(list.children, (item) => item.dataset.id));
  for (const p of pending) {
    if (shown.has(String(p.id))) continue;
    const item = el(
      "li",
      { class: "approval", "data-id": p.id },
      el("div", { class: "summary" }, p.summary),
      el("pre", { class: "text" }, p.text),
      el("div", { class: "meta" }, p.kind + " · session " + p.session + " · asked " + p.asked),
    );
    if (canOperate) {
      const approve = el("button", { type: "button", class: "approve", "data-action": "once" }, "Approve once");
      const refuse = el("button", { type: "button", class: "refuse", "data-action": "deny" }, "Refuse");
      const outcome = el("span", { class: "note", role: "status" });
      for (const button of [approve, refuse]) {
        button.addEventListener("click", () => decide(p.id, button.dataset.action, item, outcome));
      }
      item.append(el("div", { class: "actions" }, approve, refuse, outcome));
    }
    list.append(item);
  }
}

async function decide(id, decision, item, outcome) {
  for (const button of item.querySelectorAll("button")) button.disabled = true;
  try {
    await api("/console/api/approvals/" + encodeURIComponent(id), {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ decision }),
    });
    outcome.textContent = decision === "once" ? "Approved once." : "Refused.";
    item.dataset.decided = decision;
  } catch (e) {
    outcome.textContent = "Not decided: " + e.message;
    outcome.classList.add("error");
  }
}

async function refresh() {
  if (!token()) {
    showLogin("");
    return 0;
  }
  try {
    const state = await api("/console/api/state");
    showMain();
    $("who").textContent = state.who.subject + " (" + state.who.access + ")";
    renderApprovals(state.approvals, state.who.access === "operate");
    renderCalls(state.calls);
    renderPlugins(state.plugins);
    renderServers(state.servers);
    $("status").textContent = "updated " + new Date().toLocaleTimeString();
    if (!searched) {
      searched = true;
      search();
    }
    return state.refresh_ms;
  } catch (e) {
    if (e instanceof Refused && (e.status === 401 || e.status === 403)) {
      showLogin(e.message);
      return 0;
    }
    $("status").textContent = "not reachable: " + e.message;
    return 5000;
  }
}

let searched = false;

async function search() {
  const params = new URLSearchParams({ text: $("audit-text").value, event: $("audit-event").value, limit: "200" });
  try {
    const tail = await api("/console/api/audit?" + params);
    const lines = $("audit-lines");
    if (!tail.enabled) {
      $("audit-note").textContent = tail.note || "There is no audit log.";
      lines.replaceChildren();
      return;
    }
    const more = tail.more ? " Older lines were not read: narrow the search." : "";
    $("audit-note").textContent = tail.lines.length + " lines, newest first." + more;
    lines.replaceChildren(...tail.lines.map((line) => el("li", {}, JSON.stringify(line))));
  } catch (e) {
    $("audit-note").textContent = "The audit log could not be searched: " + e.message;
  }
}

let timer = null;

async function loop() {
  clearTimeout(timer);
  const next = await refresh();
  if (next > 0) timer = setTimeout(loop, next);
}

document.addEventListener("DOMContentLoaded", () => {
  tokenFromFragment();
  $("login-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const given = $("token").value.trim();
    $("token").value = "";
    if (given) sessionStorage.setItem(KEY, given);
    searched = false;
    loop();
  });
  $("forget").addEventListener("click", () => {
    sessionStorage.removeItem(KEY);
    clearTimeout(timer);
    showLogin("");
  });
  $("audit-form").addEventListener("submit", (event) => {
    event.preventDefault();
    search();
  });
  loop();
});
