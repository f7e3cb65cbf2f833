// Package pipeline is the document-processing job: the queue handler that
// turns an uploaded document into chunks, vectors and fields.
//
// A [Processor] works jobs of kind [Kind] on queue [Queue]. Each job runs
// five stages and reports its progress through the job record, within fixed
// percent ranges:
//
//	downloading  0–5    read the document row, open its blob for random access
//	parsing      5–55   extract the text page by page, analyse it, split it
//	                    (chunk.Split, with page ranges) and, for the local
//	                    embedding.Hashing, compute the vectors: in a child
//	                    process of package sandbox when the processor has
//	                    one (the chunks come back a batch at a time, never
//	                    the whole text), else in this process
//	chunking    55–65   the chunks' count and the early results
//	embedding   65–85   the Embedder, batch by batch, where the parse did
//	                    not; each batch of Config.SaveBatch chunks saved as
//	                    it comes
//	analyzing   85–100  the fields; then one transaction stores them
//
// The tenant is always the job row's, never the arguments': a job whose
// arguments name another tenant's document cannot see it and fails.
//
// The chunks are saved in batches, each in a transaction of the tenant
// fenced by the job's lease (queue.Task.FenceTx): the first batch replaces
// an earlier attempt's chunks, and a lost lease rolls its batch back. The
// last transaction stores the document's fields, warnings and status
// (docket.Tx.DocumentUpdate) and the job's completion (queue.Task.CompleteTx):
// it commits whole, or not at all when the lease was lost.
//
// Failures: input the parser rejects (an extract sentinel), a document
// that does not exist for the tenant, and permanent embedding errors fail
// the job at once with queue.Permanent and a message that starts with its
// reason ("rejected_input: malformed: ...", "document not found: ...").
// Anything else (blob or store unavailable, an embedding service down) is
// returned as is, and the queue retries the job with backoff.
//
// # Large documents as workflows
//
// A PDF of more than Config.RangePages pages (the service's
// --range-pages, default 32; 0 keeps every document one job) is processed
// as a workflow (queue.Task.Spawn). Its document job parses the first
// range of RangePages pages, which tells it the page count (a shorter PDF
// is done then, as one job, with no other parse); it finishes that range
// as a step would, and starts a step per range, jobs of kind [RangeKind]
// in the same queue and tenant named "pages-0001-0032", "pages-0033-0064"
// and so on, and waits for them without holding a slot
// (queue.AwaitChildren); the document is processing meanwhile. The first
// step's arguments hold its result, which it records; each other step
// extracts only its pages (extract.Options.Pages: the others are never
// loaded), splits, embeds and saves their chunks, and records what it
// found (fields, page and chunk counts, warnings) as its job's result
// ([RangeResult]). A chunk never spans two ranges. The chunks of a range
// take the indexes of its pages, (first page - 1) × 16384 on, so a step
// run again (a lost lease, a retry) replaces its own chunks and no
// other's (docket.Tx.ChunkDeleteIndexes). When every step has ended the
// document job runs again: it merges the results (the first range's
// title, the language of the range with the most words, counts summed,
// dates and amounts in page order, each range's best key phrases in
// turn, warnings once) and completes the document as a single job would.
// A step that failed for good fails the document with the step's message
// (and its name); queue.Client.Retry of the document's job runs the failed
// steps again, keeping the completed ones. Shorter PDFs and other types
// take the single-job path. A step counts against its tenant's
// concurrency like any job: with a limit of 1, the steps run one after
// another, and another tenant's documents are claimed between them.
package pipeline

import "github.com/docketq/docket"

// Queue and job kind of document jobs.
const (
	Queue = docket.DocumentQueue // the queue of document jobs
	Kind  = docket.DocumentKind  // the job kind
)
