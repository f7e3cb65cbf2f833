package bench

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"
)

// Result is what one scenario measured: figures in a fixed order, and the
// settings it ran with.
type Result struct {
	Scenario string
	Figures  []Figure
	Settings []Figure
}

// Figure is one named value: an int, a float64 or a string.
type Figure struct {
	Key   string
	Value any
}

func (r *Result) add(key string, v any) { r.Figures = append(r.Figures, Figure{key, v}) }

func (r *Result) set(key string, v any) { r.Settings = append(r.Settings, Figure{key, v}) }

// Get returns the value of a figure, or nil.
func (r *Result) Get(key string) any {
	for _, f := range r.Figures {
		if f.Key == key {
			return f.Value
		}
	}
	return nil
}

// MarshalJSON encodes the result as one flat object, figures in order, with
// "scenario" first and "settings" (an object) last.
func (r *Result) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteString(`{"scenario":`)
	b.WriteString(strconv.Quote(r.Scenario))
	if err := writeFields(&b, r.Figures, false); err != nil {
		return nil, err
	}
	b.WriteString(`,"settings":{`)
	if err := writeFields(&b, r.Settings, true); err != nil {
		return nil, err
	}
	b.WriteString("}}")
	return b.Bytes(), nil
}

func writeFields(b *bytes.Buffer, fs []Figure, first bool) error {
	for i, f := range fs {
		if i > 0 || !first {
			b.WriteByte(',')
		}
		v, err := json.Marshal(jsonValue(f.Value))
		if err != nil {
			return fmt.Errorf("figure %s: %w", f.Key, err)
		}
		b.WriteString(strconv.Quote(f.Key))
		b.WriteByte(':')
		b.Write(v)
	}
	return nil
}

// jsonValue rounds floats to three decimals and turns NaN and infinities
// into null.
func jsonValue(v any) any {
	f, ok := v.(float64)
	if !ok {
		return v
	}
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil
	}
	return math.Round(f*1000) / 1000
}

// WriteJSON writes the result as one line of JSON.
func (r *Result) WriteJSON(w io.Writer) error {
	b, err := r.MarshalJSON()
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
}

// WriteTable writes the result as an aligned two-column table.
func (r *Result) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "%s\t\n", r.Scenario)
	for _, f := range r.Figures {
		fmt.Fprintf(tw, "  %s\t%s\n", f.Key, formatValue(f.Value))
	}
	settings := make([]string, len(r.Settings))
	for i, s := range r.Settings {
		settings[i] = s.Key + "=" + formatValue(s.Value)
	}
	fmt.Fprintf(tw, "  settings\t%s\n\n", strings.Join(settings, " "))
	return tw.Flush()
}

func formatValue(v any) string {
	switch x := v.(type) {
	case float64:
		switch {
		case math.IsNaN(x):
			return "-"
		case math.Abs(x) >= 100:
			return strconv.FormatFloat(x, 'f', 0, 64)
		default:
			return strconv.FormatFloat(x, 'f', 2, 64)
		}
	default:
		return fmt.Sprint(v)
	}
}
