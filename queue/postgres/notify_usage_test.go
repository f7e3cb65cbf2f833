package postgres_test

import "testing"

// TestDriver_NotifyQueueUsage reads the LISTEN/NOTIFY queue's use: a
// fraction, 0 on an idle server.
func TestDriver_NotifyQueueUsage(t *testing.T) {
	t.Parallel()
	d := newDriver(t)
	usage, err := d.NotifyQueueUsage(t.Context())
	if err != nil || usage < 0 || usage >= 1 {
		t.Errorf("NotifyQueueUsage = %v, %v; want a fraction below 1", usage, err)
	}
}
