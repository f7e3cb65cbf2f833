package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/docketq/docket/queue"
)

// Job kinds this worker handles.
const (
	kindLedger = "ledger"
	kindExit   = "exit"
	kindSleep  = "sleep"
)

// exitPoison is the exit status of a process that ran an exit job.
const exitPoison = 3

// handlers runs the chaos job kinds against the ledger tables.
type handlers struct {
	pool   *pgxpool.Pool
	pid    int
	cfg    *config
	logger *slog.Logger
}

// jobArgs are the optional arguments of every kind.
type jobArgs struct {
	SleepMS *int `json:"sleep_ms"`
}

func (h *handlers) configs() map[string]queue.HandlerConfig {
	return map[string]queue.HandlerConfig{
		kindLedger: {Handler: queue.HandlerFunc(h.ledger)},
		kindExit:   {Handler: queue.HandlerFunc(h.exit)},
		kindSleep:  {Handler: queue.HandlerFunc(h.sleep)},
		kindSink:   {Handler: queue.HandlerFunc(h.sink)},
	}
}

// record writes the execution ledger row in its own autocommit statement,
// before the handler does anything else. started_at is the server's clock
// when the row arrives; entered_at the time the handler began, which on a
// loaded machine can be tens of milliseconds earlier.
func (h *handlers) record(ctx context.Context, t *queue.Task) error {
	entered := time.Now()
	_, err := h.pool.Exec(ctx,
		`INSERT INTO executions (job_id, attempt, worker_pid, worker_id, kind, entered_at) VALUES ($1, $2, $3, $4, $5, $6)`,
		t.Job.ID, t.Job.Attempt, h.pid, h.cfg.id, t.Job.Kind, entered)
	if err != nil {
		return fmt.Errorf("record execution: %w", err)
	}
	return nil
}

// ledger records the execution, sleeps, then stores its effect and
// completes the job in one transaction.
func (h *handlers) ledger(ctx context.Context, t *queue.Task) error {
	if err := h.record(ctx, t); err != nil {
		return err
	}
	d := h.cfg.ledgerMin
	if span := h.cfg.ledgerMax - h.cfg.ledgerMin; span > 0 {
		d += rand.N(span + 1)
	}
	if err := sleep(ctx, argSleep(t, d)); err != nil {
		return err
	}
	return h.complete(ctx, t)
}

// complete stores the job's effect and completes it in one transaction.
func (h *handlers) complete(ctx context.Context, t *queue.Task) error {
	tx, err := h.pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	if _, err := tx.Exec(ctx, `INSERT INTO effects (job_id, attempt, worker_pid) VALUES ($1, $2, $3)`,
		t.Job.ID, t.Job.Attempt, h.pid); err != nil {
		return fmt.Errorf("insert effect: %w", err)
	}
	if err := t.CompleteTx(ctx, tx); err != nil {
		return err
	}
	if h.cfg.completeHold > 0 { // the job's row stays locked meanwhile
		if err := sleep(ctx, h.cfg.completeHold); err != nil {
			return err
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// exit records the execution and kills the process: a poison pill.
func (h *handlers) exit(ctx context.Context, t *queue.Task) error {
	if err := h.record(ctx, t); err != nil {
		return err
	}
	h.logger.Warn("poison pill: exiting", "job_id", t.Job.ID, "attempt", t.Job.Attempt)
	os.Exit(exitPoison)
	return nil
}

// sleep records the execution and sleeps, honouring ctx.
func (h *handlers) sleep(ctx context.Context, t *queue.Task) error {
	if err := h.record(ctx, t); err != nil {
		return err
	}
	return sleep(ctx, argSleep(t, h.cfg.sleep))
}

// argSleep returns args.sleep_ms when the job has it, else def.
func argSleep(t *queue.Task, def time.Duration) time.Duration {
	var a jobArgs
	if err := json.Unmarshal(t.Job.Args, &a); err == nil && a.SleepMS != nil {
		return time.Duration(*a.SleepMS) * time.Millisecond
	}
	return def
}

// sleep waits for d or until ctx ends, returning ctx's error then.
func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-timer.C:
		return nil
	}
}

// maintained records a maintenance sweep in maintenance_runs when
// -audit-maintenance is set (queue.Hooks.Maintained).
func (h *handlers) maintained(task string, n int) {
	if !h.cfg.audit {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if _, err := h.pool.Exec(ctx, `INSERT INTO maintenance_runs (worker_pid, task, jobs) VALUES ($1, $2, $3)`,
		h.pid, task, n); err != nil {
		h.logger.Warn("audit of a maintenance sweep failed", "task", task, "error", err)
	}
}
