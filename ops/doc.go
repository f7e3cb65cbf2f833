// Package ops is what an operator watches Docket with: Prometheus metrics
// (prometheus/client_golang) of the engine, the HTTP API and the store; the
// ops listener's handler (/metrics, /healthz, /readyz); and OpenTelemetry
// spans of job attempts.
//
// The engine is observed from outside, through queue.Hooks (claims,
// finishes, lease losses) and the client's event bus (enqueues, rescues),
// so package queue stays free of any metrics library. Gauges of the store
// (backlog, stuck and failed jobs, dead tuples, the vacuum horizon,
// LISTEN/NOTIFY queue usage, connection pools) are read by a Poller at an
// interval, never by a scrape: a scrape costs the database nothing.
// Per-tenant series are bounded: only the TopTenants deepest backlogs get a
// tenant label. See docs/monitoring.md.
package ops
