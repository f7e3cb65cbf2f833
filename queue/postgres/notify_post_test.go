package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/docketq/docket/queue"
	"github.com/docketq/docket/queue/driver"
	"github.com/docketq/docket/queue/postgres"
	"github.com/docketq/docket/queue/postgres/pgtest"
)

// TestNotify_HotStatementsSkipTheNotifyLock holds PostgreSQL's notify lock
// and checks that enqueues, claims, finishes and InTenant's transactions
// commit anyway (InTenant's: a transaction registered with
// NotifyAfterCommit), and that their notifications arrive, coalesced, once the
// lock is free.
//
// A transaction that calls pg_notify takes a cluster-wide lock at commit
// and keeps it until its commit is durable (notify_post.go). The test holds
// it the way a slow disk would, only forever: on a private cluster whose
// synchronous standby never connects, a session with synchronous_commit on
// commits a NOTIFY and waits for the standby, lock held. Every other
// session commits with synchronous_commit off, so only the notify lock can
// make it wait. Before notifications were sent after commit, the enqueue
// below waited for the lock until the test's deadline.
func TestNotify_HotStatementsSkipTheNotifyLock(t *testing.T) {
	t.Parallel()
	if pgtest.Default().External() {
		t.Skip("needs a private cluster (synchronous_standby_names is server-wide)")
	}
	c, err := pgtest.Start(pgtest.Options{
		Template: postgres.MigrateURL,
		Settings: map[string]string{"synchronous_standby_names": "'nobody'"},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Stop() })
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	pool, err := pgxpool.New(ctx, c.NewDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	d := postgres.New(pool)
	notes := listenAll(ctx, t, d)

	// The holder: its commit waits for the standby with the lock held.
	holder, err := pgx.Connect(ctx, pool.Config().ConnConfig.ConnString())
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close(context.WithoutCancel(ctx))
	// It writes a row: a transaction that only notifies writes no WAL of
	// its own, so its commit would not wait for the standby.
	if _, err := holder.Exec(ctx, `CREATE TABLE held (x int)`); err != nil {
		t.Fatal(err)
	}
	holderDone := make(chan error, 1)
	go func() {
		_, err := holder.Exec(ctx, `SET synchronous_commit = on; BEGIN; INSERT INTO held VALUES (1); SELECT pg_notify('held', 'x'); COMMIT`)
		holderDone <- err
	}()
	waitActivity(ctx, t, pool, holder.PgConn().PID(), "SyncRep")

	// The control: a plain notifying transaction waits for the lock.
	control, err := pgx.Connect(ctx, pool.Config().ConnConfig.ConnString())
	if err != nil {
		t.Fatal(err)
	}
	defer control.Close(context.WithoutCancel(ctx))
	controlDone := make(chan error, 1)
	go func() {
		_, err := control.Exec(ctx, `SELECT pg_notify('control', 'x')`)
		controlDone <- err
	}()
	waitActivity(ctx, t, pool, control.PgConn().PID(), "object")

	// The engine's hot statements commit while the lock is held.
	client := queue.NewClient(d, queue.ClientConfig{})
	for i := range 50 {
		if _, err := client.Enqueue(ctx, &queue.EnqueueParams{Queue: "q", Kind: "k", TenantID: fmt.Sprint("t", i%3)}); err != nil {
			t.Fatalf("enqueue with the notify lock held: %v", err)
		}
	}
	x := d.Executor()
	jobs, _, err := x.JobClaim(ctx, &driver.JobClaimParams{Queue: "q", Max: 10, LeaseDuration: time.Minute, WorkerID: "w"})
	if err != nil || len(jobs) == 0 {
		t.Fatalf("claim with the notify lock held: %d jobs, %v", len(jobs), err)
	}
	finishes := make([]*driver.JobFinishParams, len(jobs))
	for i, j := range jobs {
		finishes[i] = &driver.JobFinishParams{Lease: j.Lease(), Outcome: queue.OutcomeCompleted, WorkerID: "w"}
	}
	if errs, err := x.JobFinish(ctx, finishes); err != nil || errors.Join(errs...) != nil {
		t.Fatalf("finish with the notify lock held: %v %v", err, errs)
	}
	if err := enqueueAfterCommit(ctx, d, client, "q2"); err != nil {
		t.Fatalf("an enqueue in a registered transaction with the notify lock held: %v", err)
	}
	if got := notes.count("docket_insert q") + notes.count("docket_change q"); got != 0 {
		t.Fatalf("%d notifications delivered while the lock was held; want none", got)
	}

	// Let the holder go: its commit ends locally, the control and the
	// waiting send follow, and what accumulated meanwhile goes in one more.
	if _, err := pool.Exec(ctx, `SELECT pg_cancel_backend($1)`, holder.PgConn().PID()); err != nil {
		t.Fatal(err)
	}
	if err := <-holderDone; err != nil {
		t.Logf("holder: %v (its commit is local, as the cancel says)", err)
	}
	if err := <-controlDone; err != nil {
		t.Fatalf("control: %v", err)
	}
	for _, key := range []string{"docket_insert q", "docket_change q", "docket_insert q2"} {
		notes.wait(ctx, t, key)
	}
	d.Close() // waits for the sends in flight
	// 50 enqueues, while the first send waited for the lock: that one and at
	// most one more carried docket_insert q.
	if n := notes.count("docket_insert q"); n > 2 {
		t.Errorf("docket_insert q delivered %d times for 50 enqueues; want at most 2 (coalesced)", n)
	}
}

// noteLog collects what a listener delivers.
type noteLog struct {
	mu  sync.Mutex
	got map[string]int
}

func listenAll(ctx context.Context, t *testing.T, d *postgres.Driver) *noteLog {
	t.Helper()
	l := &noteLog{got: map[string]int{}}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	ready := make(chan struct{})
	var once sync.Once
	go func() {
		done <- d.Notifier().Listen(ctx, []string{driver.TopicInsert, driver.TopicChange, "ready"}, func(topic, payload string) {
			if topic == "ready" {
				once.Do(func() { close(ready) })
				return
			}
			l.mu.Lock()
			l.got[topic+" "+payload]++
			l.mu.Unlock()
		})
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("Listen: %v", err)
		}
	})
	// LISTEN is in place once a notification sent now arrives.
	for {
		if _, err := d.Pool().Exec(ctx, `SELECT pg_notify('ready', '')`); err != nil {
			t.Fatal(err)
		}
		select {
		case <-ready:
			return l
		case <-time.After(50 * time.Millisecond):
		case <-ctx.Done():
			t.Fatal("listener not ready")
		}
	}
}

