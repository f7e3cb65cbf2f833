package pgstore

import (
	"context"
	"fmt"
	"time"

	"github.com/docketq/docket"
)

// rateLockClass is the first key of the advisory lock that serialises the
// takers of one tenant's window ("docr"); the second is a hash of the
// tenant id. The engine's locks use other classes.
const rateLockClass = 0x646f6372

// rateTakeSQL takes a slot when fewer than $2 are in the window of $3
// microseconds ending at the database's now, deletes the tenant's expired
// slots and reports the window. It runs after the advisory lock, in a
// statement of its own, so its snapshot sees every slot committed by the
// takers that held the lock before.
const rateTakeSQL = `WITH c AS (
    SELECT clock_timestamp() AS now, $3::bigint * interval '1 microsecond' AS window
), expired AS (
    DELETE FROM docket_rate_slots s USING c WHERE s.tenant_id = $1 AND s.at <= c.now - c.window
), live AS (
    SELECT count(*) AS n, min(s.at) AS oldest
    FROM docket_rate_slots s, c WHERE s.tenant_id = $1 AND s.at > c.now - c.window
), taken AS (
    INSERT INTO docket_rate_slots (tenant_id, at)
    SELECT $1, c.now FROM c, live WHERE live.n < $2
    RETURNING id, at
)
SELECT (SELECT id FROM taken), live.n + (SELECT count(*) FROM taken),
       coalesce(live.oldest, (SELECT at FROM taken)), c.now, c.window
FROM c, live`

// ratePeekSQL reports the window without changing it.
const ratePeekSQL = `WITH c AS (
    SELECT clock_timestamp() AS now, $2::bigint * interval '1 microsecond' AS window
)
SELECT NULL::bigint, count(s.at), min(s.at), c.now, c.window
FROM c LEFT JOIN docket_rate_slots s ON s.tenant_id = $1 AND s.at > c.now - c.window
GROUP BY c.now, c.window`

// RateLimitTake takes a slot of the tenant's window if one is free.
// Concurrent takes of one tenant wait for each other (a transaction-scoped
// advisory lock), so they never exceed the limit.
func (t *tenantTx) RateLimitTake(ctx context.Context, params *docket.RateLimitParams) (*docket.RateLimit, error) {
	if err := validRateLimit(params); err != nil {
		return nil, fmt.Errorf("take rate-limit slot: %w", err)
	}
	if _, err := t.tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1, hashtext($2))`, int32(rateLockClass), t.tenant); err != nil {
		return nil, fmt.Errorf("take rate-limit slot: %w", docsError(err))
	}
	if err := t.notDeleted(ctx); err != nil {
		return nil, fmt.Errorf("take rate-limit slot: %w", err)
	}
	rl, err := t.rateWindow(ctx, params, rateTakeSQL, t.tenant, params.Limit, params.Window.Microseconds())
	if err != nil {
		return nil, fmt.Errorf("take rate-limit slot: %w", err)
	}
	return rl, nil
}

// RateLimitPeek reports the window without taking a slot.
func (t *tenantTx) RateLimitPeek(ctx context.Context, params *docket.RateLimitParams) (*docket.RateLimit, error) {
	if err := validRateLimit(params); err != nil {
		return nil, fmt.Errorf("peek rate limit: %w", err)
	}
	rl, err := t.rateWindow(ctx, params, ratePeekSQL, t.tenant, params.Window.Microseconds())
	if err != nil {
		return nil, fmt.Errorf("peek rate limit: %w", err)
	}
	return rl, nil
}

// rateWindow runs a statement of rateTakeSQL's shape and builds the
// report: (slot taken or NULL, slots in the window, the oldest, now,
// window).
func (t *tenantTx) rateWindow(ctx context.Context, params *docket.RateLimitParams, sql string, args ...any) (*docket.RateLimit, error) {
	var (
		slot   *int64
		used   int
		oldest *time.Time
		now    time.Time
		window time.Duration
	)
	if err := t.tx.QueryRow(ctx, sql, args...).Scan(&slot, &used, &oldest, &now, &window); err != nil {
		return nil, docsError(err)
	}
	rl := &docket.RateLimit{Limit: params.Limit, Remaining: max(params.Limit-used, 0)}
	if slot != nil {
		rl.Allowed = true
	}
	if rl.Remaining == 0 && oldest != nil {
		rl.RetryAfter = max(oldest.Add(window).Sub(now), time.Microsecond)
	}
	return rl, nil
}

func validRateLimit(p *docket.RateLimitParams) error {
	if p.Limit < 1 || p.Window <= 0 {
		return fmt.Errorf("%w: rate limit %d per %v: want at least 1 per a positive window",
			docket.ErrInvalid, p.Limit, p.Window)
	}
	return nil
}
