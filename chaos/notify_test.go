//go:build chaos

// The full tier only (-tags chaos, make chaos): the NOTIFY cost at commit is a measurement,
// and its own XID and commit counts want the cluster to itself.

package chaos

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/docketq/docket/queue"
	"github.com/docketq/docket/queue/driver"
	"github.com/docketq/docket/queue/postgres"
	"github.com/docketq/docket/queue/postgres/pgtest"
)

// TestNotifyCost_Smoke is a measurement: on a durable cluster
// (fsync and synchronous_commit on: NOTIFY's commit-time lock is held
// across the commit's WAL flush), 8 producers commit single inserts as fast
// as they can for 3 s in each of three modes, while a session LISTENs on
// both channels (as workers do): a bare INSERT into a table shaped like a
// job (no NOTIFY), the same INSERT with pg_notify in its statement (NOTIFY
// per insert), and Docket's own enqueue of one job (which posts its
// notification after the commit, coalesced with others in flight:
// postgres/notify_post.go). The commits/s go to docs/reliability.md; no timing is
// asserted. Asserted: no trigger on Docket's tables
// calls NOTIFY (a per-row trigger would notify once per row).
func TestNotifyCost_Smoke(t *testing.T) {
	runNotifyCost(t, 3*time.Second)
}

// runNotifyCost runs each mode for span.
func runNotifyCost(t *testing.T, span time.Duration) {
	const producers = 8
	c := startCluster(t, pgtest.Options{Durable: true})
	e := setupOn(t, c)
	ctx := context.Background()
	// The producers' pool: a connection each.
	cfg, err := pgxpool.ParseConfig(e.connString)
	if err != nil {
		t.Fatal(err)
	}
	cfg.MaxConns = producers
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	client := queue.NewClient(postgres.New(pool), queue.ClientConfig{})
	// No trigger on Docket's tables notifies, as a per-row trigger would
	// notify once per row of a batch, but the one that wakes a workflow's
	// parent when its last step ends: it fires on that update only, never
	// on an insert, and its payload is the queue's name, which PostgreSQL
	// sends once per transaction however many parents it woke.
	var notifying []string
	if err := e.pool.QueryRow(ctx, `
SELECT coalesce(array_agg(g.tgname ORDER BY g.tgname), '{}') FROM pg_trigger g JOIN pg_class r ON r.oid = g.tgrelid JOIN pg_proc p ON p.oid = g.tgfoid
WHERE NOT g.tgisinternal AND r.relname LIKE 'docket\_%' AND p.prosrc ~* '(pg_notify|notify)'`).Scan(&notifying); err != nil {
		t.Fatal(err)
	}
	if want := []string{"docket_jobs_parent_woken"}; !slices.Equal(notifying, want) {
		t.Errorf("triggers on Docket's tables that call NOTIFY: %q, want only %q", notifying, want)
	}
	if _, err := e.pool.Exec(ctx, `CREATE TABLE notify_bench (id bigserial PRIMARY KEY, queue text NOT NULL,
		tenant_id text NOT NULL, kind text NOT NULL, args jsonb NOT NULL, created_at timestamptz NOT NULL DEFAULT now())`); err != nil {
		t.Fatal(err)
	}

	// The listener drains both channels while the producers run.
	listener, err := pgx.Connect(ctx, e.connString)
	if err != nil {
		t.Fatal(err)
	}
	defer listener.Close(ctx)
	for _, ch := range []string{"notify_bench", driver.TopicInsert} {
		if _, err := listener.Exec(ctx, "LISTEN "+ch); err != nil {
			t.Fatal(err)
		}
	}
	listenCtx, stopListen := context.WithCancel(ctx)
	var received atomic.Int64
	var listening sync.WaitGroup
	listening.Go(func() {
		for {
			if _, err := listener.WaitForNotification(listenCtx); err != nil {
				return
			}
			received.Add(1)
		}
	})

	const insertSQL = `INSERT INTO notify_bench (queue, tenant_id, kind, args) VALUES ('default', $1, 'bench', '{}')`
	modes := []struct {
		name string
		run  func(ctx context.Context, tenant string) error
	}{
		{"INSERT, no NOTIFY", func(ctx context.Context, tenant string) error {
			_, err := pool.Exec(ctx, insertSQL, tenant)
			return err
		}},
		{"INSERT + pg_notify per insert", func(ctx context.Context, tenant string) error {
			_, err := pool.Exec(ctx, `WITH i AS (`+insertSQL+` RETURNING queue)
				SELECT pg_notify('notify_bench', queue) FROM i`, tenant)
			return err
		}},
		{"Docket enqueue of one job (notifications after commit, coalesced)", func(ctx context.Context, tenant string) error {
			_, err := client.Enqueue(ctx, &queue.EnqueueParams{Kind: "bench", TenantID: tenant})
			return err
		}},
	}
	rates := make([]float64, len(modes))
	for m, mode := range modes {
		before := received.Load()
		runCtx, cancel := context.WithTimeout(ctx, span)
		var commits atomic.Int64
		var errs []error
		var mu sync.Mutex
		var wg sync.WaitGroup
		start := time.Now()
		for p := range producers {
			wg.Go(func() {
				for runCtx.Err() == nil {
					if err := mode.run(runCtx, fmt.Sprintf("t%d", p)); err != nil {
						if runCtx.Err() != nil {
							return // the span ended during the statement
						}
						mu.Lock()
						errs = append(errs, err)
						mu.Unlock()
						return
					}
					commits.Add(1)
				}
			})
		}
		wg.Wait()
		cancel()
		took := time.Since(start)
		time.Sleep(300 * time.Millisecond) // the listener catches up (figures only)
		for _, err := range errs {
			t.Errorf("%s: %v", mode.name, err)
		}
		rates[m] = float64(commits.Load()) / took.Seconds()
		t.Logf("%-55s %6.0f commits/s (%d in %.1f s), %d notifications to the listener",
			mode.name, rates[m], commits.Load(), took.Seconds(), received.Load()-before)
	}
	stopListen()
	listening.Wait()
	t.Logf("per-insert NOTIFY: %.0f %% of the no-NOTIFY rate; Docket's enqueue: %.0f %% (its statement does more than the bare insert)",
		100*rates[1]/rates[0], 100*rates[2]/rates[0])
}
