package embedding_test

import (
	"context"
	"fmt"

	"github.com/docketq/docket/embedding"
)

func ExampleTopK() {
	e, err := embedding.FromConfig(embedding.Config{}) // no URL: the local Hashing embedder
	if err != nil {
		fmt.Println(err)
		return
	}
	chunks := []string{
		"The invoice is payable within thirty days.",
		"Our hiking trail climbs the mountain.",
		"Late invoices accrue interest.",
	}
	ctx := context.Background()
	vecs, _ := e.Embed(ctx, chunks)
	q, _ := e.Embed(ctx, []string{"when is the invoice payable"})
	for _, hit := range embedding.TopK(q[0], vecs, 2) {
		fmt.Println(chunks[hit.Index])
	}
	fmt.Println(e.Model(), e.Dimensions())
	// Output:
	// The invoice is payable within thirty days.
	// Late invoices accrue interest.
	// docket-hashing-v1 256
}
