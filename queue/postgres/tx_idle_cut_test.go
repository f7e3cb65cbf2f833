package postgres_test

import (
	"context"
	"encoding/binary"
	"errors"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/docketq/docket/queue"
	"github.com/docketq/docket/queue/driver"
)

// TestJobFinish_TxIdleLimitAnyCut: wherever a partition cuts a caller's
// transaction inside JobFinish (after any of its round trips: on a fresh
// connection pgx prepares the statement in one and executes it in the
// next), a session left idle in that transaction with a lock on
// docket_jobs is ended by the server once its idle limit has passed. The
// client is cut after its k-th ReadyForQuery, for every k up to the last
// (the cut between CompleteTx and COMMIT): nothing it sends afterwards
// reaches the server, and its socket is not closed, as in a blackhole.
//
// It failed when the idle limit was set by the finish statement itself:
// the prepare round trip (Parse takes RowExclusiveLock on docket_jobs, and
// the server then idles with no limit) left a session that nothing ended,
// TestPartition_MidTransaction's intermittent failure.
func TestJobFinish_TxIdleLimitAnyCut(t *testing.T) {
	t.Parallel()
	f := setup(t)
	const limit = 300 * time.Millisecond
	tenants := tenantNames("cut-", 8) // one job each: all run at once
	f.enqueue(1, tenants...)
	jobs := f.claim(f.x, len(tenants))
	if len(jobs) != len(tenants) {
		t.Fatalf("claimed %d jobs, want %d", len(jobs), len(tenants))
	}
	locking := 0
	for k := 1; ; k++ {
		if k > len(jobs) {
			t.Fatalf("JobFinish took more than %d round trips", len(jobs))
		}
		cut, locked := f.cutFinish(jobs[k-1], limit, k)
		if !cut {
			break
		}
		if locked {
			locking++
		}
	}
	if locking == 0 {
		t.Fatal("no cut left a session holding a lock on docket_jobs: the test checked nothing")
	}
}

// cutFinish completes j in a transaction on a connection of its own that
// is cut after its k-th ReadyForQuery from the start of JobFinish. It
// reports whether the cut happened (false: JobFinish needed fewer round
// trips) and whether it left the session idle in the transaction holding a
// lock on docket_jobs; such a session must be ended by the server within
// the limit and a margin.
func (f *fixture) cutFinish(j *queue.Job, limit time.Duration, k int) (cut, locked bool) {
	t := f.t
	t.Helper()
	cfg := f.d.Pool().Config().ConnConfig.Copy()
	var cc *cutConn
	cfg.DialFunc = cuttingDial(cfg.DialFunc, &cc)
	conn, err := pgx.ConnectConfig(f.ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cc.Conn.Close() }) // the partition's end: the server sees the close
	var pid int32
	if err := conn.QueryRow(f.ctx, `SELECT pg_backend_pid()`).Scan(&pid); err != nil {
		t.Fatal(err)
	}
	tx, err := conn.Begin(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	x, err := f.d.UnwrapTx(tx)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(f.ctx)
	finished := make(chan error, 1)
	cc.arm(k)
	go func() {
		errs, err := x.JobFinish(ctx, []*driver.JobFinishParams{{
			Lease: j.Lease(), Outcome: queue.OutcomeCompleted, TxIdleLimit: limit,
		}})
		if err == nil {
			err = errors.Join(errs...)
		}
		finished <- err
	}()
	defer func() {
		cancel()
		if err := <-finished; err != nil {
			t.Logf("cut after round trip %d: JobFinish: %v", k, err)
		}
	}()
	select {
	case <-cc.cutCh:
	case err := <-finished:
		finished <- err // for the deferred receive
		if !cc.isCut() {
			if err != nil {
				t.Fatalf("JobFinish in %d round trips: %v", k-1, err)
			}
			_ = tx.Rollback(f.ctx)
			return false, false
		}
	}
	return true, f.checkCutSession(k, pid, limit)
}

