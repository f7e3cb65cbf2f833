package pipeline_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/docketq/docket/pipeline"
	"github.com/docketq/docket/queue"
)

// FuzzDecodeJobArgs is the job-arguments fuzz target: any
// bytes offered as a document job's JSON arguments are refused at enqueue
// (queue.ErrInvalid) exactly when they are not JSON, exceed
// queue.MaxArgsBytes or hold what PostgreSQL's jsonb refuses (bytes not
// UTF-8, \u0000, half a surrogate pair: storableJSON); the ones stored
// come back unchanged in meaning, and
// a real worker running the Processor ends each such job (none names a
// document) as failed after its one attempt, with an error and without a
// panic, while it goes on working. Seeds: testdata/fuzz/FuzzDecodeJobArgs.
func FuzzDecodeJobArgs(f *testing.F) {
	f.Add([]byte(`{"document_id":"d1"}`))
	// Just over the cap (a seed file of 1 MiB would weigh on the repository).
	f.Add([]byte(`"` + strings.Repeat("a", queue.MaxArgsBytes-1) + `"`))
	e := setup(f, "sqlite", pipeline.Config{})
	f.Fuzz(func(t *testing.T, data []byte) {
		res, err := e.client.Enqueue(e.ctx, &queue.EnqueueParams{
			Queue: pipeline.Queue, Kind: pipeline.Kind, TenantID: tenantA,
			MaxAttempts: 1, Args: json.RawMessage(data),
		})
		valid := json.Valid(data) && len(data) <= queue.MaxArgsBytes && storableJSON(data)
		switch {
		case err != nil && valid:
			t.Fatalf("valid %d-byte args refused: %v", len(data), err)
		case err != nil && !errors.Is(err, queue.ErrInvalid):
			t.Fatalf("invalid args refused without ErrInvalid: %v", err)
		case err != nil:
			return
		case !valid:
			t.Fatalf("invalid or oversized args (%d bytes) accepted as job %d", len(data), res.Job.ID)
		}
		job := waitFinished(t, e, res.Job.ID)
		if !sameJSON(job.Args, data) {
			t.Fatalf("stored args %q, enqueued %q", job.Args, data)
		}
		if job.State != queue.StateFailed || job.Attempt != 1 || job.ErrorMessage == "" ||
			strings.Contains(strings.ToLower(job.ErrorMessage), "panic") {
			t.Fatalf("job %d with args %q ended %s at attempt %d with error %q; want failed once, without a panic",
				job.ID, data, job.State, job.Attempt, job.ErrorMessage)
		}
	})
}

var (
	jsonString = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)
	jsonEscape = regexp.MustCompile(`\\(?:u([0-9a-fA-F]{4})|.)`)
)

// storableJSON is the enqueue's rule for args as PostgreSQL's jsonb sets
// it, written apart from the client's code: UTF-8, and in every string
// the \u escapes spell UTF-16 without a NUL (a surrogate only as the
// first half of a pair whose second half follows at once). data is
// valid JSON.
func storableJSON(data []byte) bool {
	if !utf8.Valid(data) {
		return false
	}
	for _, str := range jsonString.FindAll(data, -1) {
		var units []rune // a run of adjacent \u escapes
		end := -1
		valid := func() bool {
			for k := 0; k < len(units); k++ {
				switch u := units[k]; {
				case u == 0:
					return false
				case utf16.IsSurrogate(u):
					if k+1 == len(units) || utf16.DecodeRune(u, units[k+1]) == utf8.RuneError {
						return false
					}
					k++
				}
			}
			return true
		}
		for _, m := range jsonEscape.FindAllSubmatchIndex(str, -1) {
			if m[0] != end && !valid() {
				return false
			}
			if m[0] != end {
				units = units[:0]
			}
			end = m[1]
			if m[2] < 0 {
				end = -1 // another escape ends the run
				continue
			}
			v, _ := strconv.ParseUint(string(str[m[2]:m[3]]), 16, 16)
			units = append(units, rune(v))
		}
		if !valid() {
			return false
		}
	}
	return true
}

// waitFinished polls job id until it is finished, within waitLimit.
func waitFinished(t *testing.T, e *env, id int64) *queue.Job {
	t.Helper()
	deadline := time.Now().Add(waitLimit)
	for {
		job, err := e.client.Get(e.ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if job.State.Finished() {
			return job
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %d still %s after %s: the worker stopped working", id, job.State, waitLimit)
		}
		time.Sleep(5 * time.Millisecond) // polling a black box with a deadline
	}
}

// sameJSON reports whether a and b decode to the same value (numbers
// compared as written).
func sameJSON(a, b []byte) bool {
	x, errX := decodeNumbers(a)
	y, errY := decodeNumbers(b)
	if errX != nil || errY != nil {
		return false
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return bytes.Equal(xa, ya)
}

func decodeNumbers(b []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	err := d.Decode(&v)
	return v, err
}

// TestFuzzDecodeJobArgsSeeds checks that the seed corpus is there: the
// fuzz target runs it in every plain `go test`.
func TestFuzzDecodeJobArgsSeeds(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob(filepath.Join("testdata", "fuzz", "FuzzDecodeJobArgs", "*"))
	if err != nil || len(files) < 5 {
		t.Fatalf("%d seed files (%v), want at least 5", len(files), err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil || !strings.HasPrefix(string(b), "go test fuzz v1\n") {
			t.Errorf("%s: not a corpus file (%v)", f, err)
		}
	}
}
