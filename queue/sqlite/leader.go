package sqlite

import (
	"context"
	"fmt"

	"github.com/docketq/docket/queue/driver"
)

// electSQL takes a free or expired leadership, or renews one's own.
const electSQL = `
INSERT INTO docket_leaders (name, leader_id, elected_at, expires_at) VALUES (?1, ?2, ?3, ?4)
ON CONFLICT (name) DO UPDATE SET
	leader_id = excluded.leader_id, expires_at = excluded.expires_at,
	elected_at = CASE WHEN leader_id = excluded.leader_id THEN elected_at ELSE excluded.elected_at END
WHERE leader_id = excluded.leader_id OR expires_at <= ?3`

const leaderSQL = `SELECT leader_id FROM docket_leaders WHERE name = ?`

// LeaderAttempt elects or re-elects p.LeaderID for p.TTL.
func (e *executor) LeaderAttempt(ctx context.Context, p *driver.LeaderParams) (bool, error) {
	if p.Name == "" || p.LeaderID == "" || p.TTL <= 0 {
		return false, fmt.Errorf("elect leader: %w: name, leader id and TTL are required", driver.ErrInvalid)
	}
	var leader string
	err := e.write(ctx, func(t *txn) error {
		if _, err := t.exec(ctx, electSQL, p.Name, p.LeaderID, t.now, t.now+p.TTL.Microseconds()); err != nil {
			return err
		}
		return t.queryRow(ctx, leaderSQL, p.Name).Scan(&leader)
	})
	if err != nil {
		return false, fmt.Errorf("elect leader %s: %w", p.Name, err)
	}
	return leader == p.LeaderID, nil
}

// LeaderResign gives up leadership if p.LeaderID holds it.
func (e *executor) LeaderResign(ctx context.Context, p *driver.LeaderParams) error {
	err := e.write(ctx, func(t *txn) error {
		_, err := t.exec(ctx, `DELETE FROM docket_leaders WHERE name = ? AND leader_id = ?`, p.Name, p.LeaderID)
		return err
	})
	if err != nil {
		return fmt.Errorf("resign leader %s: %w", p.Name, err)
	}
	return nil
}
