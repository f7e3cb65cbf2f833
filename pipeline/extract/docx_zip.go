package extract

import (
	"archive/zip"
	"bufio"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"strings"
)

// docxMainPart is the part that makes a ZIP a Word document.
const docxMainPart = "word/document.xml"

// InspectDOCX checks that the ZIP archive in r (size bytes) is a DOCX this package will open:
// a sane archive (entry count, per-entry and total uncompressed sizes and compression ratios
// within DOCXLimits defaults, no overlapping entries, no duplicate names, no absolute or ".."
// names) holding word/document.xml. It reads only the central directory and the local headers:
// a bounded number of bytes whatever the archive claims. Errors: ErrUnsupported (not a ZIP, or
// no word/document.xml), ErrTooLarge, ErrMalformed.
func InspectDOCX(r io.ReaderAt, size int64) error {
	_, _, err := inspectDOCX(r, size, DOCXLimits{}.withDefaults())
	return err
}

// inspectDOCX is InspectDOCX with explicit limits; it returns the opened archive and its main part.
func inspectDOCX(r io.ReaderAt, size int64, lim DOCXLimits) (*zip.Reader, *zip.File, error) {
	entries, err := countEntries(r, size, lim.MaxEntries)
	if err != nil {
		return nil, nil, err
	}
	if entries > uint64(lim.MaxEntries) {
		return nil, nil, fmt.Errorf("docx: %d entries > cap %d: %w", entries, lim.MaxEntries, ErrTooLarge)
	}
	zr, err := zip.NewReader(r, size)
	if err != nil {
		return nil, nil, fmt.Errorf("docx: zip: %w: %w", err, ErrMalformed)
	}
	if len(zr.File) > lim.MaxEntries {
		return nil, nil, fmt.Errorf("docx: %d entries > cap %d: %w", len(zr.File), lim.MaxEntries, ErrTooLarge)
	}
	main, err := checkEntries(zr.File, lim)
	if err != nil {
		return nil, nil, err
	}
	if err := checkOverlap(zr.File, size); err != nil {
		return nil, nil, err
	}
	if main == nil {
		return nil, nil, fmt.Errorf("docx: no %s: %w", docxMainPart, ErrUnsupported)
	}
	if main.Method != zip.Store && main.Method != zip.Deflate {
		return nil, nil, fmt.Errorf("docx: compression method %d: %w", main.Method, ErrUnsupported)
	}
	return zr, main, nil
}

// checkEntries vets every entry's name and claimed sizes and returns the main part, if any.
func checkEntries(files []*zip.File, lim DOCXLimits) (*zip.File, error) {
	seen := make(map[string]struct{}, len(files))
	var total uint64
	var main *zip.File
	for _, f := range files {
		if !safeZipName(f.Name) {
			return nil, fmt.Errorf("docx: unsafe entry name %q: %w", f.Name, ErrMalformed)
		}
		if _, dup := seen[f.Name]; dup {
			return nil, fmt.Errorf("docx: duplicate entry %q: %w", f.Name, ErrMalformed)
		}
		seen[f.Name] = struct{}{}
		u, c := f.UncompressedSize64, f.CompressedSize64
		if u > uint64(lim.MaxEntrySize) {
			return nil, fmt.Errorf("docx: entry %q claims %d bytes > cap %d: %w", f.Name, u, lim.MaxEntrySize, ErrTooLarge)
		}
		if u > 1<<20 && u/uint64(lim.MaxRatio) > c {
			return nil, fmt.Errorf("docx: entry %q compression ratio over %d: %w", f.Name, lim.MaxRatio, ErrTooLarge)
		}
		if total += u; total > uint64(lim.MaxTotalSize) {
			return nil, fmt.Errorf("docx: entries claim over %d bytes: %w", lim.MaxTotalSize, ErrTooLarge)
		}
		if f.Name == docxMainPart {
			main = f
		}
	}
	return main, nil
}

// safeZipName accepts relative slash-separated names without "." or ".." elements, backslashes,
// drive letters or NULs ("word/", a directory, is fine).
func safeZipName(name string) bool {
	if strings.ContainsAny(name, "\\:\x00") {
		return false
	}
	return fs.ValidPath(strings.TrimSuffix(name, "/"))
}

// checkOverlap rejects archives whose entries' data overlap or run past the end (the
// overlapping-entry zip bomb). It reads each entry's local header, 30 bytes, once.
func checkOverlap(files []*zip.File, size int64) error {
	type span struct{ start, end int64 }
	spans := make([]span, 0, len(files))
	for _, f := range files {
		off, err := f.DataOffset()
		if err != nil {
			return fmt.Errorf("docx: entry %q: %w: %w", f.Name, err, ErrMalformed)
		}
		end := off + int64(f.CompressedSize64)
		if f.CompressedSize64 > uint64(size) || end > size {
			return fmt.Errorf("docx: entry %q runs past the end: %w", f.Name, ErrMalformed)
		}
		spans = append(spans, span{off, end})
	}
	slices.SortFunc(spans, func(a, b span) int { return cmp.Compare(a.start, b.start) })
	for i := 1; i < len(spans); i++ {
		if spans[i].start < spans[i-1].end {
			return fmt.Errorf("docx: overlapping entries: %w", ErrMalformed)
		}
	}
	return nil
}

