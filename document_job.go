package docket

import (
	"encoding/json"

	"github.com/docketq/docket/queue"
)

// The queue and kind of document-processing jobs. A tenant's Concurrency is
// its limit in DocumentQueue.
const (
	DocumentQueue = "documents"
	DocumentKind  = "process_document"
)

// DocumentArgs are the arguments of a document job: the document it
// processes, in the job's tenant.
type DocumentArgs struct {
	DocumentID string `json:"document_id"`
}

// DocumentPagesKind is the kind of a step of a long PDF's document job (a
// workflow): the pages DocumentPagesArgs names, processed on their own.
const DocumentPagesKind = "process_document_pages"

// DocumentPagesArgs are the arguments of a DocumentPagesKind job: the
// document, in the job's tenant, and its pages FirstPage to LastPage
// (1-based, inclusive).
type DocumentPagesArgs struct {
	DocumentID string `json:"document_id"`
	FirstPage  int    `json:"first_page"`
	LastPage   int    `json:"last_page"`
	// Result, when set, is the range's result, found by the document job,
	// which processed the first range itself (its parse told the page
	// count): the step records it and parses nothing.
	Result json.RawMessage `json:"result,omitempty"`
}

// DocumentJob is the document job's kind with its argument type: uploads
// enqueue with DocumentJob.Params (in DocumentQueue), and the pipeline's
// Processor decodes DocumentArgs.
var DocumentJob = queue.Kind[DocumentArgs]{Name: DocumentKind}

// DocumentCostUnit is the bytes of a document that count one unit of its
// job's cost (queue.EnqueueParams.Cost).
const DocumentCostUnit = 64 << 10

// DocumentCost is a document job's cost in the queue's fair shares: one
// per started DocumentCostUnit of the upload, at least 1, at most
// queue.MaxCost. Size is known at the upload for every type, where a
// PDF's page count would need the file parsed; it tracks the work of text
// and scanned pages alike.
func DocumentCost(size int64) int {
	c := (size + DocumentCostUnit - 1) / DocumentCostUnit
	return int(max(1, min(c, queue.MaxCost)))
}

// DocumentIDOf returns the document a document job processes, "" when j's
// arguments name none.
func DocumentIDOf(j *queue.Job) string {
	var a DocumentArgs
	_ = json.Unmarshal(j.Args, &a)
	return a.DocumentID
}
