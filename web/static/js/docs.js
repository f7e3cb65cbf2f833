// The tenant's documents, one card each: name, status, a stage stepper and
// percent bar, elapsed time, queue position and estimate, early results as
// they arrive, the error in plain words, Cancel and Retry. Job changes come
// from the event stream; a document is read again when its job ends.
//
// The cards are in one order however they arrived (live, or read after a
// reload): the documents waiting or being processed first, then the ended
// ones; newest upload first within each. A card moves when its document
// starts again (a retry) and, when it ends, to the top of the ended ones.

import { api, getJSON, problem } from "./api.js";
import { el, setText, clock, about, plural } from "./dom.js";
import { Throughput, estimate, Eta } from "./estimate.js";
import { plainError, resultRows } from "./results.js";

export const STAGES = ["queued", "downloading", "parsing", "chunking", "embedding", "analyzing", "completed"];
const STATUS = { pending: "Queued", processing: "Processing…", completed: "Completed", failed: "Failed", cancelled: "Cancelled" };
const ENDED = ["completed", "failed", "cancelled"];
// STEP_KIND is the kind of a step of a long PDF's job: a range of its pages.
const STEP_KIND = "process_document_pages";

export class DocList {
  constructor(list, empty, onMessage) {
    this.list = list;
    this.empty = empty;
    this.onMessage = onMessage; // (text) for a refused action
    this.clear();
  }

  clear() {
    this.entries = new Map(); // document id -> entry
    this.jobs = new Set(); // ids of the jobs seen
    this.fetching = new Set();
    this.tp = new Throughput();
    this.list.replaceChildren();
    this.empty.hidden = false;
  }

  filename(id) {
    const e = this.entries.get(id);
    return e && e.doc ? e.doc.filename : "";
  }

  // putDocuments shows a listing.
  putDocuments(docs) {
    for (const d of docs) this.putDocument(d);
  }

  // putJobs shows the jobs of a listing whose documents are shown.
  putJobs(jobs) {
    for (const j of jobs) if (this.entries.has(j.document_id)) this.putJob(j, false);
  }

  putDocument(doc) {
    const e = this.entry(doc.id);
    e.doc = doc;
    this.render(e);
  }

  // putJob shows a job. A job from a response (not the stream) is taken
  // only when it is newer than the one shown: the stream may have told of
  // its progress, even its end, before the response arrived. It returns
  // whether the job is one the page did not know: a new upload or retry,
  // made here or elsewhere.
  putJob(job, fromStream) {
    if (job.kind === STEP_KIND) { this.putStep(job); return false; }
    const known = this.entries.has(job.document_id);
    const e = this.entry(job.document_id);
    // An event can come before the upload's transaction is visible to a
    // read: the document is asked for again until it is there.
    if (!e.doc) this.fetchDocument(job.document_id);
    const old = e.job;
    const fresh = !this.jobs.has(job.id);
    this.jobs.add(job.id);
    if (old && !newer(job, old, fromStream)) return fresh;
    if (old && old.id !== job.id) e.steps = []; // a new job: its steps are its own
    if (job.steps) e.steps = job.steps;
    e.job = job;
    this.tp.record(job);
    if (!ENDED.includes(job.stage) && job.stage !== "failed") e.lastStage = job.stage;
    // Early results arrive with the job (its partial result) and stay.
    if (job.partial_result && typeof job.partial_result === "object") e.early = job.partial_result;
    this.render(e);
    const changed = !old || old.id !== job.id || old.status !== job.status;
    if (known && changed && ENDED.includes(job.status)) this.fetchDocument(job.document_id);
    return fresh;
  }

  // putStep notes that a step of a document's job changed: the job is read
  // again (at most every half second) for its steps and its progress, which
  // is theirs while it waits for them.
  putStep(step) {
    const e = this.entries.get(step.document_id);
    if (!e || !e.job) return;
    if (e.stepsDue) { e.stepsStale = true; return; } // read again after the read due
    e.stepsDue = setTimeout(async () => {
      e.stepsStale = false;
      const job = await getJSON(`/v1/jobs/${encodeURIComponent(e.job.id)}`);
      e.stepsDue = null;
      if (job && e.job && job.id === e.job.id) {
        e.steps = job.steps || [];
        if (!ENDED.includes(e.job.status)) e.job = job; // its progress is its steps'
        this.render(e);
      }
      if (e.stepsStale) this.putStep(step);
    }, 500);
  }

