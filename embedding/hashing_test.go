package embedding

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"
)

func embedOne(t *testing.T, e Embedder, text string) []float32 {
	t.Helper()
	v, err := e.Embed(context.Background(), []string{text})
	if err != nil {
		t.Fatalf("Embed: %v", err)
	}
	return v[0]
}

func TestHashing_Embed(t *testing.T) {
	t.Parallel()
	h := NewHashing(0)
	if h.Dimensions() != 256 || h.Model() != HashingModel {
		t.Fatalf("defaults: %d %q", h.Dimensions(), h.Model())
	}
	texts := []string{"Hello, world!", "東京は日本の首都です", "naïve café", "", "!!! ---", "\xff\xfe"}
	vecs, err := h.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := h.Embed(context.Background(), texts)
	for i, v := range vecs {
		if len(v) != 256 {
			t.Fatalf("text %d: %d dims", i, len(v))
		}
		var norm float64
		for j, x := range v {
			norm += float64(x) * float64(x)
			if x != again[i][j] {
				t.Fatalf("text %d: not deterministic", i)
			}
		}
		want := 1.0
		if i >= 3 { // no words
			want = 0
		}
		if math.Abs(norm-want) > 1e-5 {
			t.Errorf("text %q: squared norm %v, want %v", texts[i], norm, want)
		}
	}
}

// TestHashing_similarity checks that a text is closer to a related one than
// to an unrelated one.
func TestHashing_similarity(t *testing.T) {
	t.Parallel()
	h := NewHashing(256)
	tests := []struct{ text, near, far string }{
		{"The cat sat on the mat.", "A cat was sitting on a mat.", "Quarterly revenue grew by ten percent."},
		{"invoice payment due in thirty days", "the invoices are payable within thirty days", "the hiking trail climbs the mountain"},
		{"Rechnung über 500 Euro", "Die Rechnung beträgt 500 Euro", "Das Wetter ist heute schön"},
		{"東京は日本の首都です", "東京は大きな都市です", "Paris is the capital of France"},
		{"database migration failed", "the migration of the database has failed", "a recipe for chocolate cake"},
	}
	for _, tt := range tests {
		a, near, far := embedOne(t, h, tt.text), embedOne(t, h, tt.near), embedOne(t, h, tt.far)
		if sn, sf := Cosine(a, near), Cosine(a, far); sn <= sf+0.1 {
			t.Errorf("%q: similarity to near %.3f, to far %.3f", tt.text, sn, sf)
		}
	}
}

// TestHashing_stable pins a few numbers of one vector: if this fails, the
// vectors changed and HashingModel must get a new version.
func TestHashing_stable(t *testing.T) {
	t.Parallel()
	v := embedOne(t, NewHashing(0), "Docket processes documents.")
	type entry struct {
		i int
		x float32
	}
	var got []entry
	for i, x := range v {
		if x != 0 && len(got) < 4 {
			got = append(got, entry{i, x})
		}
	}
	want := []entry{{7, -0.11043153}, {38, -0.22086306}, {58, -0.11043153}, {71, -0.22086306}}
	for i := range want {
		if len(got) != len(want) || got[i].i != want[i].i || math.Abs(float64(got[i].x-want[i].x)) > 1e-6 {
			t.Fatalf("vector changed: %v, want %v; bump HashingModel", got, want)
		}
	}
}

func TestHashing_cancelled(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := NewHashing(8).Embed(ctx, []string{"x"}); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

// BenchmarkHashing_Embed reports throughput on 800-byte chunks.
func BenchmarkHashing_Embed(b *testing.B) {
	text := strings.Repeat("The invoice is payable within thirty days of receipt. ", 15)[:800]
	texts := make([]string, 64)
	for i := range texts {
		texts[i] = text
	}
	h := NewHashing(0)
	b.SetBytes(int64(len(texts) * len(text)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := h.Embed(context.Background(), texts); err != nil {
			b.Fatal(err)
		}
	}
}
