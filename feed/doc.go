// Package feed turns the job engine's events into per-tenant streams of job
// changes: the live progress behind GET /v1/events.
//
// A [Feed] watches one queue. [Feed.Subscribe] returns a tenant's active jobs
// (scheduled, pending, running, each with its queue position) and then every
// change of the tenant's jobs: status, stage, percent, message, partial
// result (queue.Job.PartialResult: what the handler has found so far, such
// as a document's early results), attempt, error and queue position. Three sources keep a tenant's view current:
//
//   - the client's in-process event bus (queue.Client.Bus): a change made by
//     this process goes out at once, without a store read for inserts,
//     starts, cancels and progress;
//   - cross-process hints (queue.Client.ListenChanges, LISTEN/NOTIFY on
//     PostgreSQL): a debounced re-read of the subscribed tenants, diffed
//     against what their subscribers last saw;
//   - a poll every Config.PollInterval, which catches lost hints and changes
//     that publish no event (scheduled jobs becoming pending).
//
// Notifications are only hints: a lost one costs latency, never a change.
//
// Queue positions are recomputed per tenant whenever its set of waiting
// jobs changes: the tenant's pending jobs sorted by priority (highest
// first), then id; a scheduled job has every pending job ahead of it. A
// tenant with more than 1000 waiting jobs is tracked by its newest 1000, and
// the positions of those are anchored with queue.Client.Position.
//
// Every change carries an event id ([Change.ID]) made of the feed's clock in
// unix microseconds and the job's id. [Feed.Since] takes such an id (an SSE
// Last-Event-ID), from this process or another, before or after a restart,
// and returns every job of the tenant changed since, as it is now.
//
// Publishing never blocks: a subscriber that falls [Config.Buffer] changes
// behind is dropped (its channel closed) and reconnects with its last id.
package feed
