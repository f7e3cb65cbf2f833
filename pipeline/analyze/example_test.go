package analyze_test

import (
	"fmt"

	"github.com/docketq/docket/pipeline/analyze"
)

func ExampleAnalyze() {
	pages := []analyze.Page{{Number: 1, Text: `Rechnung Nr. 117

Datum: 15. März 2024
Bitte überweisen Sie den Betrag von 1.234,56 € bis zum 14.04.2024 auf unser Konto.`}}
	f := analyze.Analyze(pages, analyze.Options{MaxKeyPhrases: 3})
	fmt.Println(f.Title, "|", f.Language, "|", f.WordCount, "words")
	fmt.Println(f.Dates)
	fmt.Println(f.Amounts)
	fmt.Printf("%q\n", f.KeyPhrases)
	// Output:
	// Rechnung Nr. 117 | de | 20 words
	// [2024-03-15 2024-04-14]
	// [{1234.56 EUR}]
	// ["bitte überweisen" "rechnung nr" "betrag"]
}
