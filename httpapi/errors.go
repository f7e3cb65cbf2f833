package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/docketq/docket"
	"github.com/docketq/docket/embedding"
	"github.com/docketq/docket/queue"
)

// httpError is an error with its HTTP status, shown as an RFC 9457 problem.
type httpError struct {
	status int
	title  string // short, the same for every occurrence; default the status text
	detail string // this occurrence
	// retryAfter, when positive, is sent as Retry-After (seconds).
	retryAfter int
	// extra members of the problem object.
	extra map[string]any
}

func (e *httpError) Error() string { return fmt.Sprintf("%d %s: %s", e.status, e.title, e.detail) }

// errorf returns an httpError with status and a formatted detail.
func errorf(status int, format string, args ...any) *httpError {
	return &httpError{status: status, title: http.StatusText(status), detail: fmt.Sprintf(format, args...)}
}

// errorStatus maps an error to its status, title and detail: the one place
// where errors become HTTP.
func errorStatus(err error) (status int, title, detail string) {
	var he *httpError
	switch {
	case errors.As(err, &he):
		return he.status, he.title, he.detail
	case errors.Is(err, docket.ErrNotFound):
		return http.StatusNotFound, "Not Found", "no such object"
	case errors.Is(err, docket.ErrConflict):
		return http.StatusConflict, "Conflict", userDetail(err, "the object is not in a state that allows this")
	case errors.Is(err, docket.ErrDuplicate):
		return http.StatusConflict, "Conflict", userDetail(err, "an object with the same name already exists")
	case errors.Is(err, docket.ErrInvalid):
		return http.StatusBadRequest, "Bad Request", userDetail(err, "a value is malformed or out of range")
	case errors.Is(err, queue.ErrLeaseLost):
		return http.StatusConflict, "Conflict", userDetail(err, "the job's lease is no longer held")
	case errors.Is(err, embedding.ErrRateLimited), errors.Is(err, embedding.ErrUnavailable):
		return http.StatusServiceUnavailable, "Service Unavailable", "the embedding service is unavailable"
	case errors.Is(err, embedding.ErrUnauthorized), errors.Is(err, embedding.ErrQuotaExceeded),
		errors.Is(err, embedding.ErrInvalidRequest), errors.Is(err, embedding.ErrBadResponse):
		return http.StatusBadGateway, "Bad Gateway", "the embedding service refused the request"
	case errors.Is(err, context.Canceled):
		return 499, "Client Closed Request", "the request was cancelled"
	case errors.Is(err, context.DeadlineExceeded):
		return http.StatusServiceUnavailable, "Service Unavailable", "timed out"
	case errors.Is(err, queue.ErrUnavailable):
		return http.StatusServiceUnavailable, "Service Unavailable", "the database is unavailable for a moment (a restart or failover); retry"
	}
	return http.StatusInternalServerError, "Internal Server Error", "internal error"
}

// userDetail is err's message as a problem's detail, or generic when the
// chain holds the database's own text (queue.DatabaseError: a constraint's
// name, SQL, an SQLSTATE), which users never see; writeError logs it.
func userDetail(err error, generic string) string {
	var dbErr *queue.DatabaseError
	if errors.As(err, &dbErr) {
		return generic
	}
	return err.Error()
}

// writeError answers with the problem for err; it logs 5xx, and 4xx whose
// detail it replaced because they carry the database's text.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	status, title, detail := errorStatus(err)
	var dbErr *queue.DatabaseError
	switch {
	case status >= 500:
		s.logger.Error("request failed", "method", r.Method, "path", r.URL.Path, "status", status, "error", err)
	case errors.As(err, &dbErr):
		s.logger.Warn("request refused by the database", "method", r.Method, "path", r.URL.Path, "status", status, "error", err)
	}
	if errors.Is(err, errResponseStarted) {
		return
	}
	p := map[string]any{"type": "about:blank", "title": title, "status": status, "detail": detail}
	var he *httpError
	if errors.As(err, &he) {
		for k, v := range he.extra {
			p[k] = v
		}
		if he.retryAfter > 0 {
			w.Header().Set("Retry-After", strconv.Itoa(he.retryAfter))
		}
	}
	if errors.Is(err, queue.ErrUnavailable) {
		w.Header().Set("Retry-After", "1")
	}
	w.Header().Set("Content-Type", "application/problem+json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(p)
}

// writeJSON answers with v as JSON.
func writeJSON(w http.ResponseWriter, status int, v any) error {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	if err := json.NewEncoder(w).Encode(v); err != nil {
		return fmt.Errorf("%w: %w", errResponseStarted, err)
	}
	return nil
}

// maxJSONBody caps JSON request bodies.
const maxJSONBody = 1 << 20

// decodeJSON reads a JSON request body into v: unknown fields and trailing
// data are errors (400), and so is a body over maxJSONBody (413) or one
// whose strings hold the escape \u0000: the stores keep text, and text
// holds no NUL (PostgreSQL refuses it; SQLite would cut names at it).
//
// The body must arrive within Config.BodyTimeout (408 otherwise, and the
// connection closes); once read, the read deadline is cleared, so that a
// long handler is not cut off by it.
func decodeJSON(w http.ResponseWriter, r *http.Request, v any) error {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxJSONBody))
	if err != nil {
		var mbe *http.MaxBytesError
		switch {
		case errors.As(err, &mbe):
			return errorf(http.StatusRequestEntityTooLarge, "request body over %d bytes", maxJSONBody)
		case isTimeout(err):
			w.Header().Set("Connection", "close")
			return &httpError{status: http.StatusRequestTimeout, title: "Request Timeout", detail: "the request body did not arrive in time"}
		}
		return errorf(http.StatusBadRequest, "reading the request body: %v", err)
	}
	// The whole body is in: the handler may take its time.
	_ = http.NewResponseController(w).SetReadDeadline(time.Time{})
	if hasNULEscape(body) {
		return errorf(http.StatusBadRequest, `invalid JSON body: a string holds the escape \u0000 (NUL), which text may not hold`)
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return errorf(http.StatusBadRequest, "invalid JSON body: %v", err)
	}
	if dec.More() {
		return errorf(http.StatusBadRequest, "invalid JSON body: data after the object")
	}
	return nil
}

// hasNULEscape reports whether JSON text b holds the escape \u0000: a
// "u0000" after an odd run of backslashes (an even run is escaped
// backslashes followed by plain text). Backslashes occur only inside
// strings in valid JSON, so no tokenizing is needed.
func hasNULEscape(b []byte) bool {
	for i := 0; ; {
		k := bytes.Index(b[i:], []byte(`u0000`))
		if k < 0 {
			return false
		}
		k += i
		n := 0
		for j := k - 1; j >= 0 && b[j] == '\\'; j-- {
			n++
		}
		if n%2 == 1 {
			return true
		}
		i = k + 1
	}
}
