// Docket operator console: queue health by state with ages, database
// health, the last 24 hours, tenants with their backlog (pause, resume,
// settings, keys), queues (pause, resume), stuck and failed jobs with
// their attempt history, requeue and discard. The admin key stays in
// sessionStorage and travels in a header.
//
// Updates are pushed: GET /v1/admin/events sends the queue's health when
// jobs change; the page redraws from it (debounced) and reads the dearer
// parts (the 24-hour charts and finished counts, the stuck list, tenants)
// only when the pushed health shows something moved. When the stream is
// down the page polls the cheap health every 10 s until it is back.

import { $, el, setText, about } from "./js/dom.js";
import { hours, barChart } from "./js/chart.js";
import { LiveStream } from "./js/livestream.js";
import { attemptsTable } from "./js/attempts.js";

const KEY = "docket_admin_key";
const POLL = 10000; // ms between polls while the stream is down
const LIGHT = "/v1/admin/health?performance=false&finished=false";
const ACTIVE = ["scheduled", "pending", "running"];
let key = sessionStorage.getItem(KEY) || "";
let stream = null;
let pollTimer = null;
let snap = null; // the last pushed (or polled) health
let full = null; // the last full health (performance, finished counts)
let stuckJobs = [];
let tenants = [];
let updatedAt = null;
let confirming = false; // no redraw while an action waits for its confirmation
let openKeys = ""; // the tenant whose keys are shown
let shown = ""; // what the tenants table shows, to redraw it only when it changes
let keyChanges = 0; // key actions so far: the keys shown are read again after each
const histories = new Map(); // job id -> {sig, detail}: open attempt histories
let drawn = {}; // table id -> what it shows: a table is rebuilt only when that changes (no click lost under the mouse)

// unchanged reports whether table shows what already; else notes it.
function unchanged(table, ...what) {
  const sig = JSON.stringify(what);
  if (drawn[table] === sig) return true;
  drawn[table] = sig;
  return false;
}

async function admin(path, opts = {}) {
  opts.headers = Object.assign({ Authorization: "Bearer " + key }, opts.headers || {});
  const res = await fetch(path, opts);
  let body = null;
  try { body = await res.json(); } catch { /* empty */ }
  if (!res.ok) throw new Error((body && (body.detail || body.title)) || res.statusText);
  return body;
}

const secs = (s) => (s > 0 ? about(s * 1000) : "–");
const cells = (...vals) => vals.map((v) => (v instanceof Node ? el("td", {}, v) : el("td", { text: v == null ? "" : v })));

// later runs fn once, ms after the last call (a debounce); with a gap, at
// most once per gap() ms (a throttle that keeps the last call).
function later(fn, ms, gap = () => 0) {
  let timer = null, last = 0;
  return () => {
    if (timer) return;
    const wait = Math.max(ms, last + gap() - Date.now());
    timer = setTimeout(async () => {
      timer = null;
      last = Date.now();
      await fn();
    }, wait);
  };
}

// --- reading ---------------------------------------------------------------

function onHealth(h) {
  snap = h;
  updatedAt = new Date();
  renderSoon();
  // A snapshot comes after jobs changed (or, at a keep-alive, when ages
  // did): what it leaves out is read again, no more often than loadFull
  // and loadStuck allow.
  loadStuckSoon();
  loadFullSoon();
  const known = new Set(tenants.map((t) => t.id));
  if (h.queue_depth.tenants.some((d) => !known.has(d.tenant_id))) loadTenantsSoon();
}

let fullCost = 0;
const loadFullSoon = later(loadFull, 300, () => Math.max(2000, 4 * fullCost));
async function loadFull() {
  if (!key) return;
  const t0 = performance.now();
  try {
    full = await admin("/v1/admin/health?limit=100");
    fullCost = performance.now() - t0;
    if (!snap) onHealth(full);
    renderCharts(full.processing_performance);
    renderSoon();
  } catch (e) {
    setStatus(e.message, true);
  }
}

const loadStuckSoon = later(loadStuck, 300, () => 1000);
async function loadStuck() {
  if (!key) return;
  try {
    const older = Math.max(1, Number($("olderthan").value) || 1800);
    stuckJobs = (await admin("/v1/admin/jobs/stuck?older_than=" + older + "s")).jobs;
    renderSoon();
  } catch (e) {
    setStatus(e.message, true);
  }
}

