// Estimates from recent throughput: how long this tenant's documents took
// (seen completing on the event stream), how far a running one has come.
// An estimate shown never counts up: a later, worse estimate does not move
// the time shown later ("any moment now" once it has passed).

const KEEP = 20; // durations remembered

export class Throughput {
  constructor() { this.durations = []; this.seen = new Set(); }

  // record notes a completed job's processing time, once per job.
  record(job) {
    if (job.status !== "completed" || !job.started_at || !job.completed_at || this.seen.has(job.id)) return;
    this.seen.add(job.id);
    const ms = Date.parse(job.completed_at) - Date.parse(job.started_at);
    if (!(ms >= 0)) return;
    this.durations.push(ms);
    if (this.durations.length > KEEP) this.durations.shift();
  }

  // average processing time in ms, or 0 when nothing completed yet.
  average() {
    if (this.durations.length === 0) return 0;
    return this.durations.reduce((a, b) => a + b, 0) / this.durations.length;
  }
}

// estimate returns when a job should start (pending) or finish
// (processing), in ms since the epoch, or null when it cannot tell yet.
// running lists the tenant's running jobs: while some wait, they are as
// many as the tenant may run at once.
export function estimate(job, tp, running, now) {
  const avg = tp.average();
  if (job.status === "pending") {
    if (!avg || job.queue_position == null) return null;
    const slots = Math.max(1, running.length);
    const left = running.map((r) => Math.max(0, avg - (now - Date.parse(r.started_at || r.updated_at))));
    const soonest = left.length ? Math.min(...left) : 0;
    return now + soonest + Math.floor(job.queue_position / slots) * avg;
  }
  if (job.status === "processing") {
    const started = Date.parse(job.started_at || job.updated_at);
    const elapsed = now - started, pct = job.progress_percent;
    if (pct >= 5 && elapsed >= 1000) return now + (elapsed * (100 - pct)) / pct;
    if (avg) return started + avg;
  }
  return null;
}

// Eta keeps one job's estimate: the earliest seen for its current phase.
export class Eta {
  constructor() { this.phase = ""; this.at = null; }

  update(phase, at) {
    if (phase !== this.phase) { this.phase = phase; this.at = null; }
    if (at != null && (this.at == null || at < this.at)) this.at = at;
  }
}
