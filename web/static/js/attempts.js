// A job's attempt history (GET /v1/admin/jobs/{id}) as a table: each
// attempt's outcome, worker, start, end, duration and error.

import { el, clock } from "./dom.js";

const OUTCOME = {
  completed: "completed", retry: "failed, retried", failed: "failed", snoozed: "snoozed",
  released: "released (worker stopped)", timed_out: "timed out (lease ran out)", cancelled: "cancelled", running: "running",
};

const when = (t) => (t ? new Date(t).toLocaleString() : "–");

function took(a) {
  const s = Date.parse(a.started_at), e = a.ended_at ? Date.parse(a.ended_at) : Date.now();
  return Number.isFinite(s) && Number.isFinite(e) ? clock((e - s) / 1000) : "–";
}

// attemptsTable renders detail's attempts, oldest first, captioned with the
// job's id.
export function attemptsTable(detail) {
  const caption = el("caption", { text: `Attempts of job ${detail.job.id}` });
  if (!detail.attempts.length) {
    return el("p", { class: "muted", text: `Job ${detail.job.id} has not run yet.` });
  }
  const head = el("thead", {}, el("tr", {}, ...["Attempt", "Outcome", "Worker", "Started", "Ended", "Took", "Error"]
    .map((h) => el("th", { scope: "col", text: h }))));
  const rows = detail.attempts.map((a) => el("tr", { "data-attempt": a.attempt, "data-outcome": a.outcome },
    ...[a.attempt, OUTCOME[a.outcome] || a.outcome, a.worker_id || "–", when(a.started_at), when(a.ended_at), took(a), a.error || ""]
      .map((v) => el("td", { text: v }))));
  return el("table", { class: "grid attempts" }, caption, head, el("tbody", {}, ...rows));
}