// ZIP end-of-central-directory records (APPNOTE 4.3.12–4.3.16).
const (
	eocdSig     = 0x06054b50
	eocdLen     = 22
	zip64LocSig = 0x07064b50
	zip64LocLen = 20
	zip64EndSig = 0x06064b50
	zip64EndLen = 56
	eocdWindow  = eocdLen + 0xffff
	cdHeaderSig = 0x02014b50
	cdHeaderLen = 46
)

// zipEnd is what an archive's end record claims.
type zipEnd struct {
	entries, cdSize, cdOffset uint64
	pos                       int64 // where the (ZIP64) end record starts
}

// countEntries returns the number of entries the archive claims and holds, reading at most
// limit+1 central-directory headers: archive/zip reads headers until a bad one, whatever the
// end record claims, so a directory of millions of real entries must be stopped before it.
// Not a ZIP at all is ErrUnsupported.
func countEntries(r io.ReaderAt, size int64, limit int) (uint64, error) {
	end, err := readZipEnd(r, size)
	if err != nil || end.entries > uint64(limit) {
		return end.entries, err
	}
	// archive/zip looks at the claimed offset, or where the directory would be if data was
	// prepended to the archive; count at both.
	n := countHeaders(r, size, int64(min(end.cdOffset, uint64(size))), limit)
	if alt := end.pos - int64(min(end.cdSize, uint64(size))); alt >= 0 && alt != int64(end.cdOffset) {
		n = max(n, countHeaders(r, size, alt, limit))
	}
	return max(uint64(n), end.entries), nil
}

// countHeaders walks central-directory headers from start and returns how many it found,
// stopping past limit.
func countHeaders(r io.ReaderAt, size, start int64, limit int) int {
	br := bufio.NewReaderSize(io.NewSectionReader(r, start, size-start), 4096)
	var h [cdHeaderLen]byte
	le := binary.LittleEndian
	n := 0
	for ; n <= limit; n++ {
		if _, err := io.ReadFull(br, h[:]); err != nil || le.Uint32(h[:]) != cdHeaderSig {
			break
		}
		skip := int(le.Uint16(h[28:])) + int(le.Uint16(h[30:])) + int(le.Uint16(h[32:]))
		if _, err := br.Discard(skip); err != nil {
			break
		}
	}
	return n
}

// readZipEnd finds and reads the end record, and its ZIP64 twin when the classic one says so.
func readZipEnd(r io.ReaderAt, size int64) (zipEnd, error) {
	if size < eocdLen {
		return zipEnd{}, fmt.Errorf("docx: %d bytes is no zip: %w", size, ErrUnsupported)
	}
	start := max(size-eocdWindow, 0)
	buf := make([]byte, size-start)
	if _, err := r.ReadAt(buf, start); err != nil && !errors.Is(err, io.EOF) {
		return zipEnd{}, fmt.Errorf("docx: read end record: %w", err)
	}
	p := findEOCD(buf)
	if p < 0 {
		return zipEnd{}, fmt.Errorf("docx: no zip end record: %w", ErrUnsupported)
	}
	le := binary.LittleEndian
	end := zipEnd{
		entries:  uint64(le.Uint16(buf[p+10:])),
		cdSize:   uint64(le.Uint32(buf[p+12:])),
		cdOffset: uint64(le.Uint32(buf[p+16:])),
		pos:      start + int64(p),
	}
	if end.entries != 0xffff && end.cdSize != 0xffffffff && end.cdOffset != 0xffffffff {
		return end, nil
	}
	return readZip64End(r, end.pos, size)
}

// findEOCD returns the offset in b of the last end record whose comment fits, or -1.
func findEOCD(b []byte) int {
	for i := len(b) - eocdLen; i >= 0; i-- {
		if binary.LittleEndian.Uint32(b[i:]) != eocdSig {
			continue
		}
		if n := int(binary.LittleEndian.Uint16(b[i+20:])); i+eocdLen+n <= len(b) {
			return i
		}
	}
	return -1
}

// readZip64End reads the ZIP64 end record, located through the locator just before the
// classic end record at eocd.
func readZip64End(r io.ReaderAt, eocd, size int64) (zipEnd, error) {
	bad := func(what string) (zipEnd, error) {
		return zipEnd{}, fmt.Errorf("docx: zip64 %s: %w", what, ErrMalformed)
	}
	var loc [zip64LocLen]byte
	if eocd < zip64LocLen {
		return bad("locator missing")
	}
	if _, err := r.ReadAt(loc[:], eocd-zip64LocLen); err != nil {
		return bad("locator unreadable")
	}
	le := binary.LittleEndian
	if le.Uint32(loc[:]) != zip64LocSig {
		return bad("locator missing")
	}
	off := le.Uint64(loc[8:])
	if size < zip64EndLen || off > uint64(size-zip64EndLen) {
		return bad("end record out of range")
	}
	var rec [zip64EndLen]byte
	if _, err := r.ReadAt(rec[:], int64(off)); err != nil || le.Uint32(rec[:]) != zip64EndSig {
		return bad("end record unreadable")
	}
	return zipEnd{entries: le.Uint64(rec[32:]), cdSize: le.Uint64(rec[40:]), cdOffset: le.Uint64(rec[48:]), pos: int64(off)}, nil
}
