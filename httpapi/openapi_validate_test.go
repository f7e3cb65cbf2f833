package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"mime"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"

	"github.com/docketq/docket/queue"
)

// The API tests' servers answer through ValidateResponses, which holds
// every response to what openapi.json declares for its operation: the
// status must be one the operation lists, the content type one the
// status lists, and a JSON body must match the schema. A stream
// (text/event-stream) is held to its status and content type only.
//
// With DOCKET_OPENAPI_COVERAGE set to a file name, every checked response
// appends "operationId status" to that file, so a run can count what the
// tests cover.

// spec is openapi.json loaded once per test binary for the validator.
var spec = sync.OnceValues(loadSpec)

// specChecker validates responses against the served document.
type specChecker struct {
	router routers.Router
	// problem is the document's Problem schema, which answers to a path
	// or method the document does not describe (404, 405) must match.
	problem *openapi3.SchemaRef
}

func loadSpec() (*specChecker, error) {
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(openAPIDocument)
	if err != nil {
		return nil, fmt.Errorf("load openapi.json: %w", err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		return nil, fmt.Errorf("openapi.json is not a valid document: %w", err)
	}
	for _, sr := range doc.Components.Schemas {
		if err := sr.WalkSubtree(admitNullInEmpty); err != nil {
			return nil, err
		}
	}
	router, err := gorillamux.NewRouter(doc)
	if err != nil {
		return nil, fmt.Errorf("route openapi.json: %w", err)
	}
	problem := doc.Components.Schemas["Problem"]
	if problem == nil {
		return nil, errors.New("openapi.json has no Problem schema")
	}
	return &specChecker{router: router, problem: problem}, nil
}

// anyJSON lists every JSON type: the types an empty schema admits.
var anyJSON = openapi3.Types{"null", "boolean", "object", "array", "number", "string"}

// admitNullInEmpty gives an empty schema ({} with at most annotations)
// every JSON type by name. An empty schema admits any value, null
// included, but kin-openapi's validator admits null only where a schema's
// type lists it, so the document's "any JSON, null when none" fields
// (a job's result and partial_result) would fail on null.
func admitNullInEmpty(_ string, sr *openapi3.SchemaRef) error {
	if s := sr.Value; s != nil && s.IsEmpty() {
		types := slices.Clone(anyJSON)
		s.Type = &types
	}
	return nil
}

// checkedResponse is what the validator sees of one answer.
type checkedResponse struct {
	status int
	header http.Header
	body   []byte
}

// check validates resp, the answer to req. It returns the operation the
// request routes to ("" for none) and why the answer does not match the
// document, or nil.
func (c *specChecker) check(req *http.Request, resp checkedResponse) (string, error) {
	routed := req
	if req.Method == http.MethodHead {
		// A GET route answers HEAD: its status is the GET's, with no body.
		routed = req.Clone(req.Context())
		routed.Method = http.MethodGet
	}
	route, params, err := c.router.FindRoute(routed)
	if err != nil {
		return "", c.checkUnrouted(req, resp, err)
	}
	op := route.Operation.OperationID
	declared := route.Operation.Responses.Status(resp.status)
	if declared == nil {
		declared = route.Operation.Responses.Default()
	}
	if declared == nil || declared.Value == nil {
		return op, errors.New("status not declared for the operation")
	}
	if req.Method == http.MethodHead {
		return op, nil
	}
	ct := resp.header.Get("Content-Type")
	if len(declared.Value.Content) == 0 {
		if len(resp.body) != 0 {
			return op, fmt.Errorf("a %d-byte %q body where the document declares none", len(resp.body), ct)
		}
		return op, nil
	}
	media := declared.Value.Content.Get(ct)
	if media == nil {
		return op, fmt.Errorf("content type %q not declared (declared: %v)", ct, slices.Sorted(maps.Keys(declared.Value.Content)))
	}
	base, _, _ := mime.ParseMediaType(ct)
	if base == "text/event-stream" {
		return op, nil
	}
	opts := &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true}
	opts.WithCustomSchemaErrorFunc(schemaReason)
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{
			Request: req, PathParams: params, Route: route,
		},
		Status:  resp.status,
		Header:  resp.header,
		Body:    io.NopCloser(bytes.NewReader(resp.body)),
		Options: opts,
	}
	return op, openapi3filter.ValidateResponse(context.Background(), in)
}