const loadTenantsSoon = later(loadTenants, 200, () => 1000);
async function loadTenants() {
  if (!key) return;
  try {
    const all = [];
    let cursor = "";
    for (let page = 0; page < 20; page++) {
      const res = await admin("/v1/admin/tenants?limit=500" + (cursor ? "&cursor=" + encodeURIComponent(cursor) : ""));
      all.push(...res.tenants);
      cursor = res.next_cursor;
      if (!cursor) break;
    }
    tenants = all;
    renderSoon();
  } catch (e) {
    setStatus(e.message, true);
  }
}

// refreshAll reads everything again: after the operator's own actions.
function refreshAll() {
  loadTenantsSoon();
  loadStuckSoon();
  loadFullSoon();
  if (!stream || streamState !== "live") pollOnce();
}

async function pollOnce() {
  if (!key) return;
  try {
    onHealth(await admin(LIGHT));
  } catch (e) {
    setStatus(e.message, true);
  }
}

// --- the stream ------------------------------------------------------------

let streamState = "", streamDetail = "";
function onStreamState(state, detail) {
  streamState = state;
  streamDetail = detail;
  clearInterval(pollTimer);
  pollTimer = null;
  if (state === "down") {
    pollTimer = setInterval(pollOnce, POLL);
    pollOnce();
  }
  if (state === "refused") setStatus(detail, true);
  else showStatus();
}

function showStatus() {
  const at = updatedAt ? " · updated " + updatedAt.toLocaleTimeString() : "";
  const text = {
    connecting: "connecting…",
    live: "live" + at,
    down: `live updates interrupted (${streamDetail || "reconnecting"}); reading every ${POLL / 1000} s` + at,
  }[streamState] || "";
  if (text) setStatus(text, streamState === "down");
  $("conn").dataset.state = streamState;
}

function setStatus(text, bad) {
  setText($("conn"), text);
  $("conn").classList.toggle("bad", !!bad);
}

// --- drawing ---------------------------------------------------------------

const renderSoon = later(render, 100);
function render() {
  if (!snap || confirming) return;
  const names = new Map(tenants.map((t) => [t.id, t.name]));
  const name = (id) => names.get(id) || id;
  renderHealth(snap, full);
  renderQueues(snap, full);
  renderTenants(tenants, snap.queue_depth.tenants);
  renderJobs("stuck", stuckJobs, name);
  renderJobs("failed", snap.failed_jobs.jobs, name);
  showStatus();
}

function renderHealth(h, f) {
  const finished = f ? f.queue_health.filter((r) => !ACTIVE.includes(r.state)) : [];
  const rows = [...h.queue_health.filter((r) => ACTIVE.includes(r.state)), ...finished]
    .sort((a, b) => a.queue.localeCompare(b.queue) || a.state.localeCompare(b.state));
  $("states").replaceChildren(...rows.map((r) =>
    el("tr", { "data-queue": r.queue, "data-state": r.state }, ...cells(r.queue, r.state, r.jobs, secs(r.avg_age_seconds), secs(r.max_age_seconds)))));
  const db = h.database;
  if (!db) return;
  const notify = db.notify_queue_usage == null ? "none (SQLite)" : (100 * db.notify_queue_usage).toFixed(1) + " %";
  $("dbhealth").replaceChildren(...[["Dead tuples in the jobs table", db.dead_tuples],
    ["Oldest open transaction (holds back vacuum)", secs(db.oldest_transaction_age_seconds)],
    ["LISTEN/NOTIFY queue in use", notify]].flatMap(([k, v]) => [el("dt", { text: k }), el("dd", { text: v })]));
}

// renderQueues lists every queue the health names, with pause and resume.
function renderQueues(h, f) {
  const queues = new Map();
  for (const r of [...(f ? f.queue_health : []), ...h.queue_health]) queues.set(r.queue, !!r.paused);
  for (const q of h.paused_queues || []) queues.set(q, true); // also those with no jobs
  if (unchanged("queues", [...queues])) return;
  const rows = [...queues].sort(([a], [b]) => a.localeCompare(b)).map(([q, paused]) => {
    const path = `/v1/admin/queues/${encodeURIComponent(q)}/${paused ? "resume" : "pause"}`;
    return el("tr", { "data-queue": q, "data-paused": String(paused) }, ...cells(q, paused ? "paused" : "active"),
      action(paused ? "Resume" : "Pause", "queue " + q, path));
  });
  $("queues").replaceChildren(...rows);
}