// checkCutSession looks at session pid right after a cut at round trip k
// and reports whether it was left idle in a transaction holding a lock on
// docket_jobs; such a session must be ended by the server within limit
// (its idle_in_transaction_session_timeout) and a margin.
func (f *fixture) checkCutSession(k int, pid int32, limit time.Duration) (locked bool) {
	t := f.t
	t.Helper()
	var state, query string
	err := f.d.Pool().QueryRow(f.ctx, `SELECT state, left(query, 60), EXISTS (SELECT FROM pg_locks l
		WHERE l.pid = a.pid AND l.granted AND l.relation = 'docket_jobs'::regclass)
		FROM pg_stat_activity a WHERE pid = $1`, pid).Scan(&state, &query, &locked)
	if errors.Is(err, pgx.ErrNoRows) { // on a loaded machine the limit can pass before this look
		t.Logf("cut after round trip %d: session %d already ended", k, pid)
		return false
	}
	if err != nil {
		t.Fatalf("cut after round trip %d: the session: %v", k, err)
	}
	if state != "idle in transaction" || !locked {
		t.Logf("cut after round trip %d: session %d %s, no lock on docket_jobs", k, pid, state)
		return false
	}
	bound := limit + 10*time.Second // the server's timer, with room for a loaded machine
	deadline := time.Now().Add(bound)
	for f.queryInt(`SELECT count(*) FROM pg_stat_activity WHERE pid = $1`, pid) > 0 {
		if time.Now().After(deadline) {
			t.Errorf("cut after round trip %d: session %d still idle in its transaction, holding a lock on docket_jobs, %s after the cut (idle limit %s); last query %q",
				k, pid, bound, limit, query)
			return true
		}
		time.Sleep(20 * time.Millisecond) // polling the server's state with a deadline
	}
	t.Logf("cut after round trip %d: the server ended session %d, which held a lock on docket_jobs", k, pid)
	return true
}

// cutConn is a client's connection that a partition cuts after the k-th
// ReadyForQuery read once armed: from then on what the client writes is
// dropped and its Close does not reach the server.
// cuttingDial wraps dial so that each connection it makes is a cutConn,
// the last of them kept in *cc.
func cuttingDial(dial pgconn.DialFunc, cc **cutConn) pgconn.DialFunc {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		*cc = &cutConn{Conn: c, cutCh: make(chan struct{})}
		return *cc, nil
	}
}

type cutConn struct {
	net.Conn
	cutCh chan struct{} // closed at the cut

	mu     sync.Mutex
	armed  bool
	after  int    // cut after this many ReadyForQuery
	seen   int    // ReadyForQuery read since armed
	header []byte // of the server message being read
	skip   int    // bytes of its body still to come
	cut    bool
}

// arm starts counting the server's messages; call it between round trips,
// at a message boundary.
func (c *cutConn) arm(after int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.armed, c.after = true, after
}

func (c *cutConn) isCut() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cut
}

func (c *cutConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.armed && !c.cut {
		c.scan(p[:n])
	}
	return n, err
}

// scan follows the server's messages (a type byte, a length that counts
// itself, the body) and cuts at the after-th ReadyForQuery ('Z').
func (c *cutConn) scan(b []byte) {
	for len(b) > 0 && !c.cut {
		if c.skip > 0 {
			n := min(c.skip, len(b))
			c.skip, b = c.skip-n, b[n:]
			continue
		}
		n := min(5-len(c.header), len(b))
		c.header, b = append(c.header, b[:n]...), b[n:]
		if len(c.header) < 5 {
			return
		}
		c.skip = int(binary.BigEndian.Uint32(c.header[1:])) - 4
		if c.header[0] == 'Z' {
			c.seen++
			if c.seen == c.after {
				c.cut = true
				close(c.cutCh)
			}
		}
		c.header = c.header[:0]
	}
}

func (c *cutConn) Write(p []byte) (int, error) {
	if c.isCut() {
		return len(p), nil // lost in the partition
	}
	return c.Conn.Write(p)
}

func (c *cutConn) Close() error {
	if c.isCut() {
		return nil // the FIN is lost too; the test's cleanup closes the socket
	}
	return c.Conn.Close()
}
