package extract_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/docketq/docket/pipeline/extract"
	xt "github.com/docketq/docket/pipeline/extract/extracttest"
)

func TestBudget_Acquire(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := extract.NewBudget(extract.BudgetConfig{Bytes: 100, Wait: time.Minute})
	releaseA, err := b.Acquire(ctx, 60)
	if err != nil {
		t.Fatal(err)
	}
	// 60 + 60 > 100: the second waits until the first is released, then is admitted.
	admitted := make(chan func(), 1)
	go func() {
		release, err := b.Acquire(ctx, 60)
		if err != nil {
			t.Error(err)
		}
		admitted <- release
	}()
	waitFor(t, func() bool { return b.Waiting() == 1 })
	select {
	case <-admitted:
		t.Fatal("admitted while the budget was taken")
	default:
	}
	releaseA()
	releaseB := <-admitted
	if got := b.InUse(); got != 60 {
		t.Errorf("in use %d, want 60", got)
	}
	releaseB()
	// More than the whole budget runs alone.
	releaseC, err := b.Acquire(ctx, 1000)
	if err != nil || b.InUse() != 100 {
		t.Fatalf("oversized parse: %v, in use %d", err, b.InUse())
	}
	releaseC()
	if b.InUse() != 0 {
		t.Errorf("in use %d after all released", b.InUse())
	}
}

func TestBudget_GivesUp(t *testing.T) {
	t.Parallel()
	b := extract.NewBudget(extract.BudgetConfig{Bytes: 100, Wait: 50 * time.Millisecond})
	release, err := b.Acquire(context.Background(), 100)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	if _, err := b.Acquire(context.Background(), 1); !errors.Is(err, extract.ErrBusy) || extract.Permanent(err) {
		t.Errorf("budget taken past the wait: %v, want a retryable ErrBusy", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := b.Acquire(ctx, 1); !errors.Is(err, context.Canceled) {
		t.Errorf("canceled while waiting: %v", err)
	}
	if got := b.InUse(); got != 100 {
		t.Errorf("in use %d, want 100: a parse that gave up holds nothing", got)
	}
}

// A parse is admitted against the budget of Options.Budget: while the budget is taken, Extract
// waits, and past the budget's wait it returns ErrBusy (retryable), having parsed nothing.
func TestExtract_WaitsForBudget(t *testing.T) {
	t.Parallel()
	data := xt.ProsePDF(1).Bytes()
	b := extract.NewBudget(extract.BudgetConfig{Bytes: extract.Cost(extract.TypePDF, int64(len(data)), extract.Options{PDF: engine}), Wait: 100 * time.Millisecond})
	release, err := b.Acquire(context.Background(), 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := extractBytes(t, extract.TypePDF, data, extract.Options{Budget: b}); !errors.Is(err, extract.ErrBusy) || extract.Permanent(err) {
		t.Fatalf("budget taken: %v, want a retryable ErrBusy", err)
	}
	release()
	doc, err := extractBytes(t, extract.TypePDF, data, extract.Options{Budget: b})
	if err != nil || len(doc.Pages) != 1 {
		t.Fatalf("budget free: %v", err)
	}
	if b.InUse() != 0 {
		t.Errorf("in use %d after the parse", b.InUse())
	}
}

// waitFor polls cond until it holds, failing t after 10 s.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 10s")
		}
		time.Sleep(5 * time.Millisecond)
	}
}
