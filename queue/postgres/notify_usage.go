package postgres

import (
	"context"
	"fmt"
)

// NotifyQueueUsage returns the fraction of the server's LISTEN/NOTIFY queue
// in use (pg_notification_queue_usage()): 0 when every listener keeps up;
// near 1, a listener stuck in a long transaction is about to make NOTIFY
// fail, and with it every enqueue that notifies.
func (d *Driver) NotifyQueueUsage(ctx context.Context) (float64, error) {
	var usage float64
	if err := d.pool.QueryRow(ctx, `SELECT pg_notification_queue_usage()`).Scan(&usage); err != nil {
		return 0, fmt.Errorf("notification queue usage: %w", interpretError(err))
	}
	return usage, nil
}
