package httpapi

import (
	"context"
	"fmt"
)

// DatabaseHealthView is the store's health, part of GET /v1/admin/health:
// what keeps vacuum from cleaning up and how full PostgreSQL's
// notification queue is.
type DatabaseHealthView struct {
	// DeadTuples is the number of dead rows in the jobs table
	// (PostgreSQL) or of free pages in the database file (SQLite).
	DeadTuples int64 `json:"dead_tuples"`
	// OldestTransactionAgeSeconds is the age of the oldest open
	// transaction, which holds back vacuum (PostgreSQL; 0 on SQLite).
	OldestTransactionAgeSeconds float64 `json:"oldest_transaction_age_seconds"`
	// NotifyQueueUsage is the fraction of PostgreSQL's LISTEN/NOTIFY
	// queue in use (pg_notification_queue_usage()); null on a store that
	// has none (SQLite).
	NotifyQueueUsage *float64 `json:"notify_queue_usage"`
}

// notifyUser is a store that reports its notification queue's use (the
// PostgreSQL driver).
type notifyUser interface {
	NotifyQueueUsage(ctx context.Context) (float64, error)
}

// databaseHealth reads the store's health as seen from the watched queue.
func (s *Server) databaseHealth(ctx context.Context) (*DatabaseHealthView, error) {
	st, err := s.cfg.Queue.Stats(ctx, watchedQueue)
	if err != nil {
		return nil, fmt.Errorf("database health: %w", err)
	}
	v := &DatabaseHealthView{DeadTuples: st.DeadTuples, OldestTransactionAgeSeconds: st.OldestXactAge.Seconds()}
	if n, ok := s.cfg.Store.(notifyUser); ok {
		u, err := n.NotifyQueueUsage(ctx)
		if err != nil {
			return nil, fmt.Errorf("database health: %w", err)
		}
		v.NotifyQueueUsage = &u
	}
	return v, nil
}
