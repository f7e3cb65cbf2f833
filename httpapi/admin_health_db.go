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
	// Wraparound is how far transaction ids have run ahead of what vacuum
	// has frozen (PostgreSQL; null on SQLite, which has none).
	Wraparound *WraparoundView `json:"wraparound"`
}

// WraparoundView is docket.Wraparound: ages count transaction ids;
// PostgreSQL forces anti-wraparound vacuums past autovacuum_freeze_max_age
// (200 million by default) and stops near 2^31.
type WraparoundView struct {
	Database          string `json:"database"`
	DatabaseAge       int64  `json:"database_age"`
	OldestDatabase    string `json:"oldest_database"`
	OldestDatabaseAge int64  `json:"oldest_database_age"`
	// ReplicationSlot is the slot holding the oldest xmin or
	// catalog_xmin; null when none holds one.
	ReplicationSlot *XIDHolderView `json:"replication_slot"`
	// PreparedTransaction is the oldest prepared transaction; null when
	// there is none.
	PreparedTransaction     *XIDHolderView `json:"prepared_transaction"`
	MaxPreparedTransactions int            `json:"max_prepared_transactions"`
}

// XIDHolderView is a replication slot or a prepared transaction that holds
// back freezing: its name (a slot's name, a transaction's gid) and age.
type XIDHolderView struct {
	Name   string `json:"name"`
	XIDAge int64  `json:"xid_age"`
}

// newWraparoundView is w as the health shows it.
func newWraparoundView(w docket.Wraparound) *WraparoundView {
	v := &WraparoundView{Database: w.Database, DatabaseAge: w.DatabaseAge, OldestDatabase: w.OldestDatabase,
		OldestDatabaseAge: w.OldestDatabaseAge, MaxPreparedTransactions: w.MaxPreparedTransactions}
	if w.Slot != "" {
		v.ReplicationSlot = &XIDHolderView{Name: w.Slot, XIDAge: w.SlotAge}
	}
	if w.PreparedGID != "" {
		v.PreparedTransaction = &XIDHolderView{Name: w.PreparedGID, XIDAge: w.PreparedAge}
	}
	return v
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

// wraparoundReader is a store that reads its transaction-id ages (the
// PostgreSQL driver).
type wraparoundReader interface {
	Wraparound(ctx context.Context) (docket.Wraparound, error)
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
	if wr, ok := s.cfg.Store.(wraparoundReader); ok {
		w, err := wr.Wraparound(ctx)
		if err != nil {
			return nil, fmt.Errorf("database health: %w", err)
		}
		v.Wraparound = newWraparoundView(w)
	}
	return v, nil
}
