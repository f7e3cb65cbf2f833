package blob_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/docketq/docket/blob"
)

func ExampleOpen() {
	dir, err := os.MkdirTemp("", "blobs")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)

	ctx := context.Background()
	// A path (or file:///path) is a local directory; s3://bucket/prefix?endpoint=... is S3.
	store, err := blob.Open(ctx, dir)
	if err != nil {
		panic(err)
	}
	key := "tenant-1/0192f8a4-7c1e-7b3a-9d2e-1f2a3b4c5d6e/original"
	n, err := store.Put(ctx, key, strings.NewReader("hello, blob"))
	if err != nil {
		panic(err)
	}
	rc, size, err := store.Open(ctx, key)
	if err != nil {
		panic(err)
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		panic(err)
	}
	fmt.Println(n, size, string(b))

	_, err = store.Put(ctx, "../etc/passwd", strings.NewReader("no"))
	fmt.Println(err)
	// Output:
	// 11 11 hello, blob
	// put blob: invalid blob key "../etc/passwd": byte '.' not allowed (only A-Z a-z 0-9 _ - and /)
}