  // fetchDocument reads a document again until the read shows what the
  // stream told: it exists, and it has ended as its job did. (An event can
  // come before the transaction that made it is visible to a read.)
  async fetchDocument(id) {
    if (this.fetching.has(id)) return;
    this.fetching.add(id);
    try {
      // A document this page uploads is told by the upload's answer, which
      // can come just after the first event of its job: wait for it first.
      const e0 = this.entries.get(id);
      if (e0 && !e0.doc) {
        await new Promise((r) => setTimeout(r, 300));
        if (e0.doc && settled(e0, e0.doc)) return;
      }
      for (let delay = 200; ; delay *= 2) {
        const doc = await getJSON("/v1/documents/" + encodeURIComponent(id));
        const e = this.entries.get(id);
        if (!e) return;
        if (doc) this.putDocument(doc);
        if (doc && settled(e, doc)) return;
        if (delay > 6400) return;
        await new Promise((r) => setTimeout(r, delay));
      }
    } finally {
      this.fetching.delete(id);
    }
  }

  entry(id) {
    let e = this.entries.get(id);
    if (!e) {
      e = { id, doc: null, job: null, steps: [], lastStage: "queued", early: {}, eta: new Eta(), ui: card(id) };
      e.ui.cancel.addEventListener("click", () => this.cancel(e));
      e.ui.retry.addEventListener("click", () => this.retry(e));
      e.ui.chunks.addEventListener("toggle", () => { if (e.ui.chunks.open) this.loadChunks(e); });
      this.entries.set(id, e);
      this.list.append(e.ui.li); // render puts it in its place
      this.empty.hidden = true;
    }
    return e;
  }

  async cancel(e) {
    if (!e.job) return;
    e.ui.cancel.disabled = true;
    const res = await api(`/v1/jobs/${encodeURIComponent(e.job.id)}/cancel`, { method: "POST" });
    e.ui.cancel.disabled = false;
    if (!res.ok) { this.onMessage(`${this.filename(e.id)}: ${await problem(res)}`); return; }
    this.putJob(await res.json(), false);
  }

  async retry(e) {
    e.ui.retry.disabled = true;
    const res = await api(`/v1/documents/${encodeURIComponent(e.id)}/retry`, { method: "POST" });
    e.ui.retry.disabled = false;
    if (!res.ok) { this.onMessage(`${this.filename(e.id)}: ${await problem(res)}`); return; }
    const { job } = await res.json();
    e.early = {};
    e.lastStage = "queued";
    if (e.doc) e.doc = Object.assign({}, e.doc, { status: "pending", error: null });
    this.putJob(job, false);
    e.ui.badge.focus();
  }

  // loadChunks shows the document's first chunks with their pages.
  async loadChunks(e) {
    if (e.chunksLoaded) return;
    e.chunksLoaded = true;
    const res = await getJSON(`/v1/documents/${encodeURIComponent(e.id)}/chunks?limit=50`);
    if (!res) { e.chunksLoaded = false; return; }
    e.ui.chunkList.replaceChildren(...res.chunks.map((c) => el("li", {},
      el("span", { class: "muted", text: c.page_start === c.page_end ? `page ${c.page_start}` : `pages ${c.page_start}–${c.page_end}` }),
      el("p", { text: c.text.length > 600 ? c.text.slice(0, 600) + "…" : c.text }))));
    if (res.next_cursor) e.ui.chunkList.appendChild(el("li", { class: "muted", text: "… and more" }));
  }

  // tick updates the clocks of the documents still waiting or running.
  tick() {
    const now = Date.now();
    for (const e of this.entries.values()) if (!ENDED.includes(status(e))) this.timing(e, now);
  }

