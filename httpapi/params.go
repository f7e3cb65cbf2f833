package httpapi

import (
	"net/http"
	"strconv"

	"github.com/google/uuid"

	"github.com/docketq/docket"
)

// statusParam parses a ?status= filter: empty or one of the API's statuses.
func statusParam(s string) (docket.DocumentStatus, error) {
	st := docket.DocumentStatus(s)
	if s != "" && !st.Valid() {
		return "", errorf(http.StatusBadRequest,
			"unknown status %q: want pending, processing, completed, failed or cancelled", s)
	}
	return st, nil
}

// limitParam parses a ?limit= page size: default defaultPageSize, 1 to
// maxPageSize.
func limitParam(s string) (int, error) {
	if s == "" {
		return defaultPageSize, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > maxPageSize {
		return 0, errorf(http.StatusBadRequest, "limit must be 1-%d", maxPageSize)
	}
	return n, nil
}

// documentID returns the path's document id; a malformed one is not found.
func documentID(r *http.Request) (string, error) {
	id := r.PathValue("id")
	u, err := uuid.Parse(id)
	if err != nil || u.String() != id {
		return "", docket.ErrNotFound
	}
	return id, nil
}
