package main

import (
	"context"
	"errors"
	"log/slog"

	"github.com/docketq/docket"
	"github.com/docketq/docket/blob"
)

// resumeTenantDeletions finishes the tenant deletions that were cut short
// (a crash, a blob store that failed: docket/tenant_delete.go), one after
// the other, deleting their blobs from blobs as a deletion through the
// admin API or `docket tenants delete` does. `docket serve` and `docket
// worker` run it in the background at startup and log each deletion.
//
// Every process that starts runs it: there is no claim, because a
// deletion is safe to run twice at once (every step deletes what is still
// there; storetest's TenantResume/ResumeTwiceAtOnce checks it on both
// stores), so two processes starting together only share the work, and a
// deletion running now in another process (an admin request) is finished
// by whichever gets there first. A deletion that fails again is logged and
// left for the next start or `docket tenants delete ID`; one stopped by
// shutdown likewise.
func resumeTenantDeletions(ctx context.Context, store docket.Store, blobs blob.Store, logger *slog.Logger) {
	pending, err := store.TenantDeletionList(ctx, nil)
	if err != nil {
		if ctx.Err() == nil {
			logger.Warn("tenant deletions cut short: cannot list them; they resume at the next start", "error", err)
		}
		return
	}
	for _, d := range pending {
		logger.Info("tenant deletion cut short: resuming it", "tenant", d.TenantID, "started_at", d.StartedAt)
		res, err := store.TenantDelete(ctx, &docket.TenantDeleteParams{
			ID:          d.TenantID,
			DeleteBlobs: func(ctx context.Context, keys []string) error { return blob.DeleteMany(ctx, blobs, keys) },
		})
		switch {
		case errors.Is(err, docket.ErrNotFound):
			logger.Info("tenant deletion finished by another process", "tenant", d.TenantID)
		case err != nil && ctx.Err() != nil:
			logger.Info("tenant deletion stopped by shutdown; it resumes at the next start", "tenant", d.TenantID)
			return
		case err != nil:
			logger.Warn("tenant deletion not finished; it resumes at the next start or with docket tenants delete",
				"tenant", d.TenantID, "error", err)
		default:
			logger.Info("tenant deletion finished", "tenant", d.TenantID,
				"documents", res.Documents, "jobs", res.Jobs, "records", res.Records)
		}
	}
}

// resumeDeletions runs resumeTenantDeletions on s's store and blobs, then
// waits for ctx to end: a component of serve (runComponents).
func (s *service) resumeDeletions(ctx context.Context) error {
	resumeTenantDeletions(ctx, s.store, s.blobs, s.logger)
	<-ctx.Done()
	return nil
}
