package httpapi_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/docketq/docket/httpapi"
)

// TestAdmin_HealthDatabase: GET /v1/admin/health shows the store's health
// beside the views: dead tuples and the oldest transaction on both stores,
// the LISTEN/NOTIFY queue's use on PostgreSQL only (null on SQLite).
func TestAdmin_HealthDatabase(t *testing.T) {
	t.Parallel()
	forEachAdminStore(t, nil, func(t *testing.T, e *adminEnv) {
		var raw map[string]any
		e.admin("GET", "/v1/admin/health?performance=false&finished=false", nil, http.StatusOK).decode(t, &raw)
		db, ok := raw["database"].(map[string]any)
		if !ok {
			t.Fatalf("no database object in %v", raw)
		}
		for _, f := range []string{"dead_tuples", "oldest_transaction_age_seconds", "notify_queue_usage"} {
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
	})
}
