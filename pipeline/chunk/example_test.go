package chunk_test

import (
	"fmt"

	"github.com/docketq/docket/pipeline/chunk"
)

func ExampleSplit() {
	pages := []chunk.Page{
		{Number: 1, Text: "Docket stores jobs durably. Workers claim them with a lease."},
		{Number: 2, Text: "A lost lease fences the worker out.\n\nDocuments are chunked and embedded."},
	}
	chunks, err := chunk.Split(pages, chunk.Config{Size: 70, Overlap: 20})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, c := range chunks {
		fmt.Printf("%d pages %d-%d: %q\n", c.Index, c.PageStart, c.PageEnd, c.Text)
	}
	// Output:
	// 0 pages 1-1: "Docket stores jobs durably. Workers claim them with a lease."
	// 1 pages 1-2: "them with a lease.\n\nA lost lease fences the worker out."
	// 2 pages 2-2: "the worker out.\n\nDocuments are chunked and embedded."
}
