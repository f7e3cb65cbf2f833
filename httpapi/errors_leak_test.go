package httpapi_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/docketq/docket"
	"github.com/docketq/docket/httpapi"
	"github.com/docketq/docket/internal/storepair"
	"github.com/docketq/docket/queue"
)

// lockedBuffer is a log sink the server's goroutines may share.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// execOwner runs statements on the store's database as its owner.
func execOwner(t *testing.T, d httpapi.TestStore, stmts ...string) {
	t.Helper()
	for _, s := range stmts {
		var err error
		switch d := d.(type) {
		case *storepair.Postgres:
			_, err = d.Pool().Exec(context.Background(), s)
		case *storepair.SQLite:
			_, err = d.DB().ExecContext(context.Background(), s)
		default:
			t.Fatalf("store %T", d)
		}
		if err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

// leakProbes make the database itself refuse a tenant update, with its
// own text: a unique index (a unique violation: ErrDuplicate, 409) and a
// trigger that raises (untranslated: 500).
var leakProbes = map[string][]string{
	"sqlite": {
		`CREATE UNIQUE INDEX docket_leak_probe_idx ON docket_tenants (plan)`,
		`CREATE TRIGGER docket_leak_probe_trg BEFORE UPDATE OF rate_limit ON docket_tenants
		 WHEN NEW.rate_limit = 4242 BEGIN SELECT RAISE(ABORT, 'docket_leak_probe_trg fired'); END`,
	},
	"postgres": {
		`CREATE UNIQUE INDEX docket_leak_probe_idx ON docket_tenants (plan)`,
		`CREATE FUNCTION docket_leak_probe_fn() RETURNS trigger LANGUAGE plpgsql AS
		 $$ BEGIN RAISE EXCEPTION 'docket_leak_probe_trg fired'; END $$`,
		`CREATE TRIGGER docket_leak_probe_trg BEFORE UPDATE ON docket_tenants FOR EACH ROW
		 WHEN (NEW.rate_limit = 4242) EXECUTE FUNCTION docket_leak_probe_fn()`,
	},
}

// TestErrors_NoDatabaseTextInResponses: on both drivers, an error of the
// database itself (a unique violation the driver translates, a trigger's
// exception it does not) answers with the problem's safe message; its
// text (the index or trigger name, the database's wording) reaches the
// server's log, never the response body.
func TestErrors_NoDatabaseTextInResponses(t *testing.T) {
	t.Parallel()
	for _, backend := range httpapi.TestBackends {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			logs := &lockedBuffer{}
			e := newAdminEnvStore(t, httpapi.OpenTestStore(t, backend), func(c *httpapi.Config) {
				c.Logger = slog.New(slog.NewTextHandler(logs, nil))
			})
			e.createTenant("one", nil)
			two := e.createTenant("two", map[string]any{"plan": "pro"}).Tenant.ID
			execOwner(t, e.driver, leakProbes[backend]...)

			// The driver's own error, to know its text.
			free := docket.PlanFree
			_, err := e.driver.TenantUpdate(e.ctx, &docket.TenantUpdateParams{ID: two, Plan: &free})
			var dbErr *queue.DatabaseError
			if !errors.Is(err, docket.ErrDuplicate) || !errors.As(err, &dbErr) {
				t.Fatalf("TenantUpdate onto the unique index: %v, want ErrDuplicate carrying the database's error", err)
			}
			for _, c := range []struct {
				body   string
				status int
				secret []string // texts the body must not show
			}{
				{`{"plan":"free"}`, http.StatusConflict, []string{dbErr.Error(), "docket_leak_probe_idx", "UNIQUE", "SQLSTATE"}},
				{`{"rate_limit":4242}`, http.StatusInternalServerError, []string{"docket_leak_probe_trg", "SQLSTATE", "fired"}},
			} {
				r := e.do("PATCH", "/v1/admin/tenants/"+two, testAdminKey, c.body)
				if r.status != c.status {
					t.Fatalf("PATCH %s: status %d, want %d: %s", c.body, r.status, c.status, r.body)
				}
				for _, s := range c.secret {
					if strings.Contains(string(r.body), s) {
						t.Errorf("PATCH %s: the body shows the database's text %q: %s", c.body, s, r.body)
					}
				}
			}
			logged := strings.ReplaceAll(logs.String(), `\"`, `"`) // as slog's text quotes it
			for _, s := range []string{dbErr.Error(), "docket_leak_probe_trg fired"} {
				if !strings.Contains(logged, s) {
					t.Errorf("the server's log lacks the database's text %q:\n%s", s, logs.String())
				}
			}
		})
	}
}
