package extracttest

import (
	"bytes"
	"encoding/binary"
)

// DeflateRepeat returns a raw DEFLATE stream (RFC 1951, one fixed-Huffman block) that inflates
// to n copies of c: one literal, then matches of length 258 at distance 1, 13 bits each, so
// about 160:1. It is built by repeating one byte-aligned period, so even a stream for
// gigabytes takes milliseconds.
func DeflateRepeat(c byte, n int64) []byte { return deflateStretches([]Stretch{{Fill: c, N: n}}) }

// ZlibRepeat wraps DeflateRepeat in a zlib stream (RFC 1950), as PDF's FlateDecode expects.
func ZlibRepeat(c byte, n int64) []byte { return ZlibStretches([]Stretch{{Fill: c, N: n}}) }

// Stretch is a stretch of data to compress: Text, then N copies of Fill.
type Stretch struct {
	Text string
	Fill byte
	N    int64
}

// ZlibStretches returns a zlib stream (RFC 1950) of one fixed-Huffman DEFLATE block that inflates
// to the stretches in order; a stretch's copies cost 13 bits per 258 bytes, so a stream for gigabytes
// takes milliseconds to build.
func ZlibStretches(runs []Stretch) []byte {
	out := append([]byte{0x78, 0x01}, deflateStretches(runs)...)
	return binary.BigEndian.AppendUint32(out, adlerStretches(runs))
}

// deflateStretches returns the raw DEFLATE stream (RFC 1951) of the stretches.
func deflateStretches(runs []Stretch) []byte {
	w := &bitWriter{}
	w.bits(1, 1) // BFINAL
	w.bits(1, 2) // BTYPE = fixed Huffman
	for _, r := range runs {
		for i := range len(r.Text) {
			w.literal(r.Text[i])
		}
		w.repeat(r.Fill, r.N)
	}
	w.code(0, 7) // end of block
	return w.flush()
}

// adlerStretches returns the Adler-32 checksum of the stretches: appending n copies of c to data with sums
// (a, b) gives (a + n·c, b + n·a + c·n(n+1)/2), all mod 65521.
func adlerStretches(runs []Stretch) uint32 {
	const mod = 65521
	a, b := uint64(1), uint64(0)
	for _, r := range runs {
		for i := range len(r.Text) {
			a = (a + uint64(r.Text[i])) % mod
			b = (b + a) % mod
		}
		n, c := uint64(r.N), uint64(r.Fill)
		tri := (n % (2 * mod)) * ((n + 1) % (2 * mod)) / 2 % mod
		b = (b + n%mod*a + c*tri) % mod
		a = (a + n%mod*c) % mod
	}
	return uint32(b<<16 | a)
}

// repeat writes n copies of c: one literal, then matches of length 258 at distance 1 until
// the writer is byte aligned, then whole periods of 8 matches (13 bytes) copied at once.
func (w *bitWriter) repeat(c byte, n int64) {
	if n <= 0 {
		return
	}
	w.literal(c)
	n--
	for n >= 258 && w.nbits != 0 {
		w.match258()
		n -= 258
	}
	if periods := n / (8 * 258); periods > 0 && w.nbits == 0 {
		p := &bitWriter{}
		for range 8 {
			p.match258()
		}
		w.out = append(w.out, bytes.Repeat(p.out, int(periods))...)
		n -= periods * 8 * 258
	}
	for n >= 258 {
		w.match258()
		n -= 258
	}
	for ; n > 0; n-- {
		w.literal(c)
	}
}

// bitWriter writes DEFLATE's bit stream: values LSB first, Huffman codes MSB first.
type bitWriter struct {
	out   []byte
	acc   uint32
	nbits uint
}

func (w *bitWriter) bits(v uint32, n uint) {
	w.acc |= v << w.nbits
	w.nbits += n
	for w.nbits >= 8 {
		w.out = append(w.out, byte(w.acc))
		w.acc >>= 8
		w.nbits -= 8
	}
}

// code writes an n-bit Huffman code, most significant bit first.
func (w *bitWriter) code(c uint32, n uint) {
	var r uint32
	for i := uint(0); i < n; i++ {
		r = r<<1 | c>>i&1
	}
	w.bits(r, n)
}

func (w *bitWriter) literal(c byte) {
	if c < 144 {
		w.code(0x30+uint32(c), 8)
	} else {
		w.code(0x190+uint32(c-144), 9)
	}
}

// match258 writes length 258 (code 285) at distance 1 (distance code 0).
func (w *bitWriter) match258() {
	w.code(0xc5, 8)
	w.code(0, 5)
}

func (w *bitWriter) flush() []byte {
	if w.nbits > 0 {
		w.out = append(w.out, byte(w.acc))
		w.acc, w.nbits = 0, 0
	}
	return w.out
}
