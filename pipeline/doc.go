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
package pipeline

import "github.com/docketq/docket"

// Queue and job kind of document jobs.
const (
	Queue = docket.DocumentQueue // the queue of document jobs
	Kind  = docket.DocumentKind  // the job kind
)
