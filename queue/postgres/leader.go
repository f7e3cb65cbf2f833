package postgres

import (
	"context"
	"fmt"

	"github.com/docketq/docket/queue/driver"
)

// leaderAttemptSQL takes the leadership $1 for $2 until the database clock
// plus $3 microseconds, if it is free, expired or already $2's. The term
// grows when the leader changes.
const leaderAttemptSQL = `
INSERT INTO docket_leaders AS l (name, leader_id, elected_at, expires_at, term)
VALUES ($1, $2, clock_timestamp(), clock_timestamp() + $3::bigint * interval '1 microsecond', 1)
ON CONFLICT (name) DO UPDATE SET
    leader_id = excluded.leader_id,
    elected_at = CASE WHEN l.leader_id = excluded.leader_id THEN l.elected_at ELSE excluded.elected_at END,
    expires_at = excluded.expires_at,
    term = CASE WHEN l.leader_id = excluded.leader_id THEN l.term ELSE l.term + 1 END
WHERE l.leader_id = excluded.leader_id OR l.expires_at <= clock_timestamp()`

// LeaderAttempt elects or re-elects params.LeaderID.
func (e *Executor) LeaderAttempt(ctx context.Context, params *driver.LeaderParams) (bool, error) {
	if params.Name == "" || params.LeaderID == "" || params.TTL <= 0 {
		return false, fmt.Errorf("%w: leader attempt needs a name, a leader id and a TTL", driver.ErrInvalid)
	}
	tag, err := e.db.Exec(ctx, leaderAttemptSQL, params.Name, params.LeaderID, micros(params.TTL))
	if err != nil {
		return false, fmt.Errorf("leader attempt: %w", interpretError(err))
	}
	return tag.RowsAffected() == 1, nil
}

// LeaderResign ends params.LeaderID's leadership now, keeping the term.
func (e *Executor) LeaderResign(ctx context.Context, params *driver.LeaderParams) error {
	_, err := e.db.Exec(ctx, `
UPDATE docket_leaders SET expires_at = clock_timestamp()
WHERE name = $1 AND leader_id = $2 AND expires_at > clock_timestamp()`, params.Name, params.LeaderID)
	if err != nil {
		return fmt.Errorf("leader resign: %w", interpretError(err))
	}
	return nil
}
