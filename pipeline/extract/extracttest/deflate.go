package extracttest

import (
	"bytes"
	"encoding/binary"
)

// DeflateRepeat returns a raw DEFLATE stream (RFC 1951, one fixed-Huffman block) that inflates
// to n copies of c: one literal, then matches of length 258 at distance 1, 13 bits each, so
// about 160:1. It is built by repeating one byte-aligned period, so even a stream for
// gigabytes takes milliseconds.
func DeflateRepeat(c byte, n int64) []byte {
	w := &bitWriter{}
	w.bits(1, 1) // BFINAL
	w.bits(1, 2) // BTYPE = fixed Huffman
	if n > 0 {
		w.literal(c)
		n--
	}
	// Matches until the writer is byte aligned, then whole periods of 8 matches (13 bytes).
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
	w.code(0, 7) // end of block
	return w.flush()
}

// ZlibRepeat wraps DeflateRepeat in a zlib stream (RFC 1950), as PDF's FlateDecode expects.
func ZlibRepeat(c byte, n int64) []byte {
	out := append([]byte{0x78, 0x01}, DeflateRepeat(c, n)...)
	const mod = 65521
	un := uint64(n)
	a := (1 + un%mod*uint64(c)) % mod
	// b = Σ_{k=1..n} (1 + k·c) = n + c·n(n+1)/2, all mod 65521.
	tri := (un % (2 * mod)) * ((un + 1) % (2 * mod)) / 2 % mod
	b := (un%mod + uint64(c)*tri) % mod
	return binary.BigEndian.AppendUint32(out, uint32(b<<16|a))
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
