package httpapi

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/docketq/docket"
	"github.com/docketq/docket/queue"
)

// A problem's detail carries the application's message, never the
// database's text: before, errorStatus echoed err.Error(), and a unique
// violation translated by a driver showed PostgreSQL's constraint name and
// SQLSTATE to the client.
func TestErrorStatus_NoDatabaseText(t *testing.T) {
	t.Parallel()
	pgText := errors.New(`ERROR: duplicate key value violates unique constraint "docket_tenants_name_key" (SQLSTATE 23505)`)
	for _, tc := range []struct {
		name       string
		err        error
		status     int
		wantDetail string // a substring
	}{
		{"DuplicateFromDB", fmt.Errorf("create tenant: %w: %w", docket.ErrDuplicate, &queue.DatabaseError{Err: pgText}),
			http.StatusConflict, "already exists"},
		{"InvalidFromDB", fmt.Errorf("%w: %w", docket.ErrInvalid, &queue.DatabaseError{Err: errors.New("CHECK constraint failed: attempts >= 0")}),
			http.StatusBadRequest, "malformed or out of range"},
		{"ConflictFromDB", fmt.Errorf("%w: %w", docket.ErrConflict, &queue.DatabaseError{Err: pgText}),
			http.StatusConflict, "not in a state"},
		{"InvalidFromApp", fmt.Errorf("%w: title over 1024 bytes", docket.ErrInvalid),
			http.StatusBadRequest, "title over 1024 bytes"},
		{"ConflictFromApp", fmt.Errorf("retry job 7: %w", docket.ErrConflict),
			http.StatusConflict, "retry job 7"},
	} {
		status, _, detail := errorStatus(tc.err)
		if status != tc.status {
			t.Errorf("%s: status %d, want %d", tc.name, status, tc.status)
		}
		if !strings.Contains(detail, tc.wantDetail) {
			t.Errorf("%s: detail %q, want it to contain %q", tc.name, detail, tc.wantDetail)
		}
		for _, leak := range []string{"SQLSTATE", "constraint", "ERROR:"} {
			if strings.Contains(detail, leak) {
				t.Errorf("%s: detail %q shows the database's text (%q)", tc.name, detail, leak)
			}
		}
	}
}

// A store that cannot be reached (a failover, a restart) is a 503 with
// Retry-After, never a 500: the client retries, as it would after a 429.
func TestWriteError_StoreUnavailable(t *testing.T) {
	t.Parallel()
	s := &Server{logger: slog.New(slog.DiscardHandler)}
	rec := httptest.NewRecorder()
	err := fmt.Errorf("upload: %w: %w", queue.ErrUnavailable, &queue.DatabaseError{Err: errors.New("FATAL: terminating connection due to administrator command (SQLSTATE 57P01)")})
	s.writeError(rec, httptest.NewRequest(http.MethodPost, "/v1/documents", nil), err)
	if rec.Code != http.StatusServiceUnavailable || rec.Header().Get("Retry-After") != "1" {
		t.Fatalf("status %d, Retry-After %q; want 503 and 1", rec.Code, rec.Header().Get("Retry-After"))
	}
	if body := rec.Body.String(); strings.Contains(body, "SQLSTATE") || !strings.Contains(body, "retry") {
		t.Errorf("body %s: want a retry hint and no database text", body)
	}
}