function renderCharts(rows) {
  const slots = hours();
  const at = (field) => slots.map((t) => rows.filter((r) => Date.parse(r.hour) === t).reduce((a, r) => a + (r[field] || 0), 0));
  const completed = at("completed"), failed = at("failed");
  const done = completed.reduce((a, b) => a + b, 0), bad = failed.reduce((a, b) => a + b, 0);
  barChart($("throughput"), slots, [
    { cls: "ok", label: "completed", values: completed },
    { cls: "bad", label: "failed", values: failed },
  ], (v) => String(Math.round(v)), `${done} completed and ${bad} failed in the last 24 hours`);
  const rate = slots.map((_, i) => (completed[i] + failed[i] ? (100 * failed[i]) / (completed[i] + failed[i]) : 0));
  barChart($("failrate"), slots, [{ cls: "bad", label: "failed", values: rate }], (v) => Math.round(v) + " %",
    `failure rate ${done + bad ? Math.round((100 * bad) / (done + bad)) : 0} % over the last 24 hours`);
  const avg = at("avg_duration_seconds"), p95 = at("p95_duration_seconds");
  barChart($("duration"), slots, [
    { cls: "avg", label: "average", values: avg, tip: (i) => `average ${avg[i].toFixed(1)} s, p95 ${p95[i].toFixed(1)} s` },
    { cls: "p95", label: "p95", values: p95.map((p, i) => Math.max(0, p - avg[i])), tip: (i) => `p95 ${p95[i].toFixed(1)} s` },
  ], (v) => v.toFixed(1) + " s", "average and 95th percentile processing time per hour");
}

function renderTenants(list, depth) {
  const sig = JSON.stringify([list, depth, openKeys, keyChanges]);
  const typing = $("tenants").contains(document.activeElement) && document.activeElement.tagName !== "BUTTON";
  if (sig === shown || typing) return;
  shown = sig;
  const byID = new Map();
  for (const d of depth) {
    const s = byID.get(d.tenant_id) || { pending: 0, running: 0, oldest_pending_age_seconds: 0 };
    byID.set(d.tenant_id, { pending: s.pending + d.pending, running: s.running + d.running,
      oldest_pending_age_seconds: Math.max(s.oldest_pending_age_seconds, d.oldest_pending_age_seconds) });
  }
  const rows = [];
  for (const t of list) {
    const d = byID.get(t.id) || { pending: 0, running: 0, oldest_pending_age_seconds: 0 };
    const toggle = el("button", { type: "button", class: "manage", text: openKeys === t.id ? "Close" : "Manage", "aria-expanded": String(openKeys === t.id) });
    toggle.addEventListener("click", () => { openKeys = openKeys === t.id ? "" : t.id; shown = ""; render(); });
    const base = `/v1/admin/tenants/${encodeURIComponent(t.id)}`;
    const pause = action(t.paused ? "Resume" : "Pause", "tenant " + t.name, `${base}/${t.paused ? "resume" : "pause"}`);
    pause.append(toggle);
    const weight = el("td", { text: String(t.effective_weight), title: t.weight > 0 ? "set for this tenant" : `the ${t.plan} plan's` });
    rows.push(el("tr", { "data-tenant": t.id, "data-paused": String(!!t.paused) }, ...cells(t.name, t.plan, t.concurrency), weight,
      ...cells(t.uploads_per_hour, d.pending, d.running, secs(d.oldest_pending_age_seconds), t.paused ? "paused" : "active"), pause));
    if (openKeys === t.id) {
      const td = el("td", { colSpan: 10, class: "keys" });
      rows.push(el("tr", { class: "keysrow" }, td));
      loadKeys(t, td);
    }
  }
  $("tenants").replaceChildren(...rows);
}

