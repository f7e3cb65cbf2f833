package queue

import (
	"context"

	"github.com/docketq/docket/queue/driver"
)

// WithBackgroundWrites returns a context whose store writes are background
// work, such as a long document's results saved batch after batch: on a
// store whose writes take turns on one writer (SQLite), every other
// waiting write (a request's, a heartbeat) goes first, for at most a
// fifth of a second. PostgreSQL, whose transactions run at once, ignores
// it.
func WithBackgroundWrites(ctx context.Context) context.Context {
	return driver.WithBackgroundWrites(ctx)
}
