package pgstore

import (
	"context"

	"github.com/docketq/docket"
)

// Wraparound reads the transaction-id ages of the database and the cluster
// and what holds them back (postgres.Driver.Wraparound), for the health
// readers that see the store only.
func (s *Store) Wraparound(ctx context.Context) (docket.Wraparound, error) {
	w, err := s.d.Wraparound(ctx)
	return docket.Wraparound(w), err
}
