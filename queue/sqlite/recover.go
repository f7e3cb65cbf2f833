package sqlite

import (
	"context"
	"fmt"
)

// expireOrphans runs at the first Migrate of a Driver. Only this process has
// the database open (the lock file sees to it), so every job still running
// belongs to a process that died, as does every slot a cancelled attempt
// holds (docket_slot_holds), and every leader lease to a dead leader.
// It ends those leases now: the first rescue sweep then returns the jobs to
// pending (their attempt counted, as after any lease expiry) instead of
// waiting out the lease, and the first election succeeds at once. A
// restart after a crash resumes work within a second.
func (d *Driver) expireOrphans(ctx context.Context) error {
	err := d.exec.write(ctx, func(t *txn) error {
		if _, err := t.exec(ctx, `UPDATE docket_jobs SET lease_expires_at = ? WHERE state = 'running' AND lease_expires_at > ?`, t.now, t.now); err != nil {
			return err
		}
		if _, err := t.exec(ctx, `UPDATE docket_slot_holds SET expires_at = ? WHERE expires_at > ?`, t.now, t.now); err != nil {
			return err
		}
		_, err := t.exec(ctx, `DELETE FROM docket_leaders`)
		return err
	})
	if err != nil {
		return fmt.Errorf("expire orphaned leases: %w", err)
	}
	return nil
}
