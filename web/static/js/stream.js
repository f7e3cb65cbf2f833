// One connection to GET /v1/events, read with fetch so the key is a header.
// It resumes after a drop, and after a reload, with the Last-Event-ID of
// the last event seen (kept in sessionStorage with the key).

import { api, problem } from "./api.js";

const LAST = "docket_last_event";

export class EventStream {
  // onJob(job) gets every job event; onStatus(text, bad) the connection's
  // state: "connecting…", "live", "reconnecting…" or why it stopped.
  constructor(onJob, onStatus) {
    this.onJob = onJob;
    this.onStatus = onStatus;
    this.ctl = null;
  }

  get lastEventID() { return sessionStorage.getItem(LAST) || ""; }

  // start (re)connects, dropping any connection this stream had.
  start() {
    this.stop();
    const ctl = new AbortController();
    this.ctl = ctl;
    this.run(ctl.signal);
  }

  stop() {
    if (this.ctl) this.ctl.abort();
    this.ctl = null;
  }

  // forget drops the resume point: the next start begins afresh.
  static forget() { sessionStorage.removeItem(LAST); }

  async run(signal) {
    this.onStatus("connecting…");
    for (let delay = 500; !signal.aborted; delay = Math.min(delay * 2, 10000)) {
      try {
        const last = this.lastEventID;
        const res = await api("/v1/events", { headers: last ? { "Last-Event-ID": last } : {}, signal });
        if (res.status === 401 || res.status === 403) { this.onStatus(await problem(res), true); return; }
        if (!res.ok) throw new Error(await problem(res));
        this.onStatus("live");
        delay = 500;
        await this.read(res.body.getReader(), signal);
      } catch (e) {
        if (signal.aborted) return;
      }
      if (signal.aborted) return;
      this.onStatus("reconnecting…", true);
      await new Promise((r) => setTimeout(r, delay));
    }
  }

  async read(reader, signal) {
    const dec = new TextDecoder();
    let buf = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done || signal.aborted) return;
      buf += dec.decode(value, { stream: true });
      let i;
      while ((i = buf.indexOf("\n\n")) >= 0) {
        const block = buf.slice(0, i);
        buf = buf.slice(i + 2);
        this.dispatch(block);
      }
    }
  }

  dispatch(block) {
    let id = "", data = "";
    for (const line of block.split("\n")) {
      if (line.startsWith("id:")) id = line.slice(3).trim();
      else if (line.startsWith("data:")) data += line.slice(5).trim();
    }
    if (data) this.onJob(JSON.parse(data));
    if (id) sessionStorage.setItem(LAST, id);
  }
}
