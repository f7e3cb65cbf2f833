package httpapi_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/docketq/docket"
)

// TestUpload_JobCost: an upload's job declares the document's cost in the
// queue's fair shares, one per 64 KiB started (docket.DocumentCost).
func TestUpload_JobCost(t *testing.T) {
	t.Parallel()
	e := newAdminEnv(t, nil)
	ct := e.createTenant("acme", nil)
	for _, size := range []int{5, 200 << 10} {
		_, jv := e.upload(ct.APIKey, "a.txt", []byte(strings.Repeat("a", size)))
		id, err := strconv.ParseInt(jv.ID, 10, 64)
		if err != nil {
			t.Fatalf("job id %q: %v", jv.ID, err)
		}
		j, err := e.driver.Executor().JobGet(e.ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if want := docket.DocumentCost(int64(size)); j.Cost != want || want != max(1, (size+64<<10-1)/(64<<10)) {
			t.Errorf("upload of %d bytes: job cost %d, want %d", size, j.Cost, want)
		}
	}
}
