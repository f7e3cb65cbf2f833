package pipeline

import (
	"errors"
	"fmt"
	"mime"
	"strings"

	"github.com/docketq/docket"
	"github.com/docketq/docket/pipeline/extract"
	"github.com/docketq/docket/queue"
)

// errDocumentNotFound is the failure of a job whose document does not exist
// in the job's tenant: deleted, or another tenant's.
var errDocumentNotFound = fmt.Errorf("document %w", docket.ErrNotFound)

// ReasonRejectedInput starts the message of a job failed for its input.
const ReasonRejectedInput = "rejected_input"

// rejected fails the job for good because of its input: the message names
// the reason code, as in "rejected_input: malformed: pdf: ...".
func rejected(err error) error {
	reason := extract.Reason(err)
	if reason == "" {
		reason = "invalid"
	}
	return queue.Permanent(fmt.Errorf("%s: %s: %w", ReasonRejectedInput, reason, err))
}

// notFound turns the store's ErrNotFound for the job's document into a
// permanent failure and wraps any other error with what for a retry.
func notFound(err error, docID, what string) error {
	if errors.Is(err, docket.ErrNotFound) {
		return queue.Permanent(fmt.Errorf("%w: %s", errDocumentNotFound, docID))
	}
	return fmt.Errorf("%s: %w", what, err)
}

// typeOf maps a document's stored content type (the sniffed MIME type, see
// extract.Type.MIME) to the type to extract. Parameters such as charset
// are ignored; an unknown type is extract.ErrUnsupported.
func typeOf(contentType string) (extract.Type, error) {
	media, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return extract.TypeUnknown, fmt.Errorf("content type %q: %w", contentType, extract.ErrUnsupported)
	}
	for _, t := range []extract.Type{extract.TypePDF, extract.TypeDOCX, extract.TypeHTML,
		extract.TypeMarkdown, extract.TypeText} {
		if want, _, _ := strings.Cut(t.MIME(), ";"); media == want {
			return t, nil
		}
	}
	return extract.TypeUnknown, fmt.Errorf("content type %q: %w", contentType, extract.ErrUnsupported)
}
