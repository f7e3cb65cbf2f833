package blob

import (
	"context"
	"fmt"

	"golang.org/x/sync/errgroup"
)

// deleteParallel is how many objects DeleteMany deletes at once.
const deleteParallel = 8

// DeleteMany deletes the objects of keys from s, a few at once (a tenant's
// deletion deletes its documents' blobs a batch at a time). Missing objects
// are not an error; the first error stops it and is returned.
func DeleteMany(ctx context.Context, s Store, keys []string) error {
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(deleteParallel)
	for _, k := range keys {
		g.Go(func() error {
			if err := s.Delete(ctx, k); err != nil {
				return fmt.Errorf("delete blob %s: %w", k, err)
			}
			return nil
		})
	}
	return g.Wait()
}
