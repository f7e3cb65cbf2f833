package httpapi

import (
	"context"
	"fmt"

	"github.com/docketq/docket"
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
	// HorizonHolders are the sessions holding back vacuum, oldest
	// transaction first, at most maxHorizonHolders (PostgreSQL: the view
	// docket_horizon_holders; empty when none; null on SQLite). The first
	// names the process to end when dead tuples pile up.
	HorizonHolders []HorizonHolderView `json:"horizon_holders"`
}

// HorizonHolderView is one session holding back vacuum.
type HorizonHolderView struct {
	PID                   int     `json:"pid"`
	User                  string  `json:"user"`
	Application           string  `json:"application_name"`
	ClientAddr            string  `json:"client_addr"`
	State                 string  `json:"state"`
	XIDAge                int64   `json:"xid_age"`
	TransactionAgeSeconds float64 `json:"transaction_age_seconds"`
	StateAgeSeconds       float64 `json:"state_age_seconds"`
}

// maxHorizonHolders bounds the sessions the health shows.
const maxHorizonHolders = 5

// horizonReader is a store that names the sessions holding back vacuum
// (the PostgreSQL driver).
type horizonReader interface {
	HorizonHolders(ctx context.Context, limit int) ([]docket.HorizonHolder, error)
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
	if hr, ok := s.cfg.Store.(horizonReader); ok {
		hs, err := hr.HorizonHolders(ctx, maxHorizonHolders)
		if err != nil {
			return nil, fmt.Errorf("database health: %w", err)
		}
		v.HorizonHolders = make([]HorizonHolderView, len(hs))
		for i, h := range hs {
			v.HorizonHolders[i] = HorizonHolderView{PID: h.PID, User: h.User, Application: h.Application,
				ClientAddr: h.ClientAddr, State: h.State, XIDAge: h.XIDAge,
				TransactionAgeSeconds: h.TransactionAge.Seconds(), StateAgeSeconds: h.StateAge.Seconds()}
		}
	}
	return v, nil
}
