// The tenant's one connection to GET /v1/events (the reconnect loop is
// livestream.js's, shared with the console). It resumes after a drop, and
// after a reload, with the Last-Event-ID of the last event seen (kept in
// sessionStorage with the key).

import { session } from "./api.js";
import { LiveStream } from "./livestream.js";

const LAST = "docket_last_event";

export class EventStream {
  // onJob(job) gets every job event; onStatus(text, bad) the connection's
  // state: "connecting…", "live", "reconnecting…" or why it stopped.
  constructor(onJob, onStatus) {
    this.live = new LiveStream({
      path: "/v1/events",
      headers: () => ({ Authorization: "Bearer " + session.key }),
      resumeFrom: () => this.lastEventID,
      maxDelay: 10000,
      onEvent: (name, data, id) => {
        if (data) onJob(data);
        if (id) sessionStorage.setItem(LAST, id);
      },
      onState: (state, detail) => {
        if (state === "refused") onStatus(detail, true);
        else onStatus({ connecting: "connecting…", live: "live", down: "reconnecting…" }[state], state === "down");
      },
    });
  }

  get lastEventID() { return sessionStorage.getItem(LAST) || ""; }

  // start (re)connects, dropping any connection this stream had.
  start() { this.live.start(); }

  stop() { this.live.stop(); }

  // forget drops the resume point: the next start begins afresh.
  static forget() { sessionStorage.removeItem(LAST); }
}
