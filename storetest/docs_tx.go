package storetest

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/docketq/docket"
	"github.com/docketq/docket/queue"
)

func txChecks() []docCheck {
	return []docCheck{
		{"TenantIDAndNative", checkTxTenantNative},
		{"RollsBackOnError", checkTxRollback},
		{"ReadTenantSeesCommitted", checkReadCommitted},
		{"ReadTenantRefusesWrites", checkReadRefusesWrites},
		{"ReadTenantBesideWriter", checkReadBesideWriter},
	}
}

func checkTxTenantNative(f *docFixture) {
	tn := f.tenant("a")
	check := func(tx docket.Tx) error {
		if tx.TenantID() != tn.ID {
			return fmt.Errorf("TenantID() = %q, want %q", tx.TenantID(), tn.ID)
		}
		if tx.Native() == nil {
			return errors.New("Native() is nil")
		}
		if _, err := f.d.UnwrapTx(tx.Native()); err != nil {
			return fmt.Errorf("driver.UnwrapTx(Native()): %w", err)
		}
		return nil
	}
	f.write(tn.ID, check)
	f.read(tn.ID, check)
}

func checkTxRollback(f *docFixture) {
	tn := f.tenant("a")
	doc := f.newDoc("a.txt")
	rl := &docket.RateLimitParams{Limit: 2, Window: time.Hour}
	var job *queue.Job
	err := f.s.InTenant(f.ctx, tn.ID, func(tx docket.Tx) (err error) {
		if err = tx.DocumentInsert(f.ctx, doc); err != nil {
			return err
		}
		if job, err = f.enqueueDoc(tx, time.Time{}); err != nil {
			return err
		}
		if _, err = tx.RateLimitTake(f.ctx, rl); err != nil {
			return err
		}
		return fmt.Errorf("wrapped: %w", errBoom)
	})
	dWantErr(f.t, "InTenant with fn failing", err, errBoom)
	dWantErr(f.t, "DocumentGet(rolled back)", f.getDocErr(tn.ID, doc.ID), docket.ErrNotFound)
	if job != nil {
		if _, err := f.x.JobGet(f.ctx, job.ID); !errors.Is(err, queue.ErrNotFound) {
			f.t.Fatalf("JobGet of the job enqueued in the rolled-back transaction: %v, want ErrNotFound", err)
		}
	}
	if got := f.peek(tn.ID, rl); got.Remaining != 2 {
		f.t.Fatalf("rate-limit slot taken in a rolled-back transaction: Remaining %d, want 2", got.Remaining)
	}
}

func checkReadCommitted(f *docFixture) {
	tn := f.tenant("a")
	doc := f.insertDoc(tn.ID, "a.txt")
	f.replaceChunks(tn.ID, doc.ID, sampleChunks("m", 2, 2))
	f.wantDocIDs("DocumentList in ReadTenant", f.listDocs(tn.ID, &docket.DocumentListParams{}), doc.ID)
	if n := len(f.chunks(tn.ID, doc.ID)); n != 2 {
		f.t.Fatalf("ChunkList in ReadTenant: %d chunks, want 2", n)
	}
}

func checkReadRefusesWrites(f *docFixture) {
	tn := f.tenant("a")
	doc := f.newDoc("a.txt")
	var insertErr error
	_ = f.s.ReadTenant(f.ctx, tn.ID, func(tx docket.Tx) error {
		insertErr = tx.DocumentInsert(f.ctx, doc)
		return insertErr
	})
	if insertErr == nil {
		f.t.Fatal("DocumentInsert in ReadTenant succeeded; ReadTenant's transaction is read-only")
	}
	dWantErr(f.t, "DocumentGet after a write in ReadTenant", f.getDocErr(tn.ID, doc.ID), docket.ErrNotFound)
}

// checkReadBesideWriter reads while a write transaction is open: the read
// neither waits for it nor sees its uncommitted rows.
func checkReadBesideWriter(f *docFixture) {
	tn := f.tenant("a")
	old := f.insertDoc(tn.ID, "old.txt")
	doc := f.newDoc("new.txt")
	f.write(tn.ID, func(tx docket.Tx) error {
		if err := tx.DocumentInsert(f.ctx, doc); err != nil {
			return err
		}
		ctx, cancel := context.WithTimeout(f.ctx, waitTimeout)
		defer cancel()
		done := make(chan error, 1)
		go func() {
			done <- f.s.ReadTenant(ctx, tn.ID, func(rtx docket.Tx) error {
				docs, err := rtx.DocumentList(ctx, &docket.DocumentListParams{})
				if err != nil {
					return err
				}
				if len(docs) != 1 || docs[0].ID != old.ID {
					return fmt.Errorf("ReadTenant beside an open write sees %d documents, want only the committed one", len(docs))
				}
				return nil
			})
		}()
		select {
		case err := <-done:
			return err
		case <-ctx.Done():
			return errors.New("ReadTenant waited for the open write transaction")
		}
	})
}
