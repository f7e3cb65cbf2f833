// Docket dashboard: plain DOM, no framework. Text goes in with textContent only.
"use strict";

const $ = (id) => document.getElementById(id);
const jobs = new Map(); // job id -> job JSON
const docs = new Map(); // document id -> document JSON
// The key is kept for this tab's session only; "Forget key" drops it.
let key = sessionStorage.getItem("docket_key") || "";
let stream = null; // AbortController of the event stream
let lastEventID = "";

function api(path, opts = {}) {
  opts.headers = Object.assign({ Authorization: "Bearer " + key }, opts.headers || {});
  return fetch(path, opts);
}

async function problem(res) {
  try { const p = await res.json(); return p.detail || p.title || res.statusText; } catch { return res.statusText; }
}

// putJob records a job read from a response (upload, job list) unless the
// page already shows a newer state of it: the event stream may have told
// of its progress, even its completion, before that response arrived.
function putJob(j) {
  const old = jobs.get(j.id);
  if (old && !(Date.parse(j.updated_at) > Date.parse(old.updated_at))) return;
  jobs.set(j.id, j);
}

function setStatus(text, bad) {
  $("conn").textContent = text;
  $("conn").classList.toggle("bad", !!bad);
}

function cell(tr, text, cls) {
  const td = document.createElement("td");
  td.textContent = text == null ? "" : String(text);
  if (cls) td.className = cls;
  tr.appendChild(td);
  return td;
}

function renderJobs() {
  const rows = [...jobs.values()].sort((a, b) => Number(b.id) - Number(a.id)).slice(0, 200);
  const body = $("jobrows");
  body.replaceChildren();
  for (const j of rows) {
    const tr = document.createElement("tr");
    cell(tr, j.id);
    cell(tr, j.document_id);
    cell(tr, j.status, "s-" + j.status);
    cell(tr, j.stage);
    const td = cell(tr, "");
    const bar = document.createElement("span"); bar.className = "bar";
    const fill = document.createElement("span"); fill.style.width = j.progress_percent + "%";
    bar.appendChild(fill); td.appendChild(bar);
    td.append(" " + j.progress_percent + "%");
    cell(tr, j.queue_position == null ? "" : j.queue_position === 0 ? "next" : j.queue_position + " ahead");
    cell(tr, j.error_message || (j.status === "processing" ? j.progress_message : ""));
    body.appendChild(tr);
  }
}

async function loadDocuments() {
  const res = await api("/v1/documents?limit=50");
  if (!res.ok) return;
  const { documents } = await res.json();
  const body = $("docrows");
  body.replaceChildren();
  docs.clear();
  for (const d of documents) {
    docs.set(d.id, d);
    const tr = document.createElement("tr");
    const f = d.fields || {};
    cell(tr, d.filename);
    cell(tr, d.status, "s-" + d.status);
    cell(tr, f.title);
    cell(tr, f.language);
    cell(tr, f.page_count);
    cell(tr, f.word_count);
    cell(tr, d.error || (d.warnings || []).join("; "));
    body.appendChild(tr);
  }
}

// loadJobs lists the latest jobs, finished ones included: the event stream
// starts with the active jobs only.
async function loadJobs() {
  const res = await api("/v1/jobs?limit=50");
  if (!res.ok) return;
  const { jobs: list } = await res.json();
  for (const j of list) putJob(j);
  renderJobs();
}

async function loadRateLimit() {
  const res = await api("/v1/rate-limit");
  if (!res.ok) return;
  const r = await res.json();
  $("ratelimit").textContent = `${r.remaining} of ${r.limit} uploads left this hour` +
    (r.remaining === 0 ? `; next slot in ${r.retry_after_seconds} s` : "");
}

// Reads GET /v1/events with fetch (so the key is a header) and resumes with
// Last-Event-ID after a drop.
async function listen() {
  if (stream) stream.abort();
  stream = new AbortController();
  const signal = stream.signal;
  for (let delay = 500; !signal.aborted; delay = Math.min(delay * 2, 10000)) {
    try {
      const headers = lastEventID ? { "Last-Event-ID": lastEventID } : {};
      const res = await api("/v1/events", { headers, signal });
      if (signal.aborted) return; // connected again meanwhile
      if (res.status === 401) { setStatus(await problem(res), true); return; }
      if (!res.ok) throw new Error(res.statusText);
      setStatus("live");
      delay = 500;
      await readEvents(res.body.getReader());
    } catch (e) {
      if (signal.aborted) return;
    }
    setStatus("reconnecting…");
    await new Promise((r) => setTimeout(r, delay));
  }
}

