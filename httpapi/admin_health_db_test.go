package httpapi_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/docketq/docket/httpapi"
)

// TestAdmin_HealthDatabase: GET /v1/admin/health shows the store's health
// beside the views: dead tuples and the oldest transaction on both stores,
// the LISTEN/NOTIFY queue's use, the sessions holding back vacuum and the
// transaction-id ages on PostgreSQL only (null on SQLite).
func TestAdmin_HealthDatabase(t *testing.T) {
	t.Parallel()
	forEachAdminStore(t, nil, func(t *testing.T, e *adminEnv) {
		var raw map[string]any
		e.admin("GET", "/v1/admin/health?performance=false&finished=false", nil, http.StatusOK).decode(t, &raw)
		db, ok := raw["database"].(map[string]any)
		if !ok {
			t.Fatalf("no database object in %v", raw)
		}
		for _, f := range []string{"dead_tuples", "oldest_transaction_age_seconds", "notify_queue_usage", "horizon_holders", "wraparound"} {
			if _, ok := db[f]; !ok {
				t.Errorf("database lacks %q: %v", f, db)
			}
		}
		var h httpapi.HealthView
		e.admin("GET", "/v1/admin/health", nil, http.StatusOK).decode(t, &h)
		postgres := strings.HasSuffix(t.Name(), "/postgres")
		switch u := h.Database.NotifyQueueUsage; {
		case postgres && (u == nil || *u < 0 || *u > 1):
			t.Errorf("notify_queue_usage on PostgreSQL = %v, want a fraction", u)
		case !postgres && u != nil:
			t.Errorf("notify_queue_usage on SQLite = %v, want null", *u)
		}
		if h.Database.DeadTuples < 0 || h.Database.OldestTransactionAgeSeconds < 0 {
			t.Errorf("database %+v", *h.Database)
		}
		if !postgres {
			if h.Database.HorizonHolders != nil {
				t.Errorf("horizon_holders on SQLite = %+v, want null", h.Database.HorizonHolders)
			}
			if h.Database.Wraparound != nil {
				t.Errorf("wraparound on SQLite = %+v, want null", *h.Database.Wraparound)
			}
			return
		}
		// The transaction-id ages; testpg's cluster has no slot, no
		// prepared transaction and max_prepared_transactions 0.
		switch w := h.Database.Wraparound; {
		case w == nil:
			t.Errorf("wraparound on PostgreSQL is null")
		case w.Database == "" || w.DatabaseAge <= 0 || w.OldestDatabaseAge < w.DatabaseAge ||
			w.ReplicationSlot != nil || w.PreparedTransaction != nil || w.MaxPreparedTransactions != 0:
			t.Errorf("wraparound = %+v, want positive ages, no slot and no prepared transaction", *w)
		}
		// A session idle in a transaction that took an xid holds back
		// vacuum: the health names its pid.
		pooled, ok := e.driver.(interface{ Pool() *pgxpool.Pool })
		if !ok {
			t.Fatalf("%T has no pool", e.driver)
		}
		conn, err := pooled.Pool().Acquire(e.ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Release()
		var pid int
		if err := conn.QueryRow(e.ctx, `SELECT pg_backend_pid()`).Scan(&pid); err != nil {
			t.Fatal(err)
		}
		if _, err := conn.Exec(e.ctx, `BEGIN; SELECT txid_current()`); err != nil {
			t.Fatal(err)
		}
		defer func() { _, _ = conn.Exec(e.ctx, `ROLLBACK`) }()
		e.admin("GET", "/v1/admin/health?performance=false&finished=false", nil, http.StatusOK).decode(t, &h)
		found := false
		for _, hh := range h.Database.HorizonHolders {
			found = found || (hh.PID == pid && hh.State == "idle in transaction" && hh.TransactionAgeSeconds >= 0)
		}
		if !found {
			t.Errorf("horizon_holders %+v: want the idle transaction of pid %d", h.Database.HorizonHolders, pid)
		}
	})
}
