package search_test

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/docketq/docket"
	"github.com/docketq/docket/embedding"
	"github.com/docketq/docket/pipeline/analyze"
	"github.com/docketq/docket/pipeline/chunk"
)

// corpusDoc is a real document, split as the pipeline splits it.
type corpusDoc struct {
	name     string
	language string
	chunks   []chunk.Chunk
}

// Where the real documents are: the public extraction corpus (a German
// lecture script with its ground-truth text) and the extractor's golden
// outputs of its test PDFs, DOCX, HTML and Markdown.
const (
	corpusDir = "/work/shared/corpus/extraction"
	goldenDir = "../pipeline/extract/testdata/golden"
)

// loadCorpus returns the documents, split into chunks with the chunk
// package's defaults and with the language analyze detects. It skips the
// test when the public corpus is not on this machine.
func loadCorpus(tb testing.TB) []corpusDoc {
	tb.Helper()
	var docs []corpusDoc
	geo, err := os.ReadFile(filepath.Join(corpusDir, "GeoTopo-book.txt"))
	if err != nil {
		tb.Skipf("public corpus: %v", err)
	}
	docs = append(docs, newCorpusDoc(tb, "GeoTopo-book.txt", pagesOf(string(geo), 40)))
	golden, err := filepath.Glob(filepath.Join(goldenDir, "*.txt"))
	if err != nil || len(golden) == 0 {
		tb.Fatalf("golden texts: %v (%d)", err, len(golden))
	}
	for _, path := range golden {
		b, err := os.ReadFile(path)
		if err != nil {
			tb.Fatal(err)
		}
		docs = append(docs, newCorpusDoc(tb, filepath.Base(path), goldenPages(string(b))))
	}
	return docs
}

func newCorpusDoc(tb testing.TB, name string, pages []chunk.Page) corpusDoc {
	tb.Helper()
	cs, err := chunk.Split(pages, chunk.Config{})
	if err != nil {
		tb.Fatal(err)
	}
	ap := make([]analyze.Page, len(pages))
	for i, p := range pages {
		ap[i] = analyze.Page{Number: p.Number, Text: p.Text}
	}
	return corpusDoc{name: name, language: analyze.Analyze(ap, analyze.Options{}).Language, chunks: cs}
}

// pagesOf cuts a text without page breaks into pages of n lines.
func pagesOf(text string, n int) []chunk.Page {
	lines := strings.Split(text, "\n")
	var pages []chunk.Page
	for i := 0; i < len(lines); i += n {
		pages = append(pages, chunk.Page{Number: len(pages) + 1, Text: strings.Join(lines[i:min(i+n, len(lines))], "\n")})
	}
	return pages
}

var pageMark = regexp.MustCompile(`(?m)^--- page (\d+) ---$`)

// goldenPages returns the pages of a golden output ("--- page N ---"
// before each); a text without marks is one page.
func goldenPages(text string) []chunk.Page {
	marks := pageMark.FindAllStringSubmatchIndex(text, -1)
	if len(marks) == 0 {
		return []chunk.Page{{Number: 1, Text: text}}
	}
	var pages []chunk.Page
	for i, m := range marks {
		end := len(text)
		if i+1 < len(marks) {
			end = marks[i+1][0]
		}
		n, _ := strconv.Atoi(text[m[2]:m[3]])
		pages = append(pages, chunk.Page{Number: n, Text: text[m[1]:end]})
	}
	return pages
}

// corpusTenant is the tenant storeCorpus stores the documents in.
const corpusTenant = "t_corpus"

// corpusID is the id storeCorpus gives the i-th document.
func corpusID(i int) string {
	return "00000000-0000-4000-8000-" + strconv.FormatInt(int64(100000000000+i), 10)
}

// corpusByID returns the documents by the ids storeCorpus gives them.
func corpusByID(docs []corpusDoc) map[string]corpusDoc {
	byID := make(map[string]corpusDoc, len(docs))
	for i, d := range docs {
		byID[corpusID(i)] = d
	}
	return byID
}

// storeCorpus stores the documents in a new tenant of s, with vectors of
// emb, and returns the tenant's id and the stored documents by id.
func storeCorpus(tb testing.TB, s docket.Store, emb embedding.Embedder, docs []corpusDoc) (string, map[string]corpusDoc) {
	tb.Helper()
	ctx := context.Background()
	tn, err := s.TenantCreate(ctx, &docket.TenantCreateParams{ID: corpusTenant, Name: "corpus", Plan: docket.PlanFree})
	if err != nil {
		tb.Fatal(err)
	}
	byID := map[string]corpusDoc{}
	for i, d := range docs {
		id := corpusID(i)
		texts := make([]string, len(d.chunks))
		for j, c := range d.chunks {
			texts[j] = c.Text
		}
		vecs, err := emb.Embed(ctx, texts)
		if err != nil {
			tb.Fatal(err)
		}
		cs := make([]*docket.Chunk, len(d.chunks))
		for j, c := range d.chunks {
			cs[j] = &docket.Chunk{Index: c.Index, Text: c.Text, PageStart: c.PageStart, PageEnd: c.PageEnd,
				Vector: vecs[j], Model: emb.Model(), Dimensions: emb.Dimensions(), Language: d.language}
		}
		err = s.InTenant(ctx, tn.ID, func(tx docket.Tx) error {
			doc := &docket.Document{ID: id, Filename: d.name, ContentType: "text/plain", SHA256: "x", BlobKey: "b/" + id}
			if err := tx.DocumentInsert(ctx, doc); err != nil {
				return err
			}
			return tx.ChunkReplace(ctx, id, cs)
		})
		if err != nil {
			tb.Fatal(err)
		}
		byID[id] = d
	}
	return tn.ID, byID
}
