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

// DocumentJob is the document job's kind with its argument type: uploads
// enqueue with DocumentJob.Params (in DocumentQueue), and the pipeline's
// Processor decodes DocumentArgs.
var DocumentJob = queue.Kind[DocumentArgs]{Name: DocumentKind}

// DocumentIDOf returns the document a document job processes, "" when j's
// arguments name none.
func DocumentIDOf(j *queue.Job) string {
	var a DocumentArgs
	_ = json.Unmarshal(j.Args, &a)
	return a.DocumentID
}
