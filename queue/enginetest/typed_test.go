package queue_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/docketq/docket/queue"
)

type resizeArgs struct {
	Image string `json:"image"`
	Width int    `json:"width"`
}

var resizeKind = queue.Kind[resizeArgs]{Name: "resize"}

// TestJSONHandler_Decode calls the handler with jobs as they are stored
// (no store needed: JSONHandler reads only Task.Job).
func TestJSONHandler_Decode(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		args      string
		want      resizeArgs
		wantErr   string // empty: fn is called with want
		permanent bool
	}{
		{name: "fields", args: `{"image":"a.png","width":640}`, want: resizeArgs{Image: "a.png", Width: 640}},
		{name: "unknown field ignored", args: `{"image":"a.png","width":640,"added_later":true}`, want: resizeArgs{Image: "a.png", Width: 640}},
		{name: "missing field is zero", args: `{"image":"a.png"}`, want: resizeArgs{Image: "a.png"}},
		{name: "empty args", args: ``, want: resizeArgs{}},
		{name: "wrong type", args: `{"image":"a.png","width":"wide"}`,
			wantErr: `decode args of kind "resize" into queue_test.resizeArgs: json: cannot unmarshal string into Go struct field resizeArgs.width of type int`, permanent: true},
		{name: "not an object", args: `[1,2]`, wantErr: `decode args of kind "resize" into queue_test.resizeArgs`, permanent: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var got *resizeArgs
			h := queue.JSONHandler(func(_ context.Context, _ *queue.Task, args resizeArgs) error {
				got = &args
				return nil
			})
			task := &queue.Task{Job: &queue.Job{ID: 7, Kind: "resize", Args: json.RawMessage(tc.args)}}
			err := h.Work(context.Background(), task)
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("Work: %v", err)
				}
				if got == nil || *got != tc.want {
					t.Fatalf("fn got %+v, want %+v", got, tc.want)
				}
				return
			}
			if got != nil {
				t.Fatalf("fn was called with %+v; want no call", *got)
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("Work error %v, want one containing %q", err, tc.wantErr)
			}
			var perm *queue.PermanentError
			if errors.As(err, &perm) != tc.permanent {
				t.Fatalf("Work error %v: permanent %v, want %v", err, !tc.permanent, tc.permanent)
			}
		})
	}
}

func TestJSONHandler_PassesHandlerError(t *testing.T) {
	t.Parallel()
	boom := errors.New("boom")
	h := queue.JSONHandler(func(context.Context, *queue.Task, *resizeArgs) error { return boom })
	err := h.Work(context.Background(), &queue.Task{Job: &queue.Job{Kind: "resize", Args: json.RawMessage(`{}`)}})
	var perm *queue.PermanentError
	if !errors.Is(err, boom) || errors.As(err, &perm) {
		t.Fatalf("Work error %v, want boom as returned (not permanent)", err)
	}
}

func TestKind_ParamsAndArgs(t *testing.T) {
	t.Parallel()
	p := resizeKind.Params("acme", resizeArgs{Image: "a.png", Width: 10})
	if p.Kind != "resize" || p.TenantID != "acme" || p.Args != (resizeArgs{Image: "a.png", Width: 10}) || p.Queue != "" || p.Priority != 0 {
		t.Fatalf("Params = %+v", p)
	}
	args, err := resizeKind.Args(&queue.Job{ID: 1, Kind: "resize", Args: json.RawMessage(`{"image":"b.png","width":3}`)})
	if err != nil || args != (resizeArgs{Image: "b.png", Width: 3}) {
		t.Fatalf("Args = %+v, %v", args, err)
	}
	if _, err := resizeKind.Args(&queue.Job{ID: 2, Kind: "crop", Args: json.RawMessage(`{}`)}); !errors.Is(err, queue.ErrInvalid) {
		t.Fatalf("Args of another kind: %v, want ErrInvalid", err)
	}
	if _, err := resizeKind.Args(&queue.Job{ID: 3, Kind: "resize", Args: json.RawMessage(`{"width":"x"}`)}); err == nil {
		t.Fatal("Args of undecodable args: no error")
	}
}

// TestKind_EnqueueAndHandle runs typed jobs through the store: enqueued
// with Kind.Enqueue and Kind.EnqueueTx, worked by Kind.Handler; a job whose
// stored args do not decode fails on its first attempt, without calling
// the handler.
func TestKind_EnqueueAndHandle(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store) {
		ctx := context.Background()
		c := queue.NewClient(s.driver, queue.ClientConfig{})
		var (
			mu  sync.Mutex
			got []resizeArgs
		)
		h := resizeKind.Handler(func(_ context.Context, task *queue.Task, args resizeArgs) error {
			mu.Lock()
			defer mu.Unlock()
			got = append(got, args)
			return nil
		})
		w, err := queue.NewWorker(c, fastConfig(map[string]queue.HandlerConfig{resizeKind.Name: {Handler: h}}, 1))
		if err != nil {
			t.Fatal(err)
		}

		res, err := resizeKind.Enqueue(ctx, c, "acme", resizeArgs{Image: "a.png", Width: 640})
		if err != nil {
			t.Fatal(err)
		}
		tx, commit, _, err := s.begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		resTx, err := resizeKind.EnqueueTx(ctx, c, tx, "acme", resizeArgs{Image: "b.png", Width: 320})
		if err != nil {
			t.Fatal(err)
		}
		if err := commit(); err != nil {
			t.Fatal(err)
		}
		bad := enqueue(t, c, &queue.EnqueueParams{Kind: "resize", TenantID: "acme", Args: json.RawMessage(`{"width":"wide"}`)})

		for _, id := range []int64{res.Job.ID, resTx.Job.ID, bad.ID} {
			job, err := w.RunOne(ctx, queue.DefaultQueue)
			if err != nil || job == nil || job.ID != id {
				t.Fatalf("RunOne = %+v, %v; want job %d", job, err, id)
			}
		}
		want := []resizeArgs{{Image: "a.png", Width: 640}, {Image: "b.png", Width: 320}}
		if len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
			t.Fatalf("handler got %+v, want %+v", got, want)
		}
		failed, err := c.Get(ctx, bad.ID)
		if err != nil {
			t.Fatal(err)
		}
		if failed.State != queue.StateFailed || failed.Attempt != 1 ||
			!strings.Contains(failed.ErrorMessage, `decode args of kind "resize" into queue_test.resizeArgs`) {
			t.Fatalf("undecodable job: state %s, attempt %d, error %q; want failed on attempt 1 with the decode error",
				failed.State, failed.Attempt, failed.ErrorMessage)
		}
	})
}
