package extract_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/docketq/docket/pipeline/extract"
	xt "github.com/docketq/docket/pipeline/extract/extracttest"
)

// TestExtract_PDFPageRange extracts ranges of a 7-page PDF: each holds its
// pages only, under their real numbers, with the text a whole extraction
// gives them, progress counts the range's pages, and PageCount is the
// document's.
func TestExtract_PDFPageRange(t *testing.T) {
	t.Parallel()
	data := xt.ProsePDF(7).Bytes()
	whole, err := extractBytes(t, extract.TypePDF, data, extract.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if whole.PageCount != 7 || len(whole.Pages) != 7 {
		t.Fatalf("whole: PageCount %d, %d pages", whole.PageCount, len(whole.Pages))
	}
	for _, tc := range []struct {
		r      extract.PageRange
		first  int // the first page's number; 0: no page
		npages int
	}{
		{extract.PageRange{First: 3, Last: 5}, 3, 3},
		{extract.PageRange{First: 1, Last: 1}, 1, 1},
		{extract.PageRange{First: 6}, 6, 2},           // to the end
		{extract.PageRange{First: 5, Last: 40}, 5, 3}, // stops at the end
		{extract.PageRange{Last: 2}, 1, 2},
		{extract.PageRange{First: 9, Last: 12}, 0, 0}, // past the end
	} {
		t.Run(fmt.Sprintf("%d-%d", tc.r.First, tc.r.Last), func(t *testing.T) {
			t.Parallel()
			var last [2]int
			doc, err := extractBytes(t, extract.TypePDF, data, extract.Options{Pages: tc.r,
				Progress: func(done, total int) { last = [2]int{done, total} }})
			if err != nil {
				t.Fatal(err)
			}
			if doc.PageCount != 7 || len(doc.Pages) != tc.npages {
				t.Fatalf("PageCount %d, %d pages; want 7, %d", doc.PageCount, len(doc.Pages), tc.npages)
			}
			if tc.npages > 0 && last != [2]int{tc.npages, tc.npages} {
				t.Errorf("last progress %v, want %d of %d", last, tc.npages, tc.npages)
			}
			for i, p := range doc.Pages {
				want := whole.Pages[tc.first-1+i]
				if p != want {
					t.Errorf("page %d = %d %.40q, want %d %.40q", i, p.Number, p.Text, want.Number, want.Text)
				}
			}
			if doc.Title != whole.Title {
				t.Errorf("title %q, want %q", doc.Title, whole.Title)
			}
		})
	}
}

// TestExtract_PDFPageRangeText: the text of a range has its pages' lines
// and no other page's.
func TestExtract_PDFPageRangeText(t *testing.T) {
	t.Parallel()
	doc, err := extractBytes(t, extract.TypePDF, xt.ProsePDF(4).Bytes(), extract.Options{Pages: extract.PageRange{First: 2, Last: 3}})
	if err != nil {
		t.Fatal(err)
	}
	text := doc.Text()
	for _, absent := range []string{"Page 1 of 4", "Page 4 of 4"} {
		if strings.Contains(text, absent) {
			t.Errorf("text has %q", absent)
		}
	}
	for _, present := range []string{"Page 2 of 4", "Page 3 of 4"} {
		if !strings.Contains(text, present) {
			t.Errorf("text lacks %q", present)
		}
	}
}

func TestExtract_PDFCountPages(t *testing.T) {
	t.Parallel()
	var progressed bool
	doc, err := extractBytes(t, extract.TypePDF, xt.ProsePDF(9).Bytes(), extract.Options{CountPages: true,
		Progress: func(int, int) { progressed = true }})
	if err != nil {
		t.Fatal(err)
	}
	if doc.PageCount != 9 || len(doc.Pages) != 0 || progressed || doc.Title == "" {
		t.Errorf("PageCount %d, %d pages, progress %v, title %q", doc.PageCount, len(doc.Pages), progressed, doc.Title)
	}
	_, err = extractBytes(t, extract.TypePDF, xt.ProsePDF(9).Bytes(), extract.Options{CountPages: true, MaxPages: 8})
	if extract.Reason(err) != "too_large" {
		t.Errorf("9 pages over a cap of 8: %v", err)
	}
}

func TestExtract_PageRangeInvalid(t *testing.T) {
	t.Parallel()
	for _, r := range []extract.PageRange{{First: -1}, {First: 4, Last: 3}, {Last: -2}} {
		_, err := extractBytes(t, extract.TypePDF, xt.ProsePDF(2).Bytes(), extract.Options{Pages: r})
		if err == nil || extract.Permanent(err) {
			t.Errorf("range %+v: err = %v, want a caller's error", r, err)
		}
	}
}

// TestExtract_PDFPageRangeSkipsOtherPages: a page over the text cap fails
// the whole document, and not a range without it: pages outside the range
// are never read.
func TestExtract_PDFPageRangeSkipsOtherPages(t *testing.T) {
	t.Parallel()
	prose := xt.ProsePDF(2).Pages
	big := xt.PDFPage{Text: []xt.PDFText{{X: 72, Y: 720, Size: 1, Text: strings.Repeat("abcdefgh ", 4000)}}} // 32 KB of text
	data := xt.PDF{Pages: []xt.PDFPage{prose[0], big, prose[1]}}.Bytes()
	opts := extract.Options{MaxTextLength: 16 << 10} // the others have 2.5 KB
	if _, err := extractBytes(t, extract.TypePDF, data, opts); extract.Reason(err) != "too_large" {
		t.Fatalf("whole document: %v, want too_large", err)
	}
	for _, r := range []extract.PageRange{{First: 1, Last: 1}, {First: 3, Last: 3}} {
		opts.Pages = r
		doc, err := extractBytes(t, extract.TypePDF, data, opts)
		if err != nil || len(doc.Pages) != 1 || doc.Pages[0].Number != r.First || doc.PageCount != 3 {
			t.Errorf("range %+v: %+v, %v", r, doc, err)
		}
	}
}
