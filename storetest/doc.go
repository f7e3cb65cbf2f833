// Package storetest is the conformance suite every document store must
// pass: [RunDocs] checks a docket.Store (documents, chunks, tenants, API
// keys, rate limits, idempotency, tenant isolation) on the database it
// shares with an engine driver, and [RunMonitor] its monitoring views.
// The engine driver's own suite is package queue/drivertest.
//
// A store package runs it from one test, with a constructor that returns a
// fresh, migrated, empty store for each subtest and registers its own
// cleanup, the way testing/slogtest checks a slog.Handler. Subtests are
// grouped by method and run in parallel, each against its own store;
// nothing is synchronised with sleeps.
package storetest
