package docket

import "context"

// Store keeps the document service's objects: tenants and API keys (system
// scope) and, inside a tenant's transaction, documents, chunks, rate-limit
// windows and idempotency records. The PostgreSQL and SQLite drivers
// implement it on the same database as the job engine, so a document and its
// job commit together. Every implementation passes storetest.RunDocs.
//
// Tenant isolation has two walls: every statement of a [Tx] names its
// tenant, and on PostgreSQL row-level security (forced, a non-owner role,
// the tenant set per transaction) refuses the rows of any other tenant.
type Store interface {
	// Monitor reads the monitoring views (health.go).
	Monitor

	// TenantCreate stores a new tenant and returns it. A taken name or id
	// is ErrDuplicate; an invalid plan, concurrency or name ErrInvalid.
	TenantCreate(ctx context.Context, params *TenantCreateParams) (*Tenant, error)
	// TenantGet returns a tenant, or ErrNotFound.
	TenantGet(ctx context.Context, id string) (*Tenant, error)
	// TenantList returns tenants, oldest first (by CreatedAt, then id): a
	// page of them when params sets a Limit or a cursor, every one when
	// params is nil or zero. An unknown cursor is ErrNotFound; a negative
	// limit ErrInvalid.
	TenantList(ctx context.Context, params *TenantListParams) ([]*Tenant, error)
	// TenantUpdate changes a tenant and returns it, or ErrNotFound; a taken
	// name is ErrDuplicate, an invalid plan or concurrency ErrInvalid.
	TenantUpdate(ctx context.Context, params *TenantUpdateParams) (*Tenant, error)
	// TenantDelete deletes a tenant with its keys, documents and their
	// blobs, chunks, jobs, idempotency records, rate-limit slots and the
	// engine's rows of it, in batches (tenant_delete.go says how, and what
	// a deletion cut short leaves). On the id of a deletion cut short it
	// resumes it. An unknown tenant is ErrNotFound.
	TenantDelete(ctx context.Context, params *TenantDeleteParams) (*TenantDeleteResult, error)
	// TenantDeletionList returns the tenant deletions begun and not
	// finished (cut short, or running now), oldest first (by StartedAt,
	// then tenant id); params nil: every one. TenantDelete on each
	// finishes it.
	TenantDeletionList(ctx context.Context, params *TenantDeletionListParams) ([]*TenantDeletion, error)

	// APIKeyInsert stores a key (its id and hash). A taken id is
	// ErrDuplicate; an unknown tenant ErrNotFound.
	APIKeyInsert(ctx context.Context, key *APIKey) error
	// APIKeyGet returns a key by its public id (revoked and expired keys
	// too), or ErrNotFound.
	APIKeyGet(ctx context.Context, id string) (*APIKey, error)
	// APIKeyList returns a tenant's keys, oldest first.
	APIKeyList(ctx context.Context, tenantID string) ([]*APIKey, error)
	// APIKeyRevoke marks a key of the tenant revoked (now), or ErrNotFound.
	APIKeyRevoke(ctx context.Context, tenantID, id string) error

	// InTenant runs fn in a read-write transaction scoped to tenantID and
	// commits it when fn returns nil (rolls back otherwise, returning fn's
	// error). On SQLite it holds the store's only writer: keep it short.
	InTenant(ctx context.Context, tenantID string, fn func(tx Tx) error) error
	// ReadTenant runs fn in a read-only transaction scoped to tenantID; a
	// write inside it fails. On SQLite it does not wait for the writer.
	ReadTenant(ctx context.Context, tenantID string, fn func(tx Tx) error) error
}

// Tx is a transaction scoped to one tenant. Every method sees and changes
// only that tenant's rows: another tenant's object is ErrNotFound.
type Tx interface {
	// Native is the driver's transaction (pgx.Tx, *sql.Tx), for
	// queue.Client.EnqueueTx and queue.Task.CompleteTx.
	Native() any
	// TenantID is the tenant the transaction is scoped to.
	TenantID() string

	// DocumentInsert stores a new document of the tenant (doc.TenantID is
	// set to it; CreatedAt and UpdatedAt to now; the recorded status is
	// doc.Status, pending when empty). A taken id is ErrDuplicate.
	DocumentInsert(ctx context.Context, doc *Document) error
	// DocumentGet returns a document with its Status, or ErrNotFound.
	DocumentGet(ctx context.Context, id string) (*Document, error)
	// DocumentList returns documents, newest first (by CreatedAt, then id,
	// both descending).
	DocumentList(ctx context.Context, params *DocumentListParams) ([]*Document, error)
	// DocumentUpdate changes a document and returns it, or ErrNotFound.
	DocumentUpdate(ctx context.Context, params *DocumentUpdateParams) (*Document, error)
	// DocumentDelete deletes a document with its chunks and returns it as
	// it was (the caller deletes the blob after commit), or ErrNotFound.
	DocumentDelete(ctx context.Context, id string) (*Document, error)

	// ChunkReplace replaces all chunks of a document with chunks (TenantID
	// and DocumentID are set from the transaction and documentID). An
	// unknown document is ErrNotFound.
	ChunkReplace(ctx context.Context, documentID string, chunks []*Chunk) error
	// ChunkAppend adds chunks to a document's (TenantID and DocumentID set
	// as by ChunkReplace), so that a long document is saved in batches of
	// bounded size: ChunkReplace with the first batch, ChunkAppend with
	// the rest. An index the document has already is ErrDuplicate; an
	// unknown document is ErrNotFound.
	ChunkAppend(ctx context.Context, documentID string, chunks []*Chunk) error
	// ChunkDeleteIndexes deletes a document's chunks whose Index is in
	// [from, to), so that a part of a long document, whose chunks have
	// indexes of their own, is saved again without touching the others'.
	// An unknown document is ErrNotFound.
	ChunkDeleteIndexes(ctx context.Context, documentID string, from, to int) error
	// ChunkList returns a page of a document's chunks in order, without
	// vectors, or ErrNotFound for an unknown document.
	ChunkList(ctx context.Context, params *ChunkListParams) ([]*Chunk, error)
	// ChunkSearch returns the chunks matching params, best first (ties in
	// document and index order), with their documents' filenames. It reads
	// only what the lexical index matched, never every chunk of the tenant.
	ChunkSearch(ctx context.Context, params *ChunkSearchParams) ([]*SearchHit, error)

	// RateLimitTake takes a slot of the tenant's rolling window if one is
	// free (Allowed) and reports the window either way. Concurrent takes
	// never exceed the limit. Times come from the store's clock. A tenant
	// whose deletion has begun is ErrNotFound (no upload commits after it).
	RateLimitTake(ctx context.Context, params *RateLimitParams) (*RateLimit, error)
	// RateLimitPeek reports the window without taking a slot.
	RateLimitPeek(ctx context.Context, params *RateLimitParams) (*RateLimit, error)

	// IdempotencyGet returns the record of a key, or ErrNotFound.
	IdempotencyGet(ctx context.Context, key string) (*IdempotencyRecord, error)
	// IdempotencyInsert stores a record; a key already recorded is
	// ErrDuplicate (and the transaction is still usable on PostgreSQL only
	// if the driver used a savepoint; callers roll back on ErrDuplicate).
	IdempotencyInsert(ctx context.Context, rec *IdempotencyRecord) error
}