// loadKeys lists a tenant's keys (ids and dates, never the keys) with
// Revoke, and a button that makes a new key.
async function loadKeys(t, td) {
  const base = `/v1/admin/tenants/${encodeURIComponent(t.id)}`;
  const { keys } = await admin(base);
  const make = el("button", { type: "button", text: "New key" });
  make.addEventListener("click", async () => {
    try {
      const res = await admin(base + "/keys", { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ name: "console" }) });
      setText($("newkey"), `New API key for ${t.name}, shown this once: ${res.api_key}`);
      keyChanges++;
    } catch (e) {
      setText($("newkey"), e.message);
    }
    refreshAll();
  });
  const table = el("table", { class: "grid" }, el("thead", {}, el("tr", {}, ...["Key id", "Name", "Created", "Revoked", "Action"].map((h) => el("th", { scope: "col", text: h })))),
    el("tbody", {}, ...keys.map((k) => el("tr", { "data-key": k.id }, ...cells(k.id, k.name, new Date(k.created_at).toLocaleString(),
      k.revoked_at ? new Date(k.revoked_at).toLocaleString() : "–"),
    k.revoked_at ? el("td") : action("Revoke", "key " + k.id, `${base}/keys/${encodeURIComponent(k.id)}`, "DELETE")))));
  td.replaceChildren(settings(t, base), el("p", { class: "inline" }, el("strong", { text: `Keys of ${t.name}` }), make), table);
}

// settings is a form that changes a tenant's plan, how many of its
// documents run at once, its uploads per hour and its weight (0: the
// plan's, for both).
function settings(t, base) {
  const id = (n) => `t-${t.id}-${n}`;
  const plan = el("select", { id: id("plan") }, ...["free", "starter", "pro", "enterprise"].map((p) => el("option", { text: p, selected: p === t.plan })));
  const conc = el("input", { id: id("conc"), type: "number", min: 1, max: 1000, value: t.concurrency });
  const rate = el("input", { id: id("rate"), type: "number", min: 0, value: t.rate_limit });
  const weight = el("input", { id: id("weight"), type: "number", min: 0, max: 1000, value: t.weight });
  const form = el("form", { class: "inline settings" },
    el("label", { for: id("plan"), text: "Plan" }), plan,
    el("label", { for: id("conc"), text: "Documents at once" }), conc,
    el("label", { for: id("rate"), text: "Uploads per hour (0: the plan's)" }), rate,
    el("label", { for: id("weight"), text: "Weight, its share of the workers (0: the plan's)" }), weight,
    el("button", { type: "submit", text: "Save" }));
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    try {
      const body = JSON.stringify({ plan: plan.value, concurrency: Number(conc.value), rate_limit: Number(rate.value), weight: Number(weight.value) });
      const res = await admin(base, { method: "PATCH", headers: { "Content-Type": "application/json" }, body });
      const u = res.tenant || res;
      setText($("actionmsg"), `${t.name}: ${u.plan} plan, ${u.concurrency} at once, ${u.uploads_per_hour} uploads per hour, weight ${u.effective_weight}`);
    } catch (e) {
      setText($("actionmsg"), `${t.name}: ${e.message}`);
    }
    document.activeElement.blur();
    keyChanges++;
    refreshAll();
  });
  return form;
}

// action is a cell with a button that asks for confirmation in place
// before it posts.
function action(label, what, path, method = "POST") {
  const td = el("td");
  const start = el("button", { type: "button", class: label.toLowerCase(), text: label });
  start.addEventListener("click", () => {
    confirming = true;
    const yes = el("button", { type: "button", class: "danger", text: "Yes, " + label.toLowerCase() });
    const no = el("button", { type: "button", text: "No" });
    const rest = [...td.childNodes];
    no.addEventListener("click", () => { confirming = false; td.replaceChildren(...rest); start.focus(); render(); });
    yes.addEventListener("click", async () => {
      try {
        const res = await admin(path, { method });
        setText($("actionmsg"), res && res.job ? `${what}: done (job ${res.job.id}, ${res.job.status})`
          : res && "paused" in res ? `${what}: ${res.paused ? "paused" : "resumed"}` : `${what}: done`);
      } catch (e) {
        setText($("actionmsg"), `${what}: ${e.message}`);
      }
      confirming = false;
      keyChanges++;
      shown = "";
      drawn = {};
      refreshAll();
      render();
    });
    td.replaceChildren(el("span", { text: label + " " + what + "? " }), yes, no);
    yes.focus();
  });
  td.appendChild(start);
  return td;
}