// schemaReason words a schema error as where in the body and why, without
// the schema and the value that kin-openapi prints by default.
func schemaReason(err *openapi3.SchemaError) string {
	if strings.HasPrefix(err.Reason, "at ") {
		return err.Reason // the JSON Schema 2020-12 validator names the place
	}
	return fmt.Sprintf("at /%s: %s", strings.Join(err.JSONPointer(), "/"), err.Reason)
}

// checkUnrouted validates an answer to a request the document has no
// operation for: a redirect to the path's clean form, or a problem 404 or
// 405.
func (c *specChecker) checkUnrouted(req *http.Request, resp checkedResponse, routeErr error) error {
	switch resp.status {
	case http.StatusMovedPermanently, http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
		return nil
	case http.StatusNotFound, http.StatusMethodNotAllowed:
	default:
		return fmt.Errorf("%s %s: %w, answered %d", req.Method, req.URL.Path, routeErr, resp.status)
	}
	if req.Method == http.MethodHead {
		return nil
	}
	if ct, _, _ := mime.ParseMediaType(resp.header.Get("Content-Type")); ct != "application/problem+json" {
		return fmt.Errorf("%s %s: content type %q, want application/problem+json", req.Method, req.URL.Path, ct)
	}
	var v any
	if err := json.Unmarshal(resp.body, &v); err != nil {
		return fmt.Errorf("%s %s: problem body: %w", req.Method, req.URL.Path, err)
	}
	opts := []openapi3.SchemaValidationOption{openapi3.VisitAsResponse(), openapi3.MultiErrors(),
		openapi3.EnableJSONSchema2020(), openapi3.SetSchemaErrorMessageCustomizer(schemaReason)}
	if err := c.problem.Value.VisitJSON(v, opts...); err != nil {
		return fmt.Errorf("%s %s: problem body: %w", req.Method, req.URL.Path, err)
	}
	return nil
}

// ValidateResponses wraps h so that every answer is checked against
// openapi.json; a mismatch fails tb with the operation, the status and
// the validation error. Streams pass through unbuffered. Exported for the
// httpapi_test package.
func ValidateResponses(tb testing.TB, h http.Handler) http.Handler {
	tb.Helper()
	c, err := spec()
	if err != nil {
		tb.Fatal(err)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req := r.Clone(r.Context())
		tw := &teeWriter{ResponseWriter: w}
		h.ServeHTTP(tw, r)
		resp := tw.response()
		op, err := c.check(req, resp)
		recordCoverage(op, resp.status)
		if err != nil {
			if op == "" {
				op = "(no operation)"
			}
			tb.Errorf("openapi: %s %s %s: status %d: %v\nbody: %.2000s", op, req.Method, req.URL.RequestURI(), resp.status, err, resp.body)
		}
	})
}

// teeWriter passes an answer through and keeps a copy of its status, its
// header as sent and, unless it is a stream, its body. It unwraps for
// http.ResponseController.
type teeWriter struct {
	http.ResponseWriter
	code   int
	header http.Header
	stream bool
	body   bytes.Buffer
}

