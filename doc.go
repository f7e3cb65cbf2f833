// Package docket is the vocabulary of Docket's document service: tenants,
// API keys, documents, chunks, rate limits, the errors they share and the
// [Store] interface that keeps them.
//
// The job engine is package queue, a library on its own; this package adds
// what the document service needs on top of it. Storage drivers (package
// postgres, package sqlite) implement both queue.Driver and [Store] over one
// database, so a document and its job are written in one transaction
// ([Tx.Native] is the transaction queue.Client.EnqueueTx and
// queue.Task.CompleteTx take). Package storetest holds the conformance
// suite every Store passes (storetest.RunDocs).
//
// Dependency direction: cmd/docket wires everything; httpapi, pipeline and
// feed use this package, queue and blob; drivers implement the interfaces;
// this package imports only queue and apikey.
package docket
