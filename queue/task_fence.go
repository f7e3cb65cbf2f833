package queue

import (
	"context"
	"fmt"

	"github.com/docketq/docket/queue/driver"
)

// FenceTx makes the caller's transaction (pgx.Tx for PostgreSQL, *sql.Tx
// for SQLite) apply only while the task holds its lease: it writes the
// task's current progress in the transaction, which locks the job's row
// until the transaction ends, so no rescue, cancel or other attempt can
// take the job before it commits. A handler that saves its work in several
// transactions before CompleteTx fences each one. Call it last, after the
// transaction's writes: from then until the commit the row is locked, and
// the task's own heartbeats wait for it. When the lease is gone, FenceTx
// rolls the transaction back and returns ErrLeaseLost; return it.
func (t *Task) FenceTx(ctx context.Context, tx any) error {
	exec, err := t.w.client.driver.UnwrapTx(tx)
	if err != nil {
		return err
	}
	t.mu.Lock()
	if t.lost {
		t.mu.Unlock()
		return t.fenced(ctx, tx, ErrLeaseLost)
	}
	p := &driver.JobProgressParams{Lease: t.lease, Stage: t.stage, Percent: t.percent, Message: t.message,
		TxIdleLimit: t.w.cfg.LeaseDuration}
	t.mu.Unlock()
	if err := exec.JobProgress(ctx, p); err != nil {
		return t.fenced(ctx, tx, fmt.Errorf("fence: %w", err))
	}
	return nil
}
