package blob_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/docketq/docket/blob"
)

// DeleteMany deletes every key given, missing ones included, and leaves
// the others.
func TestDeleteMany(t *testing.T) {
	t.Parallel()
	s, err := blob.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for i := range 20 {
		k := fmt.Sprintf("t/doc-%02d", i)
		if _, err := s.Put(t.Context(), k, strings.NewReader("x")); err != nil {
			t.Fatal(err)
		}
		keys = append(keys, k)
	}
	if err := blob.DeleteMany(t.Context(), s, append(keys[:15:15], "t/never-written")); err != nil {
		t.Fatalf("DeleteMany: %v", err)
	}
	for i, k := range keys {
		_, err := s.Stat(t.Context(), k)
		if gone := errors.Is(err, blob.ErrNotFound); gone != (i < 15) {
			t.Errorf("%s: Stat %v, want deleted %v", k, err, i < 15)
		}
	}
}
