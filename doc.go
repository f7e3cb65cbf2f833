// Package docket is the vocabulary of Docket's document service: tenants,
// API keys, documents, chunks, rate limits, idempotency records, the errors
// they share and the [Store] interface that keeps them.
//
// The job engine is package queue, a library on its own; this package adds
// what the document service needs on top of it. The engine's drivers
// (package postgres, package sqlite) implement queue/driver and nothing of
// the documents. The document stores (package pgstore under postgres,
// package sqlitestore under sqlite) implement [Store] over a driver's
// database, so a document and its job are written in one transaction
// ([Tx.Native] is the transaction queue.Client.EnqueueTx and
// queue.Task.CompleteTx take). Package storetest holds the conformance
// suites every Store passes (storetest.RunDocs, storetest.RunMonitor).
//
// Dependency direction: cmd/docket wires everything; httpapi, pipeline and
// feed use this package, queue and blob; the document stores import their
// driver and this package; this package imports only queue and apikey.
package docket
