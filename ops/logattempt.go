package ops

import (
	"context"
	"log/slog"

	"github.com/docketq/docket/queue"
)

// LogAttempts returns hooks that log one line per ended attempt (level
// info; warn for failed and lease-lost outcomes' errors), then call next's
// Finished: job_id, queue, kind, tenant_id, attempt, outcome, started_at
// and the error when there is one.
func LogAttempts(logger *slog.Logger, next queue.Hooks) queue.Hooks {
	h := next
	h.Finished = func(job *queue.Job, outcome queue.Outcome, err error) {
		level := slog.LevelInfo
		attrs := []slog.Attr{
			slog.Int64("job_id", job.ID), slog.String("queue", job.Queue), slog.String("kind", job.Kind),
			slog.String("tenant_id", job.TenantID), slog.Int("attempt", job.Attempt),
			slog.String("outcome", string(outcome)), slog.Time("started_at", job.StartedAt),
		}
		if err != nil {
			attrs = append(attrs, slog.String("error", err.Error()))
			if outcome == queue.OutcomeFailed {
				level = slog.LevelWarn
			}
		}
		logger.LogAttrs(context.Background(), level, "attempt ended", attrs...) // hooks carry no context
		if next.Finished != nil {
			next.Finished(job, outcome, err)
		}
	}
	return h
}
