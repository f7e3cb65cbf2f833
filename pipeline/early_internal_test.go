package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/docketq/docket"
	"github.com/docketq/docket/pipeline/analyze"
	"github.com/docketq/docket/pipeline/extract"
	"github.com/docketq/docket/queue/driver"
)

// The early results always fit in a partial result, even at every cap and
// with text JSON escapes six bytes a character; a usual one is untouched.
func TestEarly_Encode(t *testing.T) {
	t.Parallel()
	ctl := strings.Repeat("\x01", maxFieldBytes)
	full := Early{Title: strings.Repeat("\x02", extract.MaxTitleBytes), Language: "en", PageCount: 3, WordCount: 900}
	for range earlyItems {
		full.KeyPhrases = append(full.KeyPhrases, ctl)
		full.Dates = append(full.Dates, ctl)
		full.Amounts = append(full.Amounts, docket.Amount{Value: ctl, Currency: ctl})
	}
	raw := full.encode()
	if err := driver.ValidatePartialResult(raw); err != nil {
		t.Fatalf("%d bytes: %v", len(raw), err)
	}
	var back Early
	if err := json.Unmarshal(raw, &back); err != nil || back.PageCount != 3 || back.Language != "en" || len(back.KeyPhrases) == 0 {
		t.Errorf("%v: decoded %d key phrases, %d pages", err, len(back.KeyPhrases), back.PageCount)
	}

	usual := Early{Title: "Harbour <survey> & more", Language: "en", PageCount: 2, WordCount: 40, KeyPhrases: []string{"storm damage"},
		Dates: []string{"2026-03-12"}, Amounts: []docket.Amount{{Value: "12500", Currency: "EUR"}}}
	if got, want := string(usual.encode()), `{"title":"Harbour <survey> & more","language":"en","page_count":2,"word_count":40,`+
		`"key_phrases":["storm damage"],"dates":["2026-03-12"],"amounts":[{"value":"12500","currency":"EUR"}]}`; got != want {
		t.Errorf("encoded\n%s\nwant\n%s", got, want)
	}
}

// The early overview stops with its context's error once the context is
// done, and reads the text otherwise.
func TestEarlyOverview_Context(t *testing.T) {
	t.Parallel()
	pages := []analyze.Page{{Number: 1, Text: "# Harbour survey\n\nThe survey counted seventeen lighthouses."}}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := earlyOverview(ctx, pages, ""); !errors.Is(err, context.Canceled) {
		t.Errorf("canceled: err %v, want context.Canceled", err)
	}
	e, err := earlyOverview(t.Context(), pages, "")
	if err != nil || e.Title != "Harbour survey" || e.PageCount != 1 || e.WordCount != 7 {
		t.Errorf("early %+v, err %v", e, err)
	}
}
