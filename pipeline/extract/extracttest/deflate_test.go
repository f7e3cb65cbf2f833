package extracttest

import (
	"bytes"
	"compress/flate"
	"compress/zlib"
	"io"
	"testing"
)

func TestDeflateRepeat(t *testing.T) {
	t.Parallel()
	for _, n := range []int64{0, 1, 2, 257, 258, 259, 1000, 8*258 + 5, 100_000, 1 << 20} {
		for _, c := range []byte{' ', 'a', 200} {
			got, err := io.ReadAll(flate.NewReader(bytes.NewReader(DeflateRepeat(c, n))))
			if err != nil || !bytes.Equal(got, bytes.Repeat([]byte{c}, int(n))) {
				t.Fatalf("DeflateRepeat(%d, %d): %d bytes, %v", c, n, len(got), err)
			}
			zr, err := zlib.NewReader(bytes.NewReader(ZlibRepeat(c, n)))
			if err != nil {
				t.Fatal(err)
			}
			if got, err = io.ReadAll(zr); err != nil || int64(len(got)) != n {
				t.Fatalf("ZlibRepeat(%d, %d): %d bytes, %v", c, n, len(got), err)
			}
		}
	}
}

func TestDeflateRepeat_Big(t *testing.T) {
	t.Parallel()
	const n = 1 << 30
	z := DeflateRepeat(' ', n)
	if len(z) > n/150 {
		t.Fatalf("1 GiB compresses to %d bytes", len(z))
	}
	m, err := io.Copy(io.Discard, io.LimitReader(flate.NewReader(bytes.NewReader(z)), 64<<20))
	if err != nil || m != 64<<20 {
		t.Fatalf("inflated %d, %v", m, err)
	}
}

func TestZlibStretches(t *testing.T) {
	t.Parallel()
	runs := []Stretch{{Text: "head (", Fill: 'T', N: 100_000}, {Text: ") mid ", Fill: 200, N: 3}, {Text: "tail"}, {Fill: ' ', N: 259}}
	var want bytes.Buffer
	for _, r := range runs {
		want.WriteString(r.Text)
		want.Write(bytes.Repeat([]byte{r.Fill}, int(r.N)))
	}
	zr, err := zlib.NewReader(bytes.NewReader(ZlibStretches(runs)))
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(zr) // checks the Adler-32 sum too
	if err != nil || !bytes.Equal(got, want.Bytes()) {
		t.Fatalf("ZlibStretches: %d bytes (want %d), %v", len(got), want.Len(), err)
	}
}