  render(e) {
    const ui = e.ui, j = e.job, d = e.doc, st = status(e);
    const name = d ? d.filename : "document " + e.id;
    ui.li.dataset.status = st;
    setText(ui.name, name);
    setText(ui.badge, STATUS[st] || st);
    ui.badge.className = "badge s-" + st;
    const stopped = st === "failed" ? (j && j.failed_stage) || e.lastStage : e.lastStage;
    renderStepper(ui.steps, st === "failed" || st === "cancelled" ? stopped : j ? j.stage : stageOf(st), st);
    const pct = st === "completed" ? 100 : j ? j.progress_percent : 0;
    ui.fill.style.width = pct + "%";
    ui.bar.setAttribute("aria-valuenow", String(pct));
    ui.bar.setAttribute("aria-label", "Progress of " + name);
    setText(ui.pct, pct + " %");
    const qp = j && st === "pending" ? j.queue_position : null;
    // A paused tenant's or queue's job keeps its place but does not move.
    setText(ui.ahead, paused(e) ? "paused" : qp == null ? "" : qp === 0 ? "next in line" : plural(qp, "document") + " ahead");
    setText(ui.msg, st === "processing" && j ? j.progress_message || "" : "");
    const err = st === "failed" ? (d && d.error) || (j && j.error_message) || "" : "";
    ui.error.hidden = !err;
    setText(ui.errorText, err ? plainError(err) : "");
    setText(ui.errorRaw, err);
    ui.cancel.hidden = !(st === "pending" || st === "processing");
    ui.retry.hidden = !retryable(e, st);
    ui.chunks.hidden = !(st === "completed" && d && d.status === "completed");
    if (st !== "completed") { e.chunksLoaded = false; ui.chunks.open = false; }
    const fields = d && d.status === "completed" ? d.fields : null;
    renderResults(ui.results, resultRows(e.early, fields, d ? d.warnings : []));
    renderRanges(ui.ranges, e.steps);
    ui.results.dataset.early = fields ? "false" : "true"; // found so far, not final yet
    this.timing(e, Date.now());
    this.place(e);
  }

  // place moves e's card to its place in the list's order (before), when
  // it is not there already: a card is moved only when its order changed.
  place(e) {
    const li = e.ui.li, prev = li.previousElementSibling, next = li.nextElementSibling;
    const at = (x) => this.entries.get(x.dataset.id);
    if ((!prev || before(at(prev), e)) && (!next || before(e, at(next)))) return;
    const after = [...this.list.children].find((x) => x !== li && before(e, at(x)));
    this.list.insertBefore(li, after || null);
  }

  // timing shows the elapsed time and the estimate.
  timing(e, now) {
    const j = e.job, st = status(e), ui = e.ui;
    const created = Date.parse((j || e.doc || {}).created_at);
    if (ENDED.includes(st)) {
      // The time its last attempt ran: not the wait before it, nor the
      // attempts that failed before it.
      const start = Date.parse(j && j.started_at), end = Date.parse(j && j.completed_at);
      setText(ui.elapsed, start && end >= start ? "took " + clock((end - start) / 1000) : "");
      setText(ui.eta, "");
      return;
    }
    setText(ui.elapsed, created ? "elapsed " + clock((now - created) / 1000) : "");
    if (!j) { setText(ui.eta, "estimating…"); return; }
    if (paused(e)) { setText(ui.eta, "starts when resumed"); return; }
    const running = [...this.entries.values()].filter((x) => status(x) === "processing" && x.job).map((x) => x.job);
    e.eta.update(st, estimate(j, this.tp, running, now));
    let text = "estimating…";
    if (e.eta.at != null) {
      const left = e.eta.at - now;
      text = left <= 500 ? (st === "pending" ? "starts any moment now" : "done any moment now")
        : (st === "pending" ? "starts in about " : "about ") + about(left) + (st === "pending" ? "" : " left");
    }
    setText(ui.eta, text);
  }
}

// newer reports whether job should replace old: a later job of the
// document (a retry), or the same job's next state. The stream tells a
// job's changes in order; a response (upload, cancel, retry) may arrive
// after the stream told of later ones, so it counts only when it is newer
// and does not take an ended job back.
function newer(job, old, fromStream) {
  if (Number(job.id) !== Number(old.id)) return Number(job.id) > Number(old.id);
  if (fromStream) return true;
  if (ENDED.includes(old.status) && !ENDED.includes(job.status)) return false;
  return Date.parse(job.updated_at) > Date.parse(old.updated_at);
}

// before reports whether a's card goes before b's: active documents
// first, then newest upload first (then by id, so that the order is total).
function before(a, b) {
  const ra = ENDED.includes(status(a)) ? 1 : 0, rb = ENDED.includes(status(b)) ? 1 : 0;
  if (ra !== rb) return ra < rb;
  const ta = uploaded(a), tb = uploaded(b);
  if (ta !== tb) return ta > tb;
  return a.id > b.id;
}

// uploaded is when e's document was uploaded, in ms since the epoch: its
// job's creation until the document is read (the first job is made with
// the document).
function uploaded(e) {
  return Date.parse((e.doc || e.job || {}).created_at) || 0;
}

