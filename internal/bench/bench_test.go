package bench

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/docketq/docket/queue/postgres/pgtest"
)

func TestMain(m *testing.M) {
	pgtest.Main(m, pgtest.Options{})
}

// tiny is a configuration small enough for a test run.
func tiny() Config {
	return Config{Jobs: 600, Tenants: 5, Duration: 300 * time.Millisecond, Warmup: 100 * time.Millisecond, Workers: 50, Samples: 10, Backlog: 500}
}

// stores returns the stores the tests run on: SQLite, and PostgreSQL on
// the test cluster (databases created by PostgresStore itself).
func stores(t *testing.T) map[string]Store {
	t.Helper()
	return map[string]Store{
		"sqlite":   &SQLiteStore{Dir: t.TempDir()},
		"postgres": NewPostgresStore(pgtest.Default().ConnString("postgres")),
	}
}

func TestRun_Scenarios(t *testing.T) {
	// scale primes every tenant; keep its tenant counts small here.
	savedTenants, savedRounds := scaleTenants, scaleRounds
	scaleTenants, scaleRounds = []int{3, 40}, 30
	t.Cleanup(func() { scaleTenants, scaleRounds = savedTenants, savedRounds })

	wantKeys := map[string][]string{
		"drain":    {"jobs_per_sec", "jobs", "tenants", "seconds"},
		"steady":   {"jobs_per_sec", "completed", "inserted", "backlog"},
		"latency":  {"p50_ms", "p95_ms", "p99_ms"},
		"fairness": {"p95_ms", "a_share"},
		"scale":    {"pending60_tenants3_p99_ms", "pending600_tenants40_p99_ms", "tenants40_p99_ratio"},
	}
	for name, store := range stores(t) {
		t.Run(name, func(t *testing.T) {
			var got []*Result
			err := Run(t.Context(), tiny(), store, Names(), func(r *Result) error {
				got = append(got, r)
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(Names()) {
				t.Fatalf("got %d results, want %d", len(got), len(Names()))
			}
			for _, r := range got {
				checkResult(t, r, wantKeys[r.Scenario])
			}
		})
	}
}

// checkResult checks that r has the keys, each a finite number, and that
// its JSON form is one object with them.
func checkResult(t *testing.T, r *Result, keys []string) {
	t.Helper()
	for _, k := range keys {
		var v float64
		ok := true
		switch x := r.Get(k).(type) {
		case float64:
			v = x
		case int:
			v = float64(x)
		case int64:
			v = float64(x)
		default:
			ok = false
		}
		if !ok || math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			t.Errorf("%s: %s = %v, want a finite number", r.Scenario, k, r.Get(k))
		}
	}
	var buf bytes.Buffer
	if err := r.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	var decoded map[string]any
	if err := json.Unmarshal(buf.Bytes(), &decoded); err != nil {
		t.Fatalf("%s: JSON %q: %v", r.Scenario, buf.String(), err)
	}
	if decoded["scenario"] != r.Scenario || decoded["settings"] == nil {
		t.Errorf("%s: JSON %s lacks scenario or settings", r.Scenario, buf.String())
	}
	if strings.Count(buf.String(), "\n") != 1 {
		t.Errorf("%s: JSON is not one line: %q", r.Scenario, buf.String())
	}
}

func TestParseNames(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in      string
		want    string
		wantErr bool
	}{
		{"all", "drain,steady,latency,fairness,scale", false},
		{"drain", "drain", false},
		{"latency, drain", "latency,drain", false},
		{"drain,nope", "", true},
		{"", "", true},
	}
	for _, tt := range tests {
		got, err := ParseNames(tt.in)
		if (err != nil) != tt.wantErr || strings.Join(got, ",") != tt.want {
			t.Errorf("ParseNames(%q) = %v, %v; want %q, error %v", tt.in, got, err, tt.want, tt.wantErr)
		}
	}
}

func TestPercentile(t *testing.T) {
	t.Parallel()
	var ds []time.Duration
	for i := 1; i <= 100; i++ {
		ds = append(ds, time.Duration(i)*time.Millisecond)
	}
	for p, want := range map[float64]float64{50: 50, 95: 95, 99: 99, 100: 100, 0: 1} {
		if got := percentile(ds, p); got != want {
			t.Errorf("percentile(1..100ms, %v) = %v, want %v", p, got, want)
		}
	}
	if got := percentile(nil, 50); !math.IsNaN(got) {
		t.Errorf("percentile(nil) = %v, want NaN", got)
	}
}

func TestWithDatabase(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"postgres://u:p@h:5432/db?sslmode=disable", "postgres://u:p@h:5432/x?sslmode=disable"},
		{"postgresql://h/", "postgresql://h/x"},
		{"host=/tmp port=5432 dbname=db", "host=/tmp port=5432 dbname=db dbname=x"},
	}
	for _, tt := range tests {
		got, err := withDatabase(tt.in, "x")
		if err != nil || got != tt.want {
			t.Errorf("withDatabase(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}

func TestResult_WriteTable(t *testing.T) {
	t.Parallel()
	r := &Result{Scenario: "drain"}
	r.add("jobs_per_sec", 12345.678)
	r.add("p50_ms", 1.234)
	r.add("p99_ms", math.NaN())
	r.set("workers", "10")
	var buf bytes.Buffer
	if err := r.WriteTable(&buf); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"drain", "jobs_per_sec  12346", "p50_ms        1.23", "p99_ms        -", "settings      workers=10"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, buf.String())
		}
	}
	buf.Reset()
	if err := r.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	want := `{"scenario":"drain","jobs_per_sec":12345.678,"p50_ms":1.234,"p99_ms":null,"settings":{"workers":"10"}}` + "\n"
	if buf.String() != want {
		t.Errorf("JSON = %s, want %s", buf.String(), want)
	}
}
