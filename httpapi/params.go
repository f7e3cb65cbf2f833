package httpapi

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"

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

// checkText refuses (400) a request whose query string is malformed or
// whose path, or a query parameter's name or value, holds a NUL byte or
// invalid UTF-8: every route's parameters are text that the stores can
// keep and compare, whichever parameter a handler reads.
func checkText(r *http.Request) error {
	if !cleanText(r.URL.Path) {
		return errorf(http.StatusBadRequest, "the path holds a NUL byte or invalid UTF-8")
	}
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return errorf(http.StatusBadRequest, "malformed query string: an invalid %%-escape or a semicolon")
	}
	for name, values := range q {
		ok := cleanText(name)
		for _, v := range values {
			ok = ok && cleanText(v)
		}
		if !ok {
			return errorf(http.StatusBadRequest, "query parameter %q holds a NUL byte or invalid UTF-8", name)
		}
	}
	return nil
}

// cleanText says whether s is valid UTF-8 without NUL bytes.
func cleanText(s string) bool {
	return utf8.ValidString(s) && !strings.ContainsRune(s, 0)
}
