package bench

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/docketq/docket/queue/postgres/pgtest"
)

// The test binary is also the fleet's worker process: TestRun_Fleet starts
// it again with FleetEnv set, and it works instead of testing.
func init() {
	spec := os.Getenv(FleetEnv)
	if spec == "" {
		return
	}
	if err := RunFleetWorker(context.Background(), spec, os.Stdin, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "fleet worker:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

func TestRun_Fleet(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cfg := tiny()
	cfg.Fleet = []int{2}
	// Long enough that the steady phase completes jobs on a loaded test
	// machine (with tiny()'s 300 ms it once completed none).
	cfg.Duration = 2 * time.Second
	cfg.FleetWorker = []string{exe}
	store := NewPostgresStore(pgtest.Default().ConnString("postgres"))
	var got []*Result
	err = Run(t.Context(), cfg, store, []string{"fleet"}, func(r *Result) error {
		got = append(got, r)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 {
		t.Fatalf("got %d results, want 1", len(got))
	}
	var keys []string
	for _, phase := range []string{"drain", "steady"} {
		for _, f := range []string{"jobs_per_sec", "wal_bytes_per_job", "xacts_per_1k_jobs", "worker_cpu_us_per_job"} {
			keys = append(keys, "k2_"+phase+"_"+f)
		}
	}
	checkResult(t, got[0], keys)
	for _, k := range []string{"k2_drain_wal_bytes_per_job", "k2_drain_xacts_per_1k_jobs", "k2_steady_jobs_per_sec"} {
		if v, _ := got[0].Get(k).(float64); v <= 0 {
			t.Errorf("%s = %v, want > 0", k, got[0].Get(k))
		}
	}
}

func TestRun_FleetNeedsPostgres(t *testing.T) {
	cfg := tiny()
	cfg.FleetWorker = []string{"/nonexistent"}
	err := Run(t.Context(), cfg, &SQLiteStore{Dir: t.TempDir()}, []string{"fleet"}, func(*Result) error { return nil })
	if err == nil || !strings.Contains(err.Error(), "PostgreSQL") {
		t.Fatalf("fleet on SQLite: err = %v, want one naming PostgreSQL", err)
	}
}

func TestParseNames_Fleet(t *testing.T) {
	t.Parallel()
	if got, err := ParseNames("fleet,drain"); err != nil || strings.Join(got, ",") != "fleet,drain" {
		t.Errorf(`ParseNames("fleet,drain") = %v, %v`, got, err)
	}
	if got, _ := ParseNames("all"); strings.Contains(strings.Join(got, ","), "fleet") {
		t.Errorf("all = %v, want it without fleet", got)
	}
}

func TestParseFleet(t *testing.T) {
	t.Parallel()
	if got, err := ParseFleet("1, 2,4,8"); err != nil || joinInts(got) != "1,2,4,8" {
		t.Errorf("ParseFleet = %v, %v", got, err)
	}
	for _, bad := range []string{"", "0", "1,x", "65"} {
		if _, err := ParseFleet(bad); err == nil {
			t.Errorf("ParseFleet(%q): no error", bad)
		}
	}
}

func TestParseScaleTenants(t *testing.T) {
	t.Parallel()
	if got, err := ParseScaleTenants("10, 100000"); err != nil || joinInts(got) != "10,100000" {
		t.Errorf("ParseScaleTenants = %v, %v", got, err)
	}
	for _, bad := range []string{"", "0", "10,x", "1000001"} {
		if _, err := ParseScaleTenants(bad); err == nil {
			t.Errorf("ParseScaleTenants(%q): no error", bad)
		}
	}
}