func (w *teeWriter) WriteHeader(code int) {
	if w.code == 0 && code >= 200 {
		w.code = code
		w.header = w.ResponseWriter.Header().Clone()
		ct, _, _ := mime.ParseMediaType(w.header.Get("Content-Type"))
		w.stream = ct == "text/event-stream"
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *teeWriter) Write(b []byte) (int, error) {
	if w.code == 0 {
		w.WriteHeader(http.StatusOK)
	}
	n, err := w.ResponseWriter.Write(b)
	if !w.stream {
		w.body.Write(b[:n])
	}
	return n, err
}

func (w *teeWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w *teeWriter) response() checkedResponse {
	if w.code == 0 {
		// A handler that wrote nothing answers 200 with an empty body.
		return checkedResponse{status: http.StatusOK, header: w.ResponseWriter.Header().Clone()}
	}
	return checkedResponse{status: w.code, header: w.header, body: w.body.Bytes()}
}

// coverage appends to DOCKET_OPENAPI_COVERAGE, when set.
var coverage struct {
	sync.Mutex
	f    *os.File
	once sync.Once
}

func recordCoverage(op string, status int) {
	name := os.Getenv("DOCKET_OPENAPI_COVERAGE")
	if name == "" {
		return
	}
	coverage.Lock()
	defer coverage.Unlock()
	coverage.once.Do(func() {
		coverage.f, _ = os.OpenFile(name, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	})
	if coverage.f == nil {
		return
	}
	if op == "" {
		op = "-"
	}
	_, _ = coverage.f.WriteString(op + " " + strconv.Itoa(status) + "\n")
}

// errorRecorder is a testing.TB that keeps the errors reported to it.
type errorRecorder struct {
	testing.TB
	mu   sync.Mutex
	errs []string
}

func (r *errorRecorder) Helper() {}

func (r *errorRecorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

// TestValidateResponses_ReportsMismatches sends answers that break the
// document through the validator and checks that each is reported with
// its operation, its status and the reason, while the same answers made
// right pass.
func TestValidateResponses_ReportsMismatches(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	job := jobView(&queue.Job{ID: 7, TenantID: "acme", Kind: "process_document", State: queue.StateCompleted,
		Attempt: 1, MaxAttempts: 3, CreatedAt: now, UpdatedAt: now, StartedAt: now, CompletedAt: now}, -1)
	full, err := json.Marshal(job)
	if err != nil {
		t.Fatal(err)
	}
	var fields map[string]any
	if err := json.Unmarshal(full, &fields); err != nil {
		t.Fatal(err)
	}
	delete(fields, "status")
	noStatus, err := json.Marshal(fields)
	if err != nil {
		t.Fatal(err)
	}
	problem := []byte(`{"type":"about:blank","title":"Not Found","status":404,"detail":"no such object"}`)
	cases := []struct {
		name, method, path string
		status             int
		ct                 string
		body               []byte
		want               []string // in the report; none: no report
	}{
		{"job as documented", "GET", "/v1/jobs/7", 200, "application/json", full, nil},
		{"required field missing", "GET", "/v1/jobs/7", 200, "application/json", noStatus,
			[]string{"getJob", "status 200", `"status" is missing`}},
		{"wrong type", "GET", "/v1/jobs/7", 200, "application/json",
			bytes.Replace(full, []byte(`"attempt":1`), []byte(`"attempt":"1"`), 1), []string{"getJob", "attempt"}},
		{"status not declared", "GET", "/v1/jobs/7", http.StatusTeapot, "application/problem+json", problem,
			[]string{"getJob", "status 418", "status not declared"}},
		{"error as plain JSON", "GET", "/v1/jobs/7", 404, "application/json", problem,
			[]string{"getJob", "status 404", `content type "application/json" not declared`}},
		{"problem as documented", "GET", "/v1/jobs/7", 404, "application/problem+json", problem, nil},
		{"stream as JSON", "GET", "/v1/events", 200, "application/json", []byte(`{}`),
			[]string{"events", "status 200", `content type "application/json" not declared`}},
		{"unrouted as plain text", "GET", "/v1/nowhere", 404, "text/plain; charset=utf-8", []byte("404 page not found\n"),
			[]string{"(no operation)", "status 404", "application/problem+json"}},
		{"unrouted as a problem", "GET", "/v1/nowhere", 404, "application/problem+json", problem, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rec := &errorRecorder{TB: t}
			h := ValidateResponses(rec, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", tc.ct)
				w.WriteHeader(tc.status)
				_, _ = w.Write(tc.body)
			}))
			w := httptest.NewRecorder()
			h.ServeHTTP(w, httptest.NewRequest(tc.method, tc.path, nil))
			if !bytes.Equal(w.Body.Bytes(), tc.body) || w.Code != tc.status {
				t.Errorf("passed on %d %q, want %d %q", w.Code, w.Body.Bytes(), tc.status, tc.body)
			}
			for _, e := range rec.errs {
				t.Logf("reported: %.300s", e)
			}
			switch {
			case len(tc.want) == 0 && len(rec.errs) != 0:
				t.Errorf("reported a conforming answer: %q", rec.errs)
			case len(tc.want) != 0 && len(rec.errs) != 1:
				t.Fatalf("%d reports, want 1: %q", len(rec.errs), rec.errs)
			}
			for _, want := range tc.want {
				if !strings.Contains(rec.errs[0], want) {
					t.Errorf("report %q does not say %q", rec.errs[0], want)
				}
			}
		})
	}
}
