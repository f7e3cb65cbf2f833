package httpapi

import (
	"testing"

	"github.com/docketq/docket"
)

// TestWraparoundView: a slot and a prepared transaction show as objects
// with their ages; without them, null.
func TestWraparoundView(t *testing.T) {
	t.Parallel()
	w := docket.Wraparound{Database: "d", DatabaseAge: 10, OldestDatabase: "o", OldestDatabaseAge: 20}
	if v := newWraparoundView(w); v.ReplicationSlot != nil || v.PreparedTransaction != nil || v.OldestDatabaseAge != 20 {
		t.Errorf("without holders: %+v", *v)
	}
	w.Slot, w.SlotAge, w.PreparedGID, w.PreparedAge = "s", 5, "g", 3
	v := newWraparoundView(w)
	if s := v.ReplicationSlot; s == nil || *s != (XIDHolderView{Name: "s", XIDAge: 5}) {
		t.Errorf("replication_slot = %+v, want s, 5", s)
	}
	if p := v.PreparedTransaction; p == nil || *p != (XIDHolderView{Name: "g", XIDAge: 3}) {
		t.Errorf("prepared_transaction = %+v, want g, 3", p)
	}
}
