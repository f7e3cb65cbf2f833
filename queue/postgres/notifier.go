package postgres

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgconn/ctxwatch"

	"github.com/docketq/docket/queue/driver"
)

var _ driver.Notifier = (*Notifier)(nil)

// Reconnection backoff and liveness check of the listening connection.
const (
	backoffStart = 50 * time.Millisecond
	backoffMax   = 2 * time.Second
	// idlePing is how long the connection may be silent before a ping
	// checks it (a connection cut without a reset never errors by itself).
	idlePing    = 15 * time.Second
	pingTimeout = 5 * time.Second
)

var topicRE = regexp.MustCompile(`^[a-z_][a-z0-9_]{0,62}$`)

// Notifier delivers PostgreSQL notifications (LISTEN) on a dedicated
// connection configured like the driver's pool.
type Notifier struct {
	config *pgx.ConnConfig
}

// Listen delivers every notification on topics to fn until ctx ends, then
// returns nil. On a connection error it reconnects with exponential
// backoff (50ms doubling to 2s) and listens again; notifications sent
// while disconnected are lost, as hints may be. It returns an error only
// for an invalid topic.
func (n *Notifier) Listen(ctx context.Context, topics []string, fn func(topic, payload string)) error {
	for _, t := range topics {
		if !topicRE.MatchString(t) {
			return fmt.Errorf("%w: topic %q", driver.ErrInvalid, t)
		}
	}
	backoff := backoffStart
	for {
		listened, _ := n.listenOnce(ctx, topics, fn)
		if ctx.Err() != nil {
			return nil
		}
		if listened {
			backoff = backoffStart
		}
		t := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-t.C:
		}
		backoff = min(2*backoff, backoffMax)
	}
}

// listenOnce connects, listens and delivers until the connection fails or
// ctx ends. listened reports whether LISTEN succeeded.
func (n *Notifier) listenOnce(ctx context.Context, topics []string, fn func(topic, payload string)) (listened bool, err error) {
	cfg := n.config.Copy()
	// On a timeout just interrupt the read: the connection stays usable
	// (the default sends a cancel request over a new connection).
	cfg.BuildContextWatcherHandler = func(c *pgconn.PgConn) ctxwatch.Handler {
		return &pgconn.DeadlineContextWatcherHandler{Conn: c.Conn()}
	}
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return false, err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	for _, t := range topics {
		if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{t}.Sanitize()); err != nil {
			return false, err
		}
	}
	for {
		wctx, cancel := context.WithTimeout(ctx, idlePing)
		note, err := conn.WaitForNotification(wctx)
		cancel()
		switch {
		case err == nil:
			fn(note.Channel, note.Payload)
		case ctx.Err() != nil:
			return true, ctx.Err()
		case errors.Is(err, context.DeadlineExceeded) && !conn.IsClosed():
			if err := ping(ctx, conn); err != nil {
				return true, err
			}
		default:
			return true, err
		}
	}
}

func ping(ctx context.Context, conn *pgx.Conn) error {
	ctx, cancel := context.WithTimeout(ctx, pingTimeout)
	defer cancel()
	return conn.Ping(ctx)
}
