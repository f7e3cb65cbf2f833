package postgres

import (
	"context"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Why notifications are sent after commit
//
// A transaction that calls pg_notify takes one cluster-wide lock at commit
// and holds it until its commit record is flushed, so that notifications
// are queued in commit order. Every such transaction therefore waits for the
// WAL flush of the one before it: notifying commits lose group commit. When
// every enqueue, claim and finish notified in its own transaction, single-job
// enqueues on a durable server ran at 9-14 % of a bare insert's rate
// (docs/reliability.md, "Notify under durable commits"), and claims and finishes queued behind each
// other's flushes the same way.
//
// So the statements the driver runs in a transaction of its own (a worker's
// claims, batched finishes and progress writes; enqueues outside a caller's
// transaction; the tenant transactions of InTenant) do not notify
// themselves: once they have committed, they hand their notifications to
// the driver's postNotifier, which sends them in a transaction of its own.
// That transaction writes no WAL but its commit record, so PostgreSQL does
// not wait for a flush to commit it (as with synchronous_commit off): it
// holds the lock only while it queues its notifications. A notification is
// a hint (workers and streams also poll), so losing one to a server crash
// costs a poll interval, nothing else. While one send is in
// flight the next notifications accumulate, and the next send carries each
// distinct (channel, payload) once: under load a process sends about one
// notification transaction per round trip, whatever its commit rate.
//
// A caller's own pgx.Tx (Client.EnqueueTx, Task.CompleteTx on a transaction
// the driver did not open) still notifies inside the transaction: the
// driver cannot know when, or whether, it commits.

// note is one notification.
type note struct{ channel, payload string }

// postSQL sends a set of notifications in one statement's transaction.
const postSQL = `SELECT pg_notify(n.channel, n.payload) FROM unnest($1::text[], $2::text[]) AS n(channel, payload)`

// postTimeout bounds one send.
const postTimeout = 5 * time.Second

// postNotifier sends notifications after the transactions that caused them
// have committed, coalesced while a send is in flight. It starts a
// goroutine only while it has something to send.
type postNotifier struct {
	pool *pgxpool.Pool

	mu      sync.Mutex
	pending map[note]struct{}
	sending bool
	idle    *sync.Cond // signalled when sending turns false
}

func newPostNotifier(pool *pgxpool.Pool) *postNotifier {
	p := &postNotifier{pool: pool}
	p.idle = sync.NewCond(&p.mu)
	return p
}

// add queues notifications and starts a send unless one is in flight.
func (p *postNotifier) add(notes ...note) {
	if len(notes) == 0 {
		return
	}
	p.mu.Lock()
	if p.pending == nil {
		p.pending = make(map[note]struct{}, len(notes))
	}
	for _, n := range notes {
		p.pending[n] = struct{}{}
	}
	start := !p.sending
	p.sending = true
	p.mu.Unlock()
	if start {
		go p.run()
	}
}

// run sends what is pending until nothing is.
func (p *postNotifier) run() {
	for {
		p.mu.Lock()
		batch := p.pending
		p.pending = nil
		if len(batch) == 0 {
			p.sending = false
			p.idle.Broadcast()
			p.mu.Unlock()
			return
		}
		p.mu.Unlock()
		p.send(batch)
	}
}

// send runs postSQL once. A failure is dropped: listeners poll as well, and
// a notification sent later would tell them nothing the poll does not.
func (p *postNotifier) send(batch map[note]struct{}) {
	channels, payloads := make([]string, 0, len(batch)), make([]string, 0, len(batch))
	for n := range batch {
		channels, payloads = append(channels, n.channel), append(payloads, n.payload)
	}
	ctx, cancel := context.WithTimeout(context.Background(), postTimeout)
	defer cancel()
	rows, err := p.pool.Query(ctx, postSQL, channels, payloads)
	if err != nil {
		return
	}
	rows.Close()
}

// wait returns when no send is in flight.
func (p *postNotifier) wait() {
	p.mu.Lock()
	for p.sending {
		p.idle.Wait()
	}
	p.mu.Unlock()
}

// txNotes collects the notifications of a transaction the driver opened,
// for its opener to post once it has committed.
type txNotes struct {
	mu    sync.Mutex
	notes []note
}

func (t *txNotes) add(notes ...note) {
	t.mu.Lock()
	t.notes = append(t.notes, notes...)
	t.mu.Unlock()
}

func (t *txNotes) take() []note {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := t.notes
	t.notes = nil
	return n
}

// notesOf maps the transactions InTenant opened to their notes, so that an
// executor bound to one by UnwrapTx defers its notifications to the commit.
type notesOf struct{ m sync.Map } // pgx.Tx → *txNotes

func (n *notesOf) open(tx pgx.Tx) *txNotes {
	t := &txNotes{}
	n.m.Store(tx, t)
	return t
}

func (n *notesOf) close(tx pgx.Tx) { n.m.Delete(tx) }

func (n *notesOf) lookup(tx pgx.Tx) *txNotes {
	if t, ok := n.m.Load(tx); ok {
		return t.(*txNotes)
	}
	return nil
}

// notify makes the notifications of a statement e just ran (or, for
// notesAfter, is about to run): bound to a caller's transaction, pg_notify
// in it, delivered at its commit; bound to a transaction the driver opened,
// collected for its commit; on the pool, the statement has committed, so
// they are posted now.
func (e *Executor) notify(ctx context.Context, notes ...note) error {
	switch {
	case len(notes) == 0:
		return nil
	case e.notes != nil:
		e.notes.add(notes...)
		return nil
	case e.tx != nil:
		channels, payloads := make([]string, len(notes)), make([]string, len(notes))
		for i, n := range notes {
			channels[i], payloads[i] = n.channel, n.payload
		}
		_, err := e.tx.Exec(ctx, postSQL, channels, payloads)
		return err
	default:
		e.post.add(notes...)
		return nil
	}
}

// notifiesInline reports whether e's statements must call pg_notify
// themselves: e is bound to a caller's transaction.
func (e *Executor) notifiesInline() bool { return e.tx != nil && e.notes == nil }

// queueNotes returns one note on channel per distinct queue.
func queueNotes(channel string, queues ...string) []note {
	notes := make([]note, 0, 1)
	for _, q := range queues {
		n := note{channel, q}
		dup := false
		for _, m := range notes {
			if m == n {
				dup = true
				break
			}
		}
		if !dup {
			notes = append(notes, n)
		}
	}
	return notes
}

// NotifyAfterCommit is for code that shares the engine's database and runs
// the engine's statements in transactions of its own (a document store:
// queue.Client.EnqueueTx and queue.Task.CompleteTx on a pgx.Tx it began on
// Pool). It registers tx, so that the statements of executors bound to it
// by UnwrapTx collect their notifications instead of calling pg_notify in
// tx, whose commit would then hold PostgreSQL's notify lock through its
// WAL flush (see notify_post.go). Call end exactly once, after tx has
// ended: end(true) once it has committed sends the notifications after
// it, end(false) drops them.
func (d *Driver) NotifyAfterCommit(tx pgx.Tx) (end func(committed bool)) {
	notes := d.txNotes.open(tx)
	return func(committed bool) {
		d.txNotes.close(tx)
		if committed {
			d.post.add(notes.take()...)
		}
	}
}
