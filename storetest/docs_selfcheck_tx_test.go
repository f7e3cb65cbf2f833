package storetest

import (
	"context"
	"errors"
	"math"
	"slices"

	"github.com/docketq/docket"
)

// brokenTx is a real transaction with its store's bug.
type brokenTx struct {
	docket.Tx
	s *brokenStore
}

func (tx *brokenTx) DocumentList(ctx context.Context, p *docket.DocumentListParams) ([]*docket.Document, error) {
	if tx.s.bug == "list ignores status" {
		q := *p
		q.Status = ""
		return tx.Tx.DocumentList(ctx, &q)
	}
	return tx.Tx.DocumentList(ctx, p)
}

func (tx *brokenTx) DocumentGet(ctx context.Context, id string) (*docket.Document, error) {
	doc, err := tx.Tx.DocumentGet(ctx, id)
	switch {
	case errors.Is(err, docket.ErrNotFound) && tx.s.bug == "get leaks tenants":
		err = tx.s.otherTenants(ctx, tx.TenantID(), func(other docket.Tx) error {
			if d, e := other.DocumentGet(ctx, id); e == nil {
				doc = d
			}
			return nil
		})
		if doc == nil && err == nil {
			err = docket.ErrNotFound
		}
	case err == nil && tx.s.bug == "status ignores job":
		doc.Status = docket.StatusPending // as if the job's state were never read
	case err == nil && tx.s.bug == "recorded status wins":
		if st, ok := tx.s.recorded.Load(id); ok {
			doc.Status = st.(docket.DocumentStatus)
		}
	}
	return doc, err
}

func (tx *brokenTx) DocumentUpdate(ctx context.Context, p *docket.DocumentUpdateParams) (*docket.Document, error) {
	doc, err := tx.Tx.DocumentUpdate(ctx, p)
	if err == nil && p.Status != nil {
		tx.s.recorded.Store(p.ID, *p.Status)
	}
	return doc, err
}

func (tx *brokenTx) ChunkList(ctx context.Context, p *docket.ChunkListParams) ([]*docket.Chunk, error) {
	cs, err := tx.Tx.ChunkList(ctx, p)
	if tx.s.bug == "chunks unordered" {
		slices.Reverse(cs)
	}
	return cs, err
}

func (tx *brokenTx) ChunkSearch(ctx context.Context, p *docket.ChunkSearchParams) ([]*docket.SearchHit, error) {
	hits, err := tx.Tx.ChunkSearch(ctx, p)
	if err != nil {
		return nil, err
	}
	switch tx.s.bug {
	case "vectors lossy":
		for _, h := range hits {
			for i, x := range h.Chunk.Vector {
				h.Chunk.Vector[i] = float32(math.Round(float64(x)*1e6) / 1e6) // a six-digit text encoding
			}
		}
	case "search leaks tenants":
		err = tx.s.otherTenants(ctx, tx.TenantID(), func(other docket.Tx) error {
			more, err := other.ChunkSearch(ctx, p)
			hits = append(hits, more...)
			return err
		})
	}
	return hits, err
}

func (tx *brokenTx) RateLimitPeek(ctx context.Context, p *docket.RateLimitParams) (*docket.RateLimit, error) {
	if tx.s.bug == "peek takes" {
		rl, err := tx.Tx.RateLimitTake(ctx, p)
		if rl != nil {
			rl.Allowed = false
		}
		return rl, err
	}
	return tx.Tx.RateLimitPeek(ctx, p)
}

func (tx *brokenTx) RateLimitTake(ctx context.Context, p *docket.RateLimitParams) (*docket.RateLimit, error) {
	rl, err := tx.Tx.RateLimitTake(ctx, p)
	if err == nil && tx.s.bug == "take always allowed" && !rl.Allowed {
		rl.Allowed, rl.RetryAfter = true, 0
	}
	return rl, err
}

func (tx *brokenTx) IdempotencyInsert(ctx context.Context, rec *docket.IdempotencyRecord) error {
	err := tx.Tx.IdempotencyInsert(ctx, rec)
	if tx.s.bug == "idempotency duplicates" && errors.Is(err, docket.ErrDuplicate) {
		return nil
	}
	return err
}