func (l *noteLog) count(key string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.got[key]
}

// wait polls until key has been delivered, or fails at ctx's deadline.
func (l *noteLog) wait(ctx context.Context, t *testing.T, key string) {
	t.Helper()
	for l.count(key) == 0 {
		select {
		case <-ctx.Done():
			t.Fatalf("no %q notification", key)
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// waitActivity polls pg_stat_activity until pid waits on event (a
// wait_event, or a lock type).
func waitActivity(ctx context.Context, t *testing.T, pool *pgxpool.Pool, pid uint32, event string) {
	t.Helper()
	for {
		var waiting bool
		err := pool.QueryRow(ctx, `SELECT coalesce(wait_event = $2, false) OR EXISTS (
    SELECT FROM pg_locks WHERE pid = $1 AND NOT granted AND locktype = $2)
FROM pg_stat_activity WHERE pid = $1`, int32(pid), event).Scan(&waiting)
		if err != nil {
			t.Fatal(err)
		}
		if waiting {
			return
		}
		select {
		case <-ctx.Done():
			var state string
			_ = pool.QueryRow(context.Background(), `SELECT concat_ws(' ', state, wait_event_type, wait_event, query, current_setting('synchronous_standby_names'), current_setting('max_wal_senders')) FROM pg_stat_activity WHERE pid = $1`, int32(pid)).Scan(&state)
			t.Fatalf("pid %d never waited on %s: %s", pid, event, state)
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// enqueueAfterCommit enqueues a job of queue name in a transaction registered
// with NotifyAfterCommit, as a document store's tenant transaction is.
func enqueueAfterCommit(ctx context.Context, d *postgres.Driver, client *queue.Client, name string) error {
	tx, err := d.Pool().Begin(ctx)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	end := d.NotifyAfterCommit(tx)
	committed := false
	defer func() { end(committed) }()
	if _, err := client.EnqueueTx(ctx, tx, &queue.EnqueueParams{Queue: name, Kind: "k", TenantID: "tenant"}); err != nil {
		return err
	}
	if err := tx.Commit(ctx); err != nil {
		return err
	}
	committed = true
	return nil
}
