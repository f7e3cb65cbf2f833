package extract_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/docketq/docket/pipeline/extract"
	xt "github.com/docketq/docket/pipeline/extract/extracttest"
)

// goldenCase is one input whose whole Document is compared with testdata/golden/<name>.txt.
type goldenCase struct {
	name string
	typ  extract.Type
	data []byte
}

func goldenCases(t *testing.T) []goldenCase {
	t.Helper()
	cases := []goldenCase{
		{"pdf_prose3", extract.TypePDF, xt.ProsePDF(3).Bytes()},
		{"pdf_unicode", extract.TypePDF, xt.UnicodePDF().Bytes()},
		{"pdf_two_columns", extract.TypePDF, xt.TwoColumnsPDF().Bytes()},
		{"pdf_table", extract.TypePDF, xt.TablePDF().Bytes()},
		{"pdf_no_text", extract.TypePDF, xt.NoTextPDF().Bytes()},
		{"pdf_mixed", extract.TypePDF, xt.MixedPDF().Bytes()},
		{"pdf_active", extract.TypePDF, xt.ActivePDF().Bytes()},
		{"docx_report", extract.TypeDOCX, reportDOCX().Bytes()},
		{"docx_rendered_breaks", extract.TypeDOCX, renderedDOCX().Bytes()},
	}
	for _, f := range []struct{ file, name string }{
		{"article.html", "html_article"}, {"legacy.html", "html_legacy"},
		{"notes.md", "md_notes"}, {"plain.txt", "text_plain"},
	} {
		data, err := os.ReadFile(filepath.Join("testdata", f.file))
		if err != nil {
			t.Fatal(err)
		}
		typ, err := extract.SniffBytes(data)
		if err != nil {
			t.Fatalf("%s: sniff: %v", f.file, err)
		}
		cases = append(cases, goldenCase{f.name, typ, data})
	}
	return cases
}

// reportDOCX has metadata, headings, a table, a text box with a fallback, and page breaks.
func reportDOCX() xt.DOCX {
	textBox := `<w:p><w:r><mc:AlternateContent xmlns:mc="http://schemas.openxmlformats.org/markup-compatibility/2006">` +
		`<mc:Choice Requires="wps"><w:txbxContent>` + xt.Para("Text box.") + `</w:txbxContent></mc:Choice>` +
		`<mc:Fallback><w:txbxContent>` + xt.Para("Text box.") + `</w:txbxContent></mc:Fallback>` +
		`</mc:AlternateContent></w:r></w:p>`
	return xt.DOCX{
		Title: "Quarterly report",
		Body: xt.Heading("Title", "Quarterly Report") +
			xt.Para("Revenue grew by ", "12% ", "in Q3 — well above the fore-") +
			xt.Para("cast. Ligatures: ﬁnance, ﬂow; full-width: ＡＢＣ１２３.") +
			`<w:p><w:r><w:t>Tab</w:t><w:tab/><w:t>separated</w:t><w:br/><w:t>and broken line.</w:t></w:r></w:p>` +
			`<w:p><w:del><w:r><w:delText>deleted words</w:delText></w:r></w:del><w:r><w:t>Kept words.</w:t></w:r></w:p>` +
			textBox +
			xt.PageBreak() +
			xt.Heading("Heading1", "Figures") +
			xt.Table([][]string{{"Region", "Q2", "Q3"}, {"North", "10", "12"}, {"South", "7", "9"}}) +
			xt.Para("After the table.") +
			xt.PageBreak() + xt.PageBreak() +
			xt.Para("Last page."),
	}
}

// renderedDOCX has no explicit breaks, only where Word last rendered page turns, and no metadata.
func renderedDOCX() xt.DOCX {
	return xt.DOCX{Body: xt.Heading("Heading1", "Rendered breaks") + xt.Para("Page one.") +
		xt.RenderedBreak("Page two.") + xt.RenderedBreak("Page three.")}
}

func TestExtract_Golden(t *testing.T) {
	t.Parallel()
	for _, c := range goldenCases(t) {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			doc, err := extractBytes(t, c.typ, c.data, extract.Options{})
			if err != nil {
				t.Fatalf("Extract: %v", err)
			}
			got := render(doc)
			path := filepath.Join("testdata", "golden", c.name+".txt")
			if *update {
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update to create)", err)
			}
			if got != string(want) {
				t.Errorf("%s differs (run with -update to accept):\n--- got\n%s\n--- want\n%s", path, got, want)
			}
			if again := extract.Normalize(doc.Text()); again != doc.Text() {
				t.Errorf("text is not normalised:\n%q\n%q", doc.Text(), again)
			}
		})
	}
}

// render prints a Document in the golden files' format.
func render(doc *extract.Document) string {
	var b strings.Builder
	fmt.Fprintf(&b, "type: %s\ntitle: %s\nactive content: %v\n", doc.Type, doc.Title, doc.ActiveContent)
	for _, w := range doc.Warnings {
		fmt.Fprintf(&b, "warning: %s\n", w)
	}
	for _, p := range doc.Pages {
		fmt.Fprintf(&b, "--- page %d ---\n%s\n", p.Number, p.Text)
	}
	return b.String()
}
