package extracttest

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"slices"
)

// RawEntry is one entry of a hand-built ZIP: whatever RawZip is told, true or not.
type RawEntry struct {
	Name string
	// Data is written as is (stored, or already compressed when Method is 8).
	Data []byte
	// Method is 0 (store) or 8 (deflate).
	Method uint16
	// USize is the claimed uncompressed size (default len(Data) when stored).
	USize uint64
	// SharesWith, when ≥ 1, points this central-directory entry at the local header of the
	// entry with that 1-based index instead of writing its own (overlapping entries).
	SharesWith int
}

// RawZip builds a ZIP byte by byte. claim, when nonzero, is the entry count the end record
// claims; a claim over 65535 writes a ZIP64 end record for it.
func RawZip(entries []RawEntry, claim uint64) []byte {
	var out, cd bytes.Buffer
	le := binary.LittleEndian
	offsets := make([]uint32, len(entries))
	for i, e := range entries {
		usize := e.USize
		if usize == 0 && e.Method == 0 {
			usize = uint64(len(e.Data))
		}
		crc := crc32.ChecksumIEEE(e.Data)
		if e.SharesWith > 0 && e.SharesWith <= i {
			offsets[i] = offsets[e.SharesWith-1]
		} else {
			offsets[i] = uint32(out.Len())
			out.Write(le.AppendUint32(nil, 0x04034b50))
			writeFields(&out, 20, 0, e.Method, 0, 0)
			out.Write(le.AppendUint32(nil, crc))
			out.Write(le.AppendUint32(nil, uint32(len(e.Data))))
			out.Write(le.AppendUint32(nil, uint32(usize)))
			writeFields(&out, uint16(len(e.Name)), 0)
			out.WriteString(e.Name)
			out.Write(e.Data)
		}
		cd.Write(le.AppendUint32(nil, 0x02014b50))
		writeFields(&cd, 20, 20, 0, e.Method, 0, 0)
		cd.Write(le.AppendUint32(nil, crc))
		cd.Write(le.AppendUint32(nil, uint32(len(e.Data))))
		cd.Write(le.AppendUint32(nil, uint32(usize)))
		writeFields(&cd, uint16(len(e.Name)), 0, 0, 0, 0)
		cd.Write(le.AppendUint32(nil, 0))
		cd.Write(le.AppendUint32(nil, offsets[i]))
		cd.WriteString(e.Name)
	}
	cdOff := uint64(out.Len())
	out.Write(cd.Bytes())
	if claim == 0 {
		claim = uint64(len(entries))
	}
	writeEnd(&out, claim, uint64(cd.Len()), cdOff)
	return out.Bytes()
}

// writeEnd writes the end records: a ZIP64 pair first when the claim needs it.
func writeEnd(out *bytes.Buffer, claim, cdSize, cdOff uint64) {
	le := binary.LittleEndian
	count := uint16(claim)
	if claim > 0xffff {
		z64 := uint64(out.Len())
		out.Write(le.AppendUint32(nil, 0x06064b50))
		out.Write(le.AppendUint64(nil, 44))
		writeFields(out, 45, 45)
		out.Write(le.AppendUint32(nil, 0))
		out.Write(le.AppendUint32(nil, 0))
		for _, v := range []uint64{claim, claim, cdSize, cdOff} {
			out.Write(le.AppendUint64(nil, v))
		}
		out.Write(le.AppendUint32(nil, 0x07064b50))
		out.Write(le.AppendUint32(nil, 0))
		out.Write(le.AppendUint64(nil, z64))
		out.Write(le.AppendUint32(nil, 1))
		count = 0xffff
	}
	out.Write(le.AppendUint32(nil, 0x06054b50))
	writeFields(out, 0, 0, count, count)
	out.Write(le.AppendUint32(nil, uint32(cdSize)))
	out.Write(le.AppendUint32(nil, uint32(cdOff)))
	writeFields(out, 0)
}

func writeFields(b *bytes.Buffer, vs ...uint16) {
	for _, v := range vs {
		b.Write(binary.LittleEndian.AppendUint16(nil, v))
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
