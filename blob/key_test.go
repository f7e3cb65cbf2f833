package blob_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/docketq/docket/blob"
	"github.com/docketq/docket/blob/blobtest"
)

func TestCheckKey(t *testing.T) {
	t.Parallel()
	valid := []string{
		"a", "A-Z_0-9", "tenant-1/0192f8a4-7c1e-7b3a-9d2e-1f2a3b4c5d6e/0192f8a4-7c1e-7b3a-9d2e-1f2a3b4c5d6f",
		strings.Repeat("a", blob.MaxSegmentLen), strings.Repeat("a/", blob.MaxKeyLen/2-1) + "aa",
	}
	for _, key := range valid {
		if err := blob.CheckKey(key); err != nil {
			t.Errorf("CheckKey(%q) = %v, want nil", key, err)
		}
	}
	for _, key := range blobtest.InvalidKeys {
		if err := blob.CheckKey(key); !errors.Is(err, blob.ErrInvalidKey) {
			t.Errorf("CheckKey(%q) = %v, want ErrInvalidKey", key, err)
		}
	}
}
