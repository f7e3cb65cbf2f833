// Docket operator console: queue health, the last 24 hours, tenants and
// their backlog, stuck and failed jobs with requeue and discard. It reads
// the admin API with the admin key (sessionStorage only) every few seconds.

import { $, el, setText, about } from "./js/dom.js";
import { hours, barChart } from "./js/chart.js";

const KEY = "docket_admin_key";
const EVERY = 3000;
let key = sessionStorage.getItem(KEY) || "";
let timer = null;
let confirming = false; // no refresh while an action waits for its confirmation
let openKeys = ""; // the tenant whose keys are shown
let shown = ""; // what the tenants table shows, to redraw it only when it changes
let keyChanges = 0; // key actions so far: the keys shown are read again after each

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

async function refresh() {
  if (!key || confirming) return;
  try {
    const older = Math.max(1, Number($("olderthan").value) || 1800);
    const [health, queue, tenants, stuck] = await Promise.all([
      admin("/v1/admin/health?limit=100"), admin("/v1/admin/queue"), admin("/v1/admin/tenants"),
      admin("/v1/admin/jobs/stuck?older_than=" + older + "s"),
    ]);
    if (confirming) return;
    renderHealth(health, queue);
    renderCharts(health.processing_performance);
    renderTenants(tenants.tenants, health.queue_depth.tenants);
    const names = new Map(tenants.tenants.map((t) => [t.id, t.name]));
    const name = (id) => names.get(id) || id;
    renderStuck(stuck.jobs, name);
    renderFailed(health.failed_jobs.jobs, name);
    setStatus("updated " + new Date().toLocaleTimeString());
  } catch (e) {
    setStatus(e.message, true);
  }
}

function setStatus(text, bad) {
  setText($("conn"), text);
  $("conn").classList.toggle("bad", !!bad);
}

function renderHealth(h, q) {
  $("states").replaceChildren(...h.queue_health.map((r) =>
    el("tr", {}, ...cells(r.state, r.jobs, secs(r.avg_age_seconds), secs(r.max_age_seconds)))));
  setText($("db"), `Oldest waiting job: ${secs(q.oldest_pending_age_seconds)} · dead tuples in the jobs table: ` +
    `${q.dead_tuples} · oldest open transaction (holds back vacuum): ${secs(q.oldest_transaction_age_seconds)}`);
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

function renderTenants(tenants, depth) {
  const sig = JSON.stringify([tenants, depth, openKeys, keyChanges]);
  const typing = $("tenants").contains(document.activeElement) && document.activeElement.tagName !== "BUTTON";
  if (sig === shown || typing) return;
  shown = sig;
  const byID = new Map(depth.map((d) => [d.tenant_id, d]));
  const rows = [];
  for (const t of tenants) {
    const d = byID.get(t.id) || { pending: 0, running: 0, oldest_pending_age_seconds: 0 };
    const toggle = el("button", { type: "button", text: openKeys === t.id ? "Close" : "Manage", "aria-expanded": String(openKeys === t.id) });
    toggle.addEventListener("click", () => { openKeys = openKeys === t.id ? "" : t.id; refresh(); });
    rows.push(el("tr", { "data-tenant": t.id }, ...cells(t.name, t.plan, t.concurrency, t.uploads_per_hour, d.pending, d.running,
      secs(d.oldest_pending_age_seconds), toggle)));
    if (openKeys === t.id) {
      const td = el("td", { colSpan: 8, class: "keys" });
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
    refresh();
  });
  const table = el("table", { class: "grid" }, el("thead", {}, el("tr", {}, ...["Key id", "Name", "Created", "Revoked", "Action"].map((h) => el("th", { scope: "col", text: h })))),
    el("tbody", {}, ...keys.map((k) => el("tr", { "data-key": k.id }, ...cells(k.id, k.name, new Date(k.created_at).toLocaleString(),
      k.revoked_at ? new Date(k.revoked_at).toLocaleString() : "–"),
    k.revoked_at ? el("td") : action("Revoke", "key " + k.id, `${base}/keys/${encodeURIComponent(k.id)}`, "DELETE")))));
  td.replaceChildren(settings(t, base), el("p", { class: "inline" }, el("strong", { text: `Keys of ${t.name}` }), make), table);
}

// settings is a form that changes a tenant's plan, how many of its
// documents run at once and its uploads per hour (0: the plan's).
function settings(t, base) {
  const id = (n) => `t-${t.id}-${n}`;
  const plan = el("select", { id: id("plan") }, ...["free", "starter", "pro", "enterprise"].map((p) => el("option", { text: p, selected: p === t.plan })));
  const conc = el("input", { id: id("conc"), type: "number", min: 1, max: 1000, value: t.concurrency });
  const rate = el("input", { id: id("rate"), type: "number", min: 0, value: t.rate_limit });
  const form = el("form", { class: "inline settings" },
    el("label", { for: id("plan"), text: "Plan" }), plan,
    el("label", { for: id("conc"), text: "Documents at once" }), conc,
    el("label", { for: id("rate"), text: "Uploads per hour (0: the plan's)" }), rate,
    el("button", { type: "submit", text: "Save" }));
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    try {
      const body = JSON.stringify({ plan: plan.value, concurrency: Number(conc.value), rate_limit: Number(rate.value) });
      const res = await admin(base, { method: "PATCH", headers: { "Content-Type": "application/json" }, body });
      const u = res.tenant || res;
      setText($("actionmsg"), `${t.name}: ${u.plan} plan, ${u.concurrency} at once, ${u.uploads_per_hour} uploads per hour`);
    } catch (e) {
      setText($("actionmsg"), `${t.name}: ${e.message}`);
    }
    document.activeElement.blur();
    keyChanges++;
    refresh();
  });
  return form;
}

