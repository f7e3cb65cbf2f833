package docket

import (
	"time"

	"github.com/docketq/docket/queue"
)

// DocumentStatus is where a document is in processing. It is derived from
// the state of the document's current job (see StatusOf).
type DocumentStatus string

// Document statuses; the same words as a job's status in the API.
const (
	StatusPending    DocumentStatus = "pending"
	StatusProcessing DocumentStatus = "processing"
	StatusCompleted  DocumentStatus = "completed"
	StatusFailed     DocumentStatus = "failed"
	StatusCancelled  DocumentStatus = "cancelled"
)

// Valid reports whether s is one of the statuses.
func (s DocumentStatus) Valid() bool {
	switch s {
	case StatusPending, StatusProcessing, StatusCompleted, StatusFailed, StatusCancelled:
		return true
	}
	return false
}

// StatusOf maps a job state to the status the API shows: scheduled and
// pending are "pending", running is "processing", the rest keep their name.
func StatusOf(s queue.State) DocumentStatus {
	switch s {
	case queue.StateScheduled, queue.StatePending:
		return StatusPending
	case queue.StateRunning, queue.StateWaiting: // waiting: a workflow's steps run
		return StatusProcessing
	case queue.StateCompleted:
		return StatusCompleted
	case queue.StateFailed:
		return StatusFailed
	case queue.StateCancelled:
		return StatusCancelled
	}
	return StatusPending
}

// JobStates are the job states that StatusOf maps to s.
func (s DocumentStatus) JobStates() []queue.State {
	switch s {
	case StatusPending:
		return []queue.State{queue.StateScheduled, queue.StatePending}
	case StatusProcessing:
		return []queue.State{queue.StateRunning, queue.StateWaiting}
	default:
		return []queue.State{queue.State(s)}
	}
}

// Document is an uploaded file and what processing found in it.
type Document struct {
	ID       string // opaque (a UUID)
	TenantID string
	// Filename is the sanitised display name; never used in a blob key.
	Filename    string
	ContentType string // the sniffed MIME type, e.g. "application/pdf"
	Size        int64  // bytes
	SHA256      string // hex digest of the content
	BlobKey     string // "<tenant>/<document id>" (documents uploaded before may have "<tenant>/<uuid>/<uuid>")
	// JobID is the document's current processing job (the latest retry).
	JobID int64
	// Status is derived by the store from the state of job JobID (StatusOf).
	// If that job no longer exists (retention deleted it), it is the status
	// last recorded with DocumentUpdate.
	Status DocumentStatus
	// Error is why processing failed: the error message of job JobID when
	// Status is failed, derived by the store like Status; empty otherwise
	// (and once retention has deleted the job).
	Error string
	// Fields are what analysis found; nil until processing completes.
	Fields *Fields
	// Warnings are non-fatal findings of processing ("no text layer; OCR
	// needed"); never nil once processed.
	Warnings  []string
	CreatedAt time.Time
	UpdatedAt time.Time
}

// Fields are what analysis extracts from a document.
type Fields struct {
	Title      string   `json:"title"`
	Language   string   `json:"language"` // ISO 639-1, "" if unknown
	PageCount  int      `json:"page_count"`
	WordCount  int      `json:"word_count"`
	Dates      []string `json:"dates"` // YYYY-MM-DD
	Amounts    []Amount `json:"amounts"`
	KeyPhrases []string `json:"key_phrases"`
	// ChunkCount is how many chunks the document was split into.
	ChunkCount int `json:"chunk_count"`
	// EmbeddingModel and EmbeddingDimensions name the vectors' model.
	EmbeddingModel      string `json:"embedding_model"`
	EmbeddingDimensions int    `json:"embedding_dimensions"`
	// ActiveContent is set for a PDF with JavaScript, launch actions or
	// embedded files.
	ActiveContent bool `json:"active_content"`
}

// Amount is a sum of money.
type Amount struct {
	Value    string `json:"value"`    // decimal: "1234.56"
	Currency string `json:"currency"` // ISO 4217: "EUR"
}

// DocumentListParams filters a tenant's documents, newest first.
type DocumentListParams struct {
	Status DocumentStatus // empty: all
	// Before is a cursor: only documents that sort after the one with this
	// id in the listing (older). Empty: from the newest.
	Before string
	Limit  int // 0: 50; at most 1000
}

// DocumentUpdateParams changes a document; nil fields are left as they are.
type DocumentUpdateParams struct {
	ID       string
	JobID    *int64
	Status   *DocumentStatus // recorded status (see Document.Status)
	Fields   *Fields
	Warnings []string // nil: unchanged
}
