package queue

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/docketq/docket/queue/driver"
)

// progressInterval is the least time between two progress writes of one
// job; writes in between are coalesced into the last.
const progressInterval = 250 * time.Millisecond

// Task is a handler's view of the job it runs: the job as claimed and the
// lease of this attempt. A Task may be used from several goroutines.
type Task struct {
	// Job is the job as claimed. The engine never modifies it, so any
	// goroutine may read it; handlers must not modify it either. Progress
	// reports are kept apart and appear in events.
	Job *Job

	w     *Worker
	lease Lease

	mu            sync.Mutex
	stage         string // the last progress reported
	percent       int
	message       string
	lost          bool
	completedInTx bool
	result        json.RawMessage // stored on completion (SetResult)
	awaitEnd      bool            // another holder of the lease may end it (AwaitEnd)
	lossHeld      bool            // a loss came after AwaitEnd: its report waits for the handler's return
	endedBy       Outcome         // how another holder ended it (EndedBy)
	endedMessage  string
	lastWrite     time.Time
	seq           uint64                    // numbers progress reports, in call order
	pending       *driver.JobProgressParams // coalesced progress not yet written
	pendingSeq    uint64
	timer         *time.Timer
	partial       json.RawMessage // the last partial result reported, else as claimed
	partialSeq    uint64          // the report that set partial; 0: as claimed
	partialStored uint64          // the newest partialSeq a write stored

	// wmu orders progress writes: a write older than one already stored
	// (a coalesced flush overtaken by a stage change) is dropped.
	wmu     sync.Mutex
	written uint64
	// flushes counts coalesced writes under way (flushProgress).
	flushes sync.WaitGroup
}

// Lease returns the lease of this attempt.
func (t *Task) Lease() Lease { return t.lease }

// Progress records the job's stage, percent (0-100) and a message. Writes
// are coalesced to a few per second; a new stage is written at once. It
// returns ErrLeaseLost once the lease is known lost.
func (t *Task) Progress(ctx context.Context, stage string, percent int, message string) error {
	return t.report(ctx, stage, percent, message, nil)
}

// ProgressPartial is Progress with a partial result: what the handler has
// found so far (a JSON document of at most MaxPartialResultBytes, else an
// error wrapping ErrInvalid and nothing is written), stored as the job's
// PartialResult and carried in its events, so that readers see it before
// the job ends. Each one replaces the last: report everything found so
// far, when it changes, not with every tick. A report with a partial
// result is written at once, like a new stage. The partial result is never
// lost to coalescing or to a failed write: the next write carries it, and
// the attempt's end (CompleteTx included) writes it if none has. It is
// kept when the job ends. Nil partial is Progress.
func (t *Task) ProgressPartial(ctx context.Context, stage string, percent int, message string, partial json.RawMessage) error {
	if partial == nil {
		return t.report(ctx, stage, percent, message, nil)
	}
	if err := driver.ValidatePartialResult(partial); err != nil {
		return err
	}
	return t.report(ctx, stage, percent, message, bytes.Clone(partial))
}

// report records one progress report and writes it, or coalesces it.
func (t *Task) report(ctx context.Context, stage string, percent int, message string, partial json.RawMessage) error {
	percent = min(max(percent, 0), 100)
	p := &driver.JobProgressParams{Lease: t.lease, Stage: stage, Percent: percent, Message: message}
	t.mu.Lock()
	if t.lost {
		t.mu.Unlock()
		return ErrLeaseLost
	}
	stageChanged := stage != t.stage
	t.stage, t.percent, t.message = stage, percent, message
	t.seq++
	seq := t.seq
	if partial != nil {
		t.partial, t.partialSeq = partial, seq
	}
	if partial == nil && !stageChanged && time.Since(t.lastWrite) < progressInterval {
		t.pending, t.pendingSeq = p, seq
		if t.timer == nil {
			t.timer = time.AfterFunc(progressInterval-time.Since(t.lastWrite), t.flushProgress)
		}
		t.mu.Unlock()
		return nil
	}
	t.pending = nil
	t.lastWrite = time.Now()
	t.mu.Unlock()
	return t.writeProgressSeq(ctx, p, seq)
}

func (t *Task) flushProgress() {
	t.mu.Lock()
	p, seq := t.pending, t.pendingSeq
	t.pending, t.timer = nil, nil
	if p == nil || t.lost || t.completedInTx {
		t.mu.Unlock()
		return
	}
	t.lastWrite = time.Now()
	t.flushes.Add(1) // under mu: finalProgress, after stopProgress, waits for it
	t.mu.Unlock()
	defer t.flushes.Done()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := t.writeProgressSeq(ctx, p, seq); err != nil && !t.completedInTxDone() {
		t.w.logger.Warn("progress write failed", "job_id", t.lease.JobID, "error", err)
	}
}

// writeProgress writes the latest report (a final flush).
func (t *Task) writeProgress(ctx context.Context, p *driver.JobProgressParams) error {
	t.mu.Lock()
	seq := t.seq
	t.mu.Unlock()
	return t.writeProgressSeq(ctx, p, seq)
}

// writeProgressSeq writes report number seq unless a later one is stored.
func (t *Task) writeProgressSeq(ctx context.Context, p *driver.JobProgressParams, seq uint64) error {
	t.wmu.Lock()
	defer t.wmu.Unlock()
	if seq <= t.written {
		return nil // a later report is stored, with any partial result of this one
	}
	p, partialSeq := t.withPartial(p)
	err := t.w.exec.JobProgress(ctx, p)
	if err == nil {
		t.written = seq
		t.mu.Lock()
		t.partialStored = max(t.partialStored, partialSeq)
		t.mu.Unlock()
	}
	switch {
	case err == nil:
		t.w.publishTask(EventProgress, t)
		return nil
	case isLeaseLost(err):
		t.markLost()
		return ErrLeaseLost
	default:
		return fmt.Errorf("progress: %w", err)
	}
}