// action is a button that asks for confirmation in place before it posts.
function action(label, what, path, method = "POST") {
  const td = el("td");
  const start = el("button", { type: "button", text: label });
  start.addEventListener("click", () => {
    confirming = true;
    const yes = el("button", { type: "button", class: "danger", text: "Yes, " + label.toLowerCase() });
    const no = el("button", { type: "button", text: "No" });
    no.addEventListener("click", () => { confirming = false; td.replaceChildren(start); start.focus(); });
    yes.addEventListener("click", async () => {
      try {
        const res = await admin(path, { method });
        setText($("actionmsg"), res && res.job ? `${what}: done (job ${res.job.id}, ${res.job.status})` : `${what}: done`);
      } catch (e) {
        setText($("actionmsg"), `${what}: ${e.message}`);
      }
      confirming = false;
      keyChanges++;
      refresh();
    });
    td.replaceChildren(el("span", { text: label + " " + what + "? " }), yes, no);
    yes.focus();
  });
  td.appendChild(start);
  return td;
}

function renderStuck(jobs, name) {
  $("stuck").replaceChildren(...jobs.map((j) => el("tr", { "data-job": j.id },
    ...cells(j.id, name(j.tenant_id), j.reason.replace(/_/g, " "), `${j.attempt} of ${j.max_attempts}`, secs(j.running_seconds), j.worker_id),
    action("Discard", "job " + j.id, `/v1/admin/jobs/${encodeURIComponent(j.id)}/discard`))));
}

function renderFailed(jobs, name) {
  $("failed").replaceChildren(...jobs.map((j) => el("tr", { "data-job": j.id },
    ...cells(j.id, name(j.tenant_id), j.error_message, `${j.attempt} of ${j.max_attempts}`, new Date(j.completed_at).toLocaleString()),
    action("Requeue", "job " + j.id, `/v1/admin/jobs/${encodeURIComponent(j.id)}/requeue`))));
}

async function createTenant(ev) {
  ev.preventDefault();
  try {
    const res = await admin("/v1/admin/tenants", {
      method: "POST", headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ name: $("tname").value.trim(), plan: $("tplan").value }),
    });
    setText($("newkey"), `Tenant ${res.tenant.name} created. Its API key, shown this once: ${res.api_key}`);
    $("tname").value = "";
    refresh();
  } catch (e) {
    setText($("newkey"), e.message);
  }
}

function connect(ev) {
  if (ev) ev.preventDefault();
  const typed = $("adminkey").value.trim();
  if (typed) { key = typed; sessionStorage.setItem(KEY, key); }
  if (!key) return;
  clearInterval(timer);
  timer = setInterval(refresh, EVERY);
  setStatus("connecting…");
  refresh();
}

$("adminform").addEventListener("submit", connect);
$("forget").addEventListener("click", () => {
  key = "";
  sessionStorage.removeItem(KEY);
  clearInterval(timer);
  $("adminkey").value = "";
  for (const id of ["states", "tenants", "stuck", "failed"]) $(id).replaceChildren();
  for (const id of ["throughput", "failrate", "duration"]) $(id).replaceChildren();
  for (const id of ["db", "newkey", "actionmsg"]) setText($(id), "");
  setStatus("not connected");
});
$("tenantform").addEventListener("submit", createTenant);
$("olderthan").addEventListener("input", refresh);
$("stuckform").addEventListener("submit", (ev) => { ev.preventDefault(); refresh(); });
if (key) { $("adminkey").value = key; connect(); }
