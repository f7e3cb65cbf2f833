package storetest

import (
	"fmt"
	"reflect"
	"time"

	"github.com/docketq/docket"
	"github.com/docketq/docket/queue"
)

func completeInTxChecks() []docCheck {
	return []docCheck{
		{"Commit", func(f *docFixture) { checkCompleteInTx(f, false) }},
		{"Rollback", func(f *docFixture) { checkCompleteInTx(f, true) }},
	}
}

// checkCompleteInTx completes a document's job in the transaction that
// stores its chunks and fields (exactly-once effects): after a commit both
// are visible, after fn fails neither is and the lease still holds.
func checkCompleteInTx(f *docFixture, fail bool) {
	tn := f.tenant("a")
	doc, _ := f.docWithJob(tn.ID, time.Time{})
	job := f.claimDoc()
	fields := sampleFields()
	err := f.s.InTenant(f.ctx, tn.ID, func(tx docket.Tx) error {
		x, err := f.d.UnwrapTx(tx.Native())
		if err != nil {
			return fmt.Errorf("UnwrapTx: %w", err)
		}
		if err := f.finishJob(x, job, queue.OutcomeCompleted); err != nil {
			return fmt.Errorf("JobFinish in the transaction: %w", err)
		}
		if err := tx.ChunkReplace(f.ctx, doc.ID, sampleChunks("m", 3, 2)); err != nil {
			return err
		}
		if _, err := tx.DocumentUpdate(f.ctx, &docket.DocumentUpdateParams{ID: doc.ID, Fields: fields}); err != nil {
			return err
		}
		if fail {
			return errBoom
		}
		return nil
	})
	if !fail {
		if err != nil {
			f.t.Fatalf("InTenant: %v", err)
		}
		got := f.getDoc(tn.ID, doc.ID)
		if got.Status != docket.StatusCompleted || !reflect.DeepEqual(got.Fields, fields) || len(f.chunks(tn.ID, doc.ID)) != 2 {
			f.t.Fatalf("after commit: Status %s, Fields %+v, %d chunks; want completed, the fields, 2 chunks",
				got.Status, got.Fields, len(f.chunks(tn.ID, doc.ID)))
		}
		return
	}
	dWantErr(f.t, "InTenant with fn failing", err, errBoom)
	got := f.getDoc(tn.ID, doc.ID)
	if got.Status != docket.StatusProcessing || got.Fields != nil || len(f.chunks(tn.ID, doc.ID)) != 0 {
		f.t.Fatalf("after rollback: Status %s, Fields %+v, %d chunks; want processing, nil, none",
			got.Status, got.Fields, len(f.chunks(tn.ID, doc.ID)))
	}
	if j, err := f.x.JobGet(f.ctx, job.ID); err != nil || j.State != queue.StateRunning {
		f.t.Fatalf("job after rollback: %v, %v; want running", j, err)
	}
	f.mustFinish(job, queue.OutcomeCompleted) // the lease survived the rollback
	f.wantStatus(tn.ID, doc.ID, docket.StatusCompleted)
}