// retryable reports whether Retry is offered: the document failed or was
// cancelled, and the server says a retry could end otherwise (a rejected
// file fails the same way again).
function retryable(e, st) {
  if (st !== "failed" && st !== "cancelled") return false;
  if (e.job && ENDED.includes(e.job.status)) return e.job.retryable !== false;
  return !e.doc || e.doc.retryable !== false;
}

function settled(e, doc) {
  return !e.job || !ENDED.includes(e.job.status) || doc.status === e.job.status;
}

// paused reports whether the document waits on a paused tenant or queue.
function paused(e) {
  return !!(e.job && e.job.paused && status(e) === "pending");
}

function status(e) {
  if (e.job) return e.job.status;
  return e.doc ? e.doc.status : "pending";
}

function stageOf(st) {
  return st === "completed" ? "completed" : "queued";
}

function renderStepper(steps, stage, st) {
  const at = Math.max(0, STAGES.indexOf(stage));
  steps.forEach((li, i) => {
    const done = st === "completed" || i < at;
    const current = !done && i === at;
    li.className = done ? "done" : current ? (st === "failed" ? "failed" : st === "cancelled" ? "stopped" : "current") : "";
    if (current) li.setAttribute("aria-current", "step");
    else li.removeAttribute("aria-current");
  });
}

function renderResults(dl, rows) {
  const sig = JSON.stringify(rows);
  if (dl.dataset.sig === sig) return;
  dl.dataset.sig = sig;
  dl.replaceChildren(...rows.flatMap(([k, v]) => [el("dt", { text: k }), el("dd", { text: v })]));
}

// card builds a document's card; render fills it.
// renderRanges lists the steps of a document's job (its ranges of pages)
// with their status and percent; hidden when it has none.
function renderRanges(list, steps) {
  list.hidden = steps.length === 0;
  list.replaceChildren(...steps.map((s) => el("li", { "data-status": s.status },
    el("span", { text: s.first_page ? `pages ${s.first_page}–${s.last_page}` : s.name }),
    el("span", { class: "muted", text: ` ${STATUS[s.status] || s.status} ${s.status === "completed" ? 100 : s.progress_percent} %` }))));
}

function card(id) {
  const ui = {};
  ui.name = el("h3", { class: "doc-name" });
  ui.badge = el("span", { class: "badge", tabIndex: -1 });
  ui.cancel = el("button", { type: "button", class: "cancel", text: "Cancel" });
  ui.retry = el("button", { type: "button", class: "retry", text: "Retry" });
  ui.steps = STAGES.map((s) => el("li", { "data-stage": s }, el("span", { class: "dot", "aria-hidden": "true" }), el("span", { text: s })));
  ui.fill = el("span", { class: "fill" });
  ui.bar = el("div", { class: "progress", role: "progressbar", "aria-valuemin": "0", "aria-valuemax": "100", "aria-valuenow": "0" }, ui.fill);
  ui.pct = el("span", { class: "pct" });
  ui.ahead = el("span", { class: "ahead" });
  ui.eta = el("span", { class: "eta" });
  ui.elapsed = el("span", { class: "elapsed" });
  ui.msg = el("span", { class: "msg" });
  ui.errorText = el("span", { class: "why" });
  ui.errorRaw = el("code");
  ui.error = el("div", { class: "doc-error", hidden: true }, ui.errorText,
    el("details", {}, el("summary", { text: "Details" }), ui.errorRaw));
  ui.results = el("dl", { class: "results" });
  ui.chunkList = el("ol", { class: "chunklist" });
  ui.ranges = el("ol", { class: "ranges", "aria-label": "Page ranges", hidden: true });
  ui.chunks = el("details", { class: "chunks", hidden: true }, el("summary", { text: "Chunks with their pages" }), ui.chunkList);
  ui.li = el("li", { class: "doc", "data-id": id },
    el("div", { class: "doc-head" }, ui.name, ui.badge, el("span", { class: "actions" }, ui.cancel, ui.retry)),
    el("ol", { class: "stepper", "aria-label": "Stages" }, ...ui.steps),
    ui.bar,
    el("p", { class: "doc-meta" }, ui.pct, ui.ahead, ui.eta, ui.elapsed, ui.msg),
    ui.error, ui.results, ui.ranges, ui.chunks);
  return ui;
}
