package extract_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/docketq/docket/pipeline/extract"
)

func Example() {
	src := "Release notes\n=============\n\nThe parser now joins exam-\nple words   and keeps\n\n\nparagraphs."
	typ, err := extract.Sniff(strings.NewReader(src))
	if err != nil {
		fmt.Println("rejected:", extract.Reason(err))
		return
	}
	doc, err := extract.Extract(context.Background(), typ, strings.NewReader(src), int64(len(src)), extract.Options{})
	if err != nil {
		fmt.Println("failed:", extract.Reason(err))
		return
	}
	fmt.Println(typ, "|", doc.Title)
	fmt.Println(doc.Pages[0].Text)
	// Output:
	// markdown | Release notes
	// Release notes
	// =============
	//
	// The parser now joins example words and keeps
	//
	// paragraphs.
}

func ExampleSniffBytes() {
	for _, head := range []string{"%PDF-1.7\n", "\x89PNG\r\n\x1a\n", "<html><body>%PDF-1.4</body></html>", ""} {
		typ, err := extract.SniffBytes([]byte(head))
		fmt.Printf("%q %q\n", typ, extract.Reason(err))
	}
	// Output:
	// "pdf" ""
	// "" "unsupported_type"
	// "html" ""
	// "" "unsupported_type"
}
