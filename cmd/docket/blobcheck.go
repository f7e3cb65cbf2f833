package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/google/uuid"

	"github.com/docketq/docket/blob"
)

// blobCheckTimeout bounds the start-up check of the blob store.
const blobCheckTimeout = 30 * time.Second

// checkBlobs writes, reads back and deletes a small object, so that a
// process that cannot reach its blob store (a wrong bucket or endpoint, no
// credentials, a directory it may not write) says so at start rather than
// failing every document later.
func checkBlobs(ctx context.Context, blobs blob.Store, where string) (err error) {
	ctx, cancel := context.WithTimeout(ctx, blobCheckTimeout)
	defer cancel()
	key := "_docket-check/" + uuid.NewString()
	want := []byte("docket blob store check " + key)
	defer func() {
		if err != nil {
			err = fmt.Errorf("blob store %s: cannot be used: %w (set --blob-url or DOCKET_BLOB_URL)", redact(where), err)
		}
	}()
	if _, err := blobs.Put(ctx, key, bytes.NewReader(want)); err != nil {
		return fmt.Errorf("write: %w", err)
	}
	rc, _, err := blobs.Open(ctx, key)
	if err != nil {
		return errors.Join(fmt.Errorf("read: %w", err), blobs.Delete(context.WithoutCancel(ctx), key))
	}
	got, err := io.ReadAll(rc)
	err = errors.Join(err, rc.Close())
	if err == nil && !bytes.Equal(got, want) {
		err = errors.New("an object read back differs from the one written")
	}
	if err != nil {
		return errors.Join(fmt.Errorf("read: %w", err), blobs.Delete(context.WithoutCancel(ctx), key))
	}
	if err := blobs.Delete(ctx, key); err != nil {
		return fmt.Errorf("delete: %w", err)
	}
	return nil
}

// warnLocalBlobs warns when a worker on PostgreSQL keeps blobs in a local
// directory: the API servers and workers of other hosts do not see it, and
// the documents uploaded there fail here with "blob not found".
func warnLocalBlobs(logger *slog.Logger, sf *storeFlags, blobs blob.Store) {
	local, ok := blobs.(*blob.Local)
	if !ok || !isPostgres(sf.databaseURL) {
		return
	}
	logger.Warn("BLOB STORE IS A LOCAL DIRECTORY: servers and workers on other hosts cannot read it, "+
		"and documents uploaded through them fail here with \"blob not found\"; "+
		"give every server and worker one shared store, e.g. --blob-url s3://bucket?endpoint=... "+
		"(README: several hosts)", "blob_dir", local.Root())
}
