// The upload zone: files dropped on it or chosen go up one after another,
// each with its own bar. A 429 shows the limit toast with a live countdown
// to the next slot and disables the zone until then; the uploads left in
// the window are shown beside it, as the server counts them (uploads and
// retries from anywhere: this page, another tab, the API), read again
// after each upload and whenever the event stream tells of a new job.

import { getJSON, upload, session } from "./api.js";
import { $, el, setText, clock } from "./dom.js";

export class Uploads {
  // onUploaded({document, job}) gets every 202.
  constructor(onUploaded) {
    this.onUploaded = onUploaded;
    this.zone = $("dropzone");
    this.input = $("file");
    this.list = $("uploads");
    this.limit = null; // {limit, remaining}
    this.until = 0; // ms since the epoch when the next slot opens; 0: open
    this.busy = false;
    this.reading = false; // a read of the window is in flight
    this.again = false; // another was asked for meanwhile
    this.queue = [];
    this.input.addEventListener("change", () => {
      this.add([...this.input.files]);
      this.input.value = "";
    });
    for (const t of ["dragenter", "dragover"]) {
      this.zone.addEventListener(t, (ev) => {
        ev.preventDefault();
        ev.dataTransfer.dropEffect = this.closed() ? "none" : "copy";
        this.zone.classList.toggle("over", !this.closed());
      });
    }
    this.zone.addEventListener("dragleave", () => this.zone.classList.remove("over"));
    this.zone.addEventListener("drop", (ev) => {
      ev.preventDefault();
      this.zone.classList.remove("over");
      if (!this.closed()) this.add([...ev.dataTransfer.files]);
    });
  }

  closed() { return !session.key || this.until > Date.now(); }

  clear() {
    this.queue = [];
    this.list.replaceChildren();
    this.limit = null;
    this.close(0);
    setText($("ratelimit"), "");
  }

  // add queues files, each with its row and bar.
  add(files) {
    if (files.length === 0) return;
    for (const row of this.list.querySelectorAll("li.done")) row.remove();
    for (const file of files) {
      const fill = el("span", { class: "fill" });
      const bar = el("div", { class: "progress", role: "progressbar", "aria-label": "Upload of " + file.name,
        "aria-valuemin": "0", "aria-valuemax": "100", "aria-valuenow": "0" }, fill);
      const note = el("span", { class: "note", text: "waiting" });
      const row = el("li", { class: "upload" }, el("span", { class: "fname", text: file.name }), bar, note);
      this.list.appendChild(row);
      this.queue.push({ file, row, bar, fill, note });
    }
    if (!this.busy) this.drain();
  }

  async drain() {
    this.busy = true;
    while (this.queue.length > 0) {
      const u = this.queue.shift();
      if (this.closed()) { this.refuse(u, "not sent: upload limit reached"); continue; }
      await this.send(u);
    }
    this.busy = false;
  }

  async send(u) {
    const show = (f) => {
      const pct = Math.round(f * 100);
      u.fill.style.width = pct + "%";
      u.bar.setAttribute("aria-valuenow", String(pct));
      setText(u.note, pct + " %");
    };
    setText(u.note, "uploading");
    try {
      const r = await upload(u.file, show);
      if (r.status === 202) {
        show(1);
        setText(u.note, "uploaded");
        u.row.classList.add("done");
        this.refreshSoon();
        this.onUploaded(r.body);
        return;
      }
      if (r.status === 429) {
        const secs = r.retryAfter || (r.body && r.body.retry_after_seconds) || 60;
        if (r.body && r.body.limit) this.showLimit(r.body.limit, 0);
        this.close(secs);
        this.refuse(u, "not sent: upload limit reached");
        return;
      }
      this.refuse(u, (r.body && (r.body.detail || r.body.title)) || "refused (" + r.status + ")");
    } catch (e) {
      this.refuse(u, "upload failed: " + e.message);
    }
  }

  refuse(u, why) {
    u.row.classList.add("refused");
    setText(u.note, why);
  }

  // close disables the zone for secs seconds (0 opens it) and shows the
  // toast with its countdown while it is closed.
  close(secs) {
    this.until = secs > 0 ? Date.now() + secs * 1000 : 0;
    this.tick();
  }

  tick() {
    const left = (this.until - Date.now()) / 1000;
    const closed = left > 0;
    $("limit").hidden = !closed;
    this.zone.classList.toggle("disabled", closed || !session.key);
    this.input.disabled = closed || !session.key;
    if (closed) setText($("countdown"), clock(Math.ceil(left)));
    else if (this.until) { this.until = 0; this.refreshSoon(); }
  }

  showLimit(limit, remaining) {
    this.limit = { limit, remaining };
    setText($("ratelimit"), `${remaining} of ${limit} uploads left this hour`);
  }

  // refreshSoon reads the window again; reads asked for while one is in
  // flight make one more after it, so that a burst of uploads makes two
  // reads, not one each, and the last read is answered after the last ask.
  refreshSoon() {
    if (this.reading) { this.again = true; return; }
    this.reading = true;
    this.refresh().catch(() => {}).finally(() => { // a failed read: the next one tells
      this.reading = false;
      if (this.again) { this.again = false; this.refreshSoon(); }
    });
  }

  // refresh reads the window: uploads left and, when none, when the next
  // slot opens.
  async refresh() {
    const r = await getJSON("/v1/rate-limit");
    if (!r || !session.key) return;
    this.showLimit(r.limit, r.remaining);
    if (r.remaining === 0 && r.retry_after_seconds > 0) this.close(r.retry_after_seconds);
  }
}
