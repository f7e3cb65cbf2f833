package docket

import (
	"context"
	"time"
)

// Deleting a tenant (Store.TenantDelete) happens in three steps, so that a
// large tenant never holds one long transaction and a deletion cut short
// (a crash, a blob store that fails) is finished by running it again:
//
//  1. The tombstone, one short transaction: the tenant's deletion is
//     recorded (a row that outlives the tenant), its API keys are deleted,
//     its running jobs are cancelled (their leases end: a running handler
//     sees its lease lost at its next heartbeat, and its completion is
//     fenced off) and the tenant is paused in every queue, so no job of it
//     starts again. From this commit on the tenant is gone to every reader
//     (TenantGet and TenantUpdate answer ErrNotFound, TenantList leaves it
//     out) and a tenant transaction's RateLimitTake (every upload takes
//     one) is ErrNotFound: uploads already committed are deleted below,
//     later ones are refused. On PostgreSQL the tombstone waits for the
//     uploads taking a slot at that moment to commit (it takes the same
//     lock they do).
//  2. The purge, in transactions of at most BatchSize rows each: the
//     documents (their blobs first, through DeleteBlobs, then the rows
//     with their chunks), the jobs with their attempts, the idempotency
//     records and the rate-limit slots.
//  3. The end, one transaction: the engine's rows of the tenant (claim
//     rows, freed slots, limits, pause, search configuration), the tenant
//     row itself, and the deletion is marked finished.
//
// A deletion cut short leaves the tombstone and part of the purge: the
// tenant cannot be used (no key, no upload, no job starts), and
// TenantDelete on its id resumes where it stopped (Resumed is set). Blobs
// are deleted before their rows, so a resumed deletion may pass a key
// whose blob is already gone: DeleteBlobs must accept it.
//
// Nothing but a caller resumes a deletion: TenantDeletionList names the
// deletions begun and not finished, and `docket serve` and `docket worker`
// finish them at startup (cmd/docket/tenants_resume.go). Two processes may
// resume the same deletion at once: every step deletes what is still there
// (a blob already gone is deleted, a row already gone is not counted), so
// the slower one finds less to do, ErrNotFound once the faster one has
// ended the deletion, or, while the other purges the same rows, an
// ErrConflict after its rounds, leaving the end to the other.

// DefaultTenantDeleteBatch is how many rows one transaction of a tenant's
// deletion deletes unless TenantDeleteParams says otherwise.
const DefaultTenantDeleteBatch = 500

// TenantDeleteParams deletes a tenant and everything it owns.
type TenantDeleteParams struct {
	// ID is the tenant's id.
	ID string
	// BatchSize is the most rows one transaction of the purge deletes
	// (documents, jobs, records); 0: DefaultTenantDeleteBatch.
	BatchSize int
	// DeleteBlobs deletes the blobs of a batch of documents (their
	// BlobKey, empty keys left out) before their rows are deleted. It must
	// treat a missing blob as deleted. Nil: the caller keeps no blobs.
	DeleteBlobs func(ctx context.Context, keys []string) error
	// Begun, when not nil, is called once the tombstone has committed
	// (before the purge): from then on the tenant's keys are gone, so the
	// caller ends what it holds of the tenant (cached keys, open streams)
	// without waiting for the purge.
	Begun func()
}

// TenantDeleteResult reports what one TenantDelete call deleted.
type TenantDeleteResult struct {
	// Resumed is set when an earlier deletion of the tenant had begun and
	// this call finished it.
	Resumed bool
	// Documents, Jobs and Records (idempotency records and rate-limit
	// slots) count the rows this call deleted.
	Documents, Jobs, Records int
}

// TenantDeletion is a tenant's deletion that has begun (its tombstone
// committed) and not finished.
type TenantDeletion struct {
	// TenantID is the tenant's id.
	TenantID string
	// StartedAt is when the tombstone committed.
	StartedAt time.Time
}

// TenantDeletionListParams lists the deletions begun and not finished.
type TenantDeletionListParams struct {
	// Limit is the most deletions returned, oldest first; 0: every one. A
	// negative limit is ErrInvalid.
	Limit int
}