async function readEvents(reader) {
  const dec = new TextDecoder();
  let buf = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buf += dec.decode(value, { stream: true });
    let i;
    while ((i = buf.indexOf("\n\n")) >= 0) {
      const block = buf.slice(0, i);
      buf = buf.slice(i + 2);
      handleEvent(block);
    }
  }
}

function handleEvent(block) {
  let id = "", data = "";
  for (const line of block.split("\n")) {
    if (line.startsWith("id:")) id = line.slice(3).trim();
    else if (line.startsWith("data:")) data += line.slice(5).trim();
  }
  if (id) lastEventID = id;
  if (!data) return;
  const j = JSON.parse(data);
  const before = jobs.get(j.id);
  jobs.set(j.id, j);
  renderJobs();
  if (!before || before.status !== j.status) loadDocuments();
}

async function upload(ev) {
  ev.preventDefault();
  const files = [...$("file").files];
  const msg = $("uploadmsg");
  if (!key) { msg.textContent = "Connect with your API key first."; return; }
  if (files.length === 0) { msg.textContent = "Choose a file to upload."; return; }
  $("uploadform").reset();
  const lines = [];
  for (const file of files) {
    const form = new FormData();
    form.append("file", file);
    let line;
    try {
      const res = await api("/v1/documents", { method: "POST", body: form });
      if (res.status === 202) {
        const { job } = await res.json();
        putJob(job);
        renderJobs();
        line = `${file.name}: queued as job ${job.id}`;
      } else {
        const retry = res.headers.get("Retry-After");
        line = `${file.name}: ${await problem(res)}` + (retry ? ` (retry in ${retry} s)` : "");
      }
    } catch (e) {
      line = `${file.name}: upload failed: ${e.message}`;
    }
    lines.push(line);
    msg.textContent = lines.join("\n");
  }
  loadRateLimit();
  loadDocuments();
}

async function search(ev) {
  ev.preventDefault();
  const q = $("q").value.trim();
  if (!q) return;
  const res = await api("/v1/search?k=10&q=" + encodeURIComponent(q));
  const list = $("results");
  list.replaceChildren();
  if (!res.ok) { $("searchmsg").textContent = await problem(res); return; }
  const { results } = await res.json();
  $("searchmsg").textContent = results.length === 0 ? "No matches." : "";
  for (const r of results) {
    const li = document.createElement("li");
    const head = document.createElement("div");
    head.className = "muted";
    const d = docs.get(r.document_id);
    const name = d ? d.filename : `document ${r.document_id}`;
    head.textContent = `${r.score.toFixed(3)} · ${name} · pages ${r.page_start}–${r.page_end}`;
    const text = document.createElement("div");
    text.textContent = r.text.slice(0, 400);
    li.append(head, text);
    list.appendChild(li);
  }
}

function connect(ev) {
  if (ev) ev.preventDefault();
  key = $("key").value.trim() || key;
  if (!key) return;
  sessionStorage.setItem("docket_key", key);
  // Nothing of the previous key's tenant stays on the page.
  jobs.clear();
  docs.clear();
  renderJobs();
  for (const id of ["docrows", "results"]) $(id).replaceChildren();
  for (const id of ["ratelimit", "uploadmsg", "searchmsg"]) $(id).textContent = "";
  setStatus("connecting…");
  lastEventID = "";
  listen();
  loadJobs();
  loadDocuments();
  loadRateLimit();
}

// forget drops the key from the page and the session and clears what it
// showed.
function forget() {
  key = "";
  sessionStorage.removeItem("docket_key");
  if (stream) { stream.abort(); stream = null; }
  $("key").value = "";
  jobs.clear();
  docs.clear();
  renderJobs();
  for (const id of ["docrows", "results"]) $(id).replaceChildren();
  for (const id of ["ratelimit", "uploadmsg", "searchmsg"]) $(id).textContent = "";
  setStatus("not connected");
}

$("keyform").addEventListener("submit", connect);
$("forget").addEventListener("click", forget);
$("uploadform").addEventListener("submit", upload);
$("searchform").addEventListener("submit", search);
if (key) { $("key").value = key; connect(); }
