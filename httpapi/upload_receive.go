package httpapi

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"

	"github.com/google/uuid"

	"github.com/docketq/docket"
	"github.com/docketq/docket/blob"
	"github.com/docketq/docket/pipeline/extract"
)

// maxUploadParts caps the multipart parts read before the file part.
const maxUploadParts = 16

// upload is one POST /v1/documents in progress. Until commit succeeds,
// cleanup deletes its blob.
type upload struct {
	s       *Server
	tenant  *docket.Tenant
	idemKey string

	doc         *docket.Document
	requestHash string // of the file and its name, for idempotency
	committed   bool
}

// receive streams the multipart field "file" to blob storage and fills
// u.doc. Memory stays flat whatever the file's size.
func (u *upload) receive(w http.ResponseWriter, r *http.Request, boundary string) error {
	body := newBodyReader(w, r, u.s.maxUploadBody())
	defer body.done(w)
	mr := newPartReader(body, boundary)
	defer mr.release()
	part, err := u.filePart(mr, body)
	if err != nil {
		return err
	}
	docID := uuid.NewString()
	u.doc = &docket.Document{
		ID: docID, Filename: sanitizeFilename(part.FileName()),
		// One directory per tenant, created once: a key with a directory
		// per document cost each upload a mkdir and two more fsyncs.
		BlobKey: u.tenant.ID + "/" + docID,
	}
	if err := u.store(r.Context(), part, body); err != nil {
		return err
	}
	return u.rest(mr, body)
}

// filePart returns the part named "file", skipping at most maxUploadParts
// others; what comes before its data may not pass uploadOverhead bytes.
// A file sent in another field is named in the refusal, however large it
// is (skipping it passes the limit).
func (u *upload) filePart(mr *partReader, body *bodyReader) (*multipart.Part, error) {
	mr.SetLimit(uploadOverhead)
	misnamed := "" // the field of a file sent under another name
	for range maxUploadParts + 1 {
		p, err := mr.NextPart()
		if misnamed != "" && body.err == nil && (errors.Is(err, io.EOF) || errors.Is(err, errPartsLimit)) {
			return nil, errorf(http.StatusBadRequest,
				"send the file in the multipart field \"file\"; this request sent one in the field %q", misnamed)
		}
		switch {
		case errors.Is(err, io.EOF):
			return nil, errorf(http.StatusBadRequest, "no multipart field \"file\"")
		case err != nil:
			return nil, u.readError(body, err)
		case p.FormName() == "file" && misnamed != "":
			return nil, errTwoFiles(misnamed)
		case p.FormName() == "file":
			mr.SetLimit(-1)
			return p, nil
		case p.FileName() != "" && misnamed == "":
			misnamed = p.FormName()
		}
	}
	return nil, errorf(http.StatusBadRequest, "more than %d multipart parts before the field \"file\"", maxUploadParts)
}

// rest reads what follows the file: small fields may, a second file may
// not (400: one file per request), and neither may more than
// uploadOverhead bytes or maxUploadParts parts.
func (u *upload) rest(mr *partReader, body *bodyReader) error {
	mr.SetLimit(mr.Offset() + uploadOverhead)
	for range maxUploadParts + 1 {
		p, err := mr.NextPart()
		switch {
		case errors.Is(err, io.EOF):
			return nil
		case errors.Is(err, errPartsLimit) && body.err == nil:
			return errorf(http.StatusBadRequest, "multipart fields after the file are over %d bytes", uploadOverhead)
		case err != nil:
			return u.readError(body, err)
		case p.FormName() == "file" || p.FileName() != "":
			return errTwoFiles(p.FormName())
		}
	}
	return errorf(http.StatusBadRequest, "more than %d multipart parts after the field \"file\"", maxUploadParts)
}

// errTwoFiles refuses a request with a second file, in field.
func errTwoFiles(field string) error {
	return errorf(http.StatusBadRequest,
		"one file per request: this request sent a second file (field %q); upload it with another request", field)
}

// readError maps an error of the multipart reader: the body reader's own
// error when it had one, else a malformed body (400).
func (u *upload) readError(body *bodyReader, err error) error {
	if body.err != nil {
		err = body.err
	}
	herr, _ := u.s.bodyError(err)
	return herr
}

// store sniffs the file's type from its first bytes (415 for anything
// but the accepted types, 400 when empty), then streams it to the blob and
// checks a DOCX's structure there.
func (u *upload) store(ctx context.Context, part io.Reader, body *bodyReader) error {
	fr := newFileReader(part, u.s.cfg.MaxUploadBytes)
	head := make([]byte, extract.SniffLen)
	n, err := io.ReadFull(fr, head)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
		return u.readError(body, err)
	}
	typ, err := extract.SniffBytes(head[:n])
	switch {
	case errors.Is(err, extract.ErrEmpty):
		return errorf(http.StatusBadRequest, "the file is empty")
	case errors.Is(err, extract.ErrBinary):
		return errorf(http.StatusUnsupportedMediaType, "unsupported file type: binary data; "+
			"send PDF, DOCX, HTML, Markdown or text (UTF-8, UTF-16 or Windows-1252)")
	case err != nil:
		return errorf(http.StatusUnsupportedMediaType, "unsupported file type: send PDF, DOCX, HTML, Markdown or plain text")
	}
	size, err := u.s.cfg.Blobs.Put(ctx, u.doc.BlobKey, io.MultiReader(bytes.NewReader(head[:n]), fr))
	if err != nil {
		if fr.err != nil || body.err != nil {
			return u.readError(body, errors.Join(fr.err, body.err))
		}
		return fmt.Errorf("store upload: %w", err)
	}
	if typ == extract.TypeDOCX {
		if err := u.checkDOCX(ctx, size); err != nil {
			return err
		}
	}
	digest := hex.EncodeToString(fr.sha.Sum(nil))
	u.doc.ContentType, u.doc.Size, u.doc.SHA256 = typ.MIME(), size, digest
	rh := sha256Hex(digest + "\x00" + u.doc.Filename)
	u.requestHash = rh
	return nil
}

// checkDOCX refuses (415) a ZIP that is not a well-formed DOCX.
func (u *upload) checkDOCX(ctx context.Context, size int64) error {
	ra, _, err := blob.OpenReaderAt(ctx, u.s.cfg.Blobs, u.doc.BlobKey)
	if err != nil {
		return fmt.Errorf("inspect upload: %w", err)
	}
	defer ra.Close()
	if err := extract.InspectDOCX(ra, size); err != nil {
		if extract.Permanent(err) {
			return errorf(http.StatusUnsupportedMediaType, "the ZIP file is not a usable DOCX: %v", err)
		}
		return fmt.Errorf("inspect upload: %w", err)
	}
	return nil
}

// cleanup undoes an upload that did not commit: it deletes the blob.
func (u *upload) cleanup(ctx context.Context) {
	if u.committed {
		return
	}
	ctx = context.WithoutCancel(ctx)
	if u.doc != nil {
		if err := u.s.cfg.Blobs.Delete(ctx, u.doc.BlobKey); err != nil {
			u.s.logger.Warn("delete refused upload", "blob_key", u.doc.BlobKey, "error", err)
		}
	}
}