// withPartial returns p carrying the last partial result reported when no
// write has stored it yet, and the number of the report that set it (0
// when p carries none).
func (t *Task) withPartial(p *driver.JobProgressParams) (*driver.JobProgressParams, uint64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.partialSeq <= t.partialStored {
		return p, 0
	}
	with := *p
	with.PartialResult = t.partial
	return &with, t.partialSeq
}

// finalProgress stops the coalesced write and returns what the attempt's
// end must still write, if anything: the pending report, unless the job
// completes (completion sets its own progress), or else the current
// progress when the last partial result is not stored yet (the write
// carries it). inTx says the end is written in the handler's own
// transaction (CompleteTx).
func (t *Task) finalProgress(completing, inTx bool) *driver.JobProgressParams {
	pending := t.stopProgress()
	// A coalesced write the timer started before stopProgress has the
	// latest report: let it land before the attempt's end is written, which
	// would fence it out (its lease gone) and leave an older progress. Not
	// in the handler's transaction: the write may be waiting for that very
	// transaction (SQLite has one writer), which then stalled until the
	// write gave up, 5 s, with every other write of the store behind it.
	// The completion sets its own progress, and the write, fenced out once
	// the transaction commits, is dropped quietly (flushProgress).
	if !inTx {
		t.flushes.Wait()
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	switch {
	case pending != nil && !completing:
		return pending
	case t.partialSeq > t.partialStored:
		return &driver.JobProgressParams{Lease: t.lease, Stage: t.stage, Percent: t.percent, Message: t.message}
	}
	return nil
}

// stopProgress cancels a pending coalesced write and returns it, so the
// caller can write it before finishing the job.
func (t *Task) stopProgress() *driver.JobProgressParams {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.timer != nil {
		t.timer.Stop()
		t.timer = nil
	}
	p := t.pending
	t.pending = nil
	return p
}

// CompleteTx completes the job inside the caller's transaction (pgx.Tx for
// PostgreSQL, *sql.Tx for SQLite), so the handler's own writes and the
// completion commit together or not at all. After CompleteTx the handler
// must commit and return nil; if the commit fails, return the error and the
// job is retried. Commit promptly: on PostgreSQL a transaction left idle
// for a whole lease after CompleteTx is ended by the server (rolled back,
// its session closed), so that a worker cut off mid-transaction cannot keep
// the job's row locked past its lease.
//
// When the lease is gone (the job was rescued, cancelled or taken over by
// another worker), CompleteTx rolls the transaction back and returns
// ErrLeaseLost: the handler's writes in it are discarded and a Commit fails,
// so a handler that ignores the error cannot apply its effects twice. Return
// the error.
//
// On SQLite the transaction holds the store's only writer: until it ends,
// every other write waits, including this task's own Progress calls.
func (t *Task) CompleteTx(ctx context.Context, tx any) error {
	exec, err := t.w.client.driver.UnwrapTx(tx)
	if err != nil {
		return err
	}
	// Completion sets progress 100; a later flush would only fail. A
	// partial result not stored yet is written in the transaction.
	if final := t.finalProgress(true, true); final != nil {
		final, _ = t.withPartial(final)
		final.TxIdleLimit = t.w.cfg.LeaseDuration
		if err := exec.JobProgress(ctx, final); err != nil {
			return t.fenced(ctx, tx, fmt.Errorf("complete in transaction: %w", err))
		}
	}
	errs, err := exec.JobFinish(ctx, []*driver.JobFinishParams{{
		Lease: t.lease, Outcome: OutcomeCompleted, WorkerID: t.w.id,
		TxIdleLimit: t.w.cfg.LeaseDuration,
	}})
	if err != nil {
		return fmt.Errorf("complete in transaction: %w", err)
	}
	if errs[0] != nil {
		return t.fenced(ctx, tx, errs[0])
	}
	t.mu.Lock()
	t.completedInTx = true
	t.mu.Unlock()
	return nil
}

// fenced handles a write of CompleteTx that failed: a lost lease rolls the
// caller's transaction back (its writes must not apply) and is returned.
func (t *Task) fenced(ctx context.Context, tx any, err error) error {
	if !isLeaseLost(err) {
		return err
	}
	t.markLost()
	if rerr := rollbackNative(ctx, tx); rerr != nil {
		return errors.Join(err, fmt.Errorf("rolling back the fenced transaction: %w", rerr))
	}
	return err
}

// rollbackNative rolls back a driver's native transaction: pgx.Tx's
// Rollback takes a context, *sql.Tx's does not.
func rollbackNative(ctx context.Context, tx any) error {
	switch tx := tx.(type) {
	case interface{ Rollback(context.Context) error }:
		return tx.Rollback(context.WithoutCancel(ctx))
	case interface{ Rollback() error }:
		return tx.Rollback()
	}
	return fmt.Errorf("%w: %T has no Rollback method", ErrInvalid, tx)
}

func (t *Task) markLost() {
	t.mu.Lock()
	t.lost = true
	t.mu.Unlock()
}

// snapshot copies the job, with the progress last reported, for an event.
func (t *Task) snapshot() *Job {
	t.mu.Lock()
	defer t.mu.Unlock()
	j := *t.Job
	j.Stage, j.Progress, j.ProgressMessage = t.stage, t.percent, t.message
	j.PartialResult = t.partial
	return &j
}