// renderJobs draws the stuck or failed jobs, each with its attempt
// history (opened with History) and its action.
function renderJobs(table, jobs, name) {
  const stuck = table === "stuck";
  if (unchanged(table, jobs, jobs.map((j) => name(j.tenant_id)), jobs.map((j) => histories.get(j.id) || null))) return;
  const rows = [];
  for (const j of jobs) {
    const open = histories.has(j.id);
    const more = el("button", { type: "button", class: "history", text: open ? "Hide history" : "History",
      "aria-expanded": String(open), "aria-controls": `${table}-history-${j.id}` });
    more.addEventListener("click", () => toggleHistory(j.id));
    const act = stuck ? action("Discard", "job " + j.id, `/v1/admin/jobs/${encodeURIComponent(j.id)}/discard`)
      : action("Requeue", "job " + j.id, `/v1/admin/jobs/${encodeURIComponent(j.id)}/requeue`);
    act.prepend(more);
    const info = stuck
      ? cells(j.id, name(j.tenant_id), j.reason.replace(/_/g, " "), `${j.attempt} of ${j.max_attempts}`, secs(j.running_seconds), j.worker_id)
      : cells(j.id, name(j.tenant_id), j.error_message, `${j.attempt} of ${j.max_attempts}`, new Date(j.completed_at).toLocaleString());
    rows.push(el("tr", { "data-job": j.id }, ...info, act));
    if (open) {
      const h = histories.get(j.id);
      const sig = JSON.stringify([j.attempt, j.error_message, j.reason]);
      if (h.sig !== sig) { h.sig = sig; loadHistory(j.id); }
      rows.push(el("tr", { class: "historyrow", id: `${table}-history-${j.id}`, "data-history": j.id },
        el("td", { colSpan: stuck ? 7 : 6 }, h.detail ? attemptsTable(h.detail) : el("p", { class: "muted", text: h.error || "loading…" }))));
    }
  }
  $(table).replaceChildren(...rows);
}

function toggleHistory(id) {
  if (histories.has(id)) histories.delete(id);
  else histories.set(id, { sig: "", detail: null });
  render();
  const b = document.querySelector(`tr[data-job="${CSS.escape(id)}"] button.history`);
  if (b) b.focus();
}

// loadHistory reads a job's attempts for its open history, and again every
// second while one of them is still running: a discarded job's attempt ends
// when its handler returns, which may be after the job's row says failed.
async function loadHistory(id) {
  try {
    const detail = await admin(`/v1/admin/jobs/${encodeURIComponent(id)}`);
    const h = histories.get(id);
    if (h) {
      h.detail = detail; h.error = "";
      if (detail.attempts.some((a) => a.outcome === "running")) {
        setTimeout(() => { if (histories.get(id) === h) loadHistory(id); }, 1000);
      }
    }
  } catch (e) {
    const h = histories.get(id);
    if (h) h.error = e.message;
  }
  renderSoon();
}

// --- wiring ----------------------------------------------------------------

async function createTenant(ev) {
  ev.preventDefault();
  try {
    const res = await admin("/v1/admin/tenants", {
      method: "POST", headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ name: $("tname").value.trim(), plan: $("tplan").value }),
    });
    setText($("newkey"), `Tenant ${res.tenant.name} created. Its API key, shown this once: ${res.api_key}`);
    $("tname").value = "";
    refreshAll();
  } catch (e) {
    setText($("newkey"), e.message);
  }
}

function connect(ev) {
  if (ev) ev.preventDefault();
  const typed = $("adminkey").value.trim();
  if (typed) { key = typed; sessionStorage.setItem(KEY, key); }
  if (!key) return;
  if (stream) stream.stop();
  stream = new LiveStream({
    path: "/v1/admin/events",
    headers: () => ({ Authorization: "Bearer " + key }),
    onEvent: (name, data) => { if (name === "health") onHealth(data); },
    onState: onStreamState,
  });
  stream.start();
  loadTenants();
  loadFull();
}

function forget() {
  key = "";
  sessionStorage.removeItem(KEY);
  if (stream) stream.stop();
  stream = null;
  clearInterval(pollTimer);
  snap = full = null;
  tenants = stuckJobs = [];
  histories.clear();
  drawn = {};
  $("adminkey").value = "";
  for (const id of ["states", "queues", "tenants", "stuck", "failed", "dbhealth"]) $(id).replaceChildren();
  for (const id of ["throughput", "failrate", "duration"]) $(id).replaceChildren();
  for (const id of ["newkey", "actionmsg"]) setText($(id), "");
  streamState = "";
  $("conn").dataset.state = "";
  setStatus("not connected");
}

$("adminform").addEventListener("submit", connect);
$("forget").addEventListener("click", forget);
$("tenantform").addEventListener("submit", createTenant);
$("olderthan").addEventListener("input", loadStuckSoon);
$("stuckform").addEventListener("submit", (ev) => { ev.preventDefault(); loadStuck(); });
if (key) { $("adminkey").value = key; connect(); }
