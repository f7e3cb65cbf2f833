package driver

import "context"

type backgroundKey struct{}

// WithBackgroundWrites returns a context whose write transactions are
// background work (a long document's chunks, saved batch after batch): a
// driver whose writes take turns on one writer (SQLite) lets every other
// waiting write go first, for a bounded time. A driver whose transactions
// run at once (PostgreSQL) ignores it.
func WithBackgroundWrites(ctx context.Context) context.Context {
	return context.WithValue(ctx, backgroundKey{}, true)
}

// BackgroundWrites reports whether ctx's writes are background work
// (WithBackgroundWrites).
func BackgroundWrites(ctx context.Context) bool {
	b, _ := ctx.Value(backgroundKey{}).(bool)
	return b
}
