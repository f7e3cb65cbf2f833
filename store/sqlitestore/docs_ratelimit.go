package sqlitestore

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/docketq/docket"
)

const (
	rateExpireSQL = `DELETE FROM docket_rate_slots WHERE tenant_id = ? AND taken_at <= ?`
	rateCountSQL  = `SELECT count(*), min(taken_at) FROM docket_rate_slots WHERE tenant_id = ? AND taken_at > ?`
	rateTakeSQL   = `INSERT INTO docket_rate_slots (tenant_id, taken_at) VALUES (?, ?)`
)

// RateLimitTake takes a slot of the tenant's rolling window if one is
// free. It runs on the single writer (InTenant), so concurrent takes are
// serialised and never exceed the limit. It also deletes the tenant's
// slots that have left the window.
func (t *tenantTx) RateLimitTake(ctx context.Context, p *docket.RateLimitParams) (*docket.RateLimit, error) {
	if err := t.writable("take rate-limit slot"); err != nil {
		return nil, err
	}
	if err := validRate(p); err != nil {
		return nil, fmt.Errorf("take rate-limit slot: %w", err)
	}
	if err := t.notDeleted(ctx); err != nil {
		return nil, fmt.Errorf("take rate-limit slot: %w", err)
	}
	now := t.s.clock()
	start := now - p.Window.Microseconds()
	if _, err := t.tx.ExecContext(ctx, rateExpireSQL, t.tenant, start); err != nil {
		return nil, fmt.Errorf("take rate-limit slot: %w", docsError(err))
	}
	used, oldest, err := t.rateCount(ctx, start)
	if err != nil {
		return nil, fmt.Errorf("take rate-limit slot: %w", err)
	}
	rl := &docket.RateLimit{Limit: p.Limit}
	if used < p.Limit {
		if _, err := t.tx.ExecContext(ctx, rateTakeSQL, t.tenant, now); err != nil {
			return nil, fmt.Errorf("take rate-limit slot: %w", docsError(err))
		}
		rl.Allowed = true
		used++
		if !oldest.Valid {
			oldest = sql.NullInt64{Int64: now, Valid: true}
		}
	}
	rateFill(rl, p, used, oldest, now)
	return rl, nil
}

// RateLimitPeek reports the tenant's window without taking a slot.
func (t *tenantTx) RateLimitPeek(ctx context.Context, p *docket.RateLimitParams) (*docket.RateLimit, error) {
	if err := validRate(p); err != nil {
		return nil, fmt.Errorf("peek rate limit: %w", err)
	}
	now := t.s.clock()
	used, oldest, err := t.rateCount(ctx, now-p.Window.Microseconds())
	if err != nil {
		return nil, fmt.Errorf("peek rate limit: %w", err)
	}
	rl := &docket.RateLimit{Limit: p.Limit}
	rateFill(rl, p, used, oldest, now)
	return rl, nil
}

func validRate(p *docket.RateLimitParams) error {
	if p.Limit < 1 || p.Window <= 0 {
		return fmt.Errorf("%w: limit %d per %v: want at least 1 per a positive window",
			docket.ErrInvalid, p.Limit, p.Window)
	}
	return nil
}

// rateCount returns how many slots the tenant holds after start (unix
// microseconds) and the oldest of them.
func (t *tenantTx) rateCount(ctx context.Context, start int64) (int, sql.NullInt64, error) {
	var (
		used   int
		oldest sql.NullInt64
	)
	if err := t.tx.QueryRowContext(ctx, rateCountSQL, t.tenant, start).Scan(&used, &oldest); err != nil {
		return 0, oldest, docsError(err)
	}
	return used, oldest, nil
}

// rateFill sets Remaining and, when no slot is left, RetryAfter: the
// oldest slot in the window leaves it at oldest + window.
func rateFill(rl *docket.RateLimit, p *docket.RateLimitParams, used int, oldest sql.NullInt64, now int64) {
	rl.Remaining = max(p.Limit-used, 0)
	if rl.Remaining > 0 || !oldest.Valid {
		return
	}
	wait := time.Duration(oldest.Int64+p.Window.Microseconds()-now) * time.Microsecond
	rl.RetryAfter = max(wait, time.Microsecond)
}
