package ops_test

import (
	"context"
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"go.yaml.in/yaml/v2"

	"github.com/docketq/docket"
	"github.com/docketq/docket/blob"
	"github.com/docketq/docket/embedding"
	"github.com/docketq/docket/httpapi"
	"github.com/docketq/docket/ops"
)

// exported returns the names of every metric a docket process exports:
// the engine's, the store's (with the PostgreSQL-only gauges), the API's and
// the Go and process collectors'.
func exported(t *testing.T) map[string]bool {
	t.Helper()
	d, c := setup(t)
	m := ops.NewMetrics()
	ops.NewPoller(m, ops.PollerConfig{
		Monitor: d, Client: c,
		NotifyUsage: func(context.Context) (float64, error) { return 0, nil },
		Wraparound:  func(context.Context) (docket.Wraparound, error) { return docket.Wraparound{}, nil },
		Pools:       func() map[string]ops.PoolStats { return nil },
	})
	blobs, err := blob.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := httpapi.New(httpapi.Config{Store: d, Queue: c, Blobs: blobs, Embedder: embedding.NewHashing(0), Metrics: m.Registry()}); err != nil {
		t.Fatal(err)
	}
	descs := make(chan *prometheus.Desc, 1000)
	go func() { m.Registry().Describe(descs); close(descs) }()
	fqName := regexp.MustCompile(`fqName: "([^"]+)"`)
	names := map[string]bool{}
	for d := range descs {
		if m := fqName.FindStringSubmatch(d.String()); m != nil {
			names[m[1]] = true
		}
	}
	return names
}

var metricRef = regexp.MustCompile(`\b(?:docket|go|process)_[a-z0-9_]+\b`)

// checkExprs fails for a metric an expression names that no process
// exports (a histogram's _bucket, _count and _sum series count as its own).
func checkExprs(t *testing.T, file string, exprs []string, names map[string]bool) {
	t.Helper()
	if len(exprs) == 0 {
		t.Fatalf("%s: no expressions found", file)
	}
	for _, e := range exprs {
		for _, ref := range metricRef.FindAllString(e, -1) {
			base := ref
			for _, suffix := range []string{"_bucket", "_count", "_sum"} {
				if b, ok := strings.CutSuffix(ref, suffix); ok && names[b] {
					base = b
				}
			}
			if !names[base] {
				t.Errorf("%s: %q names %s, which no docket process exports", file, e, ref)
			}
		}
	}
}

// TestDocs_AlertRules: the sample alert rules parse, each rule has a name,
// an expression and a summary, and names only metrics docket exports.
func TestDocs_AlertRules(t *testing.T) {
	t.Parallel()
	const file = "../docs/monitoring/alerts.yml"
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var rules struct {
		Groups []struct {
			Name  string
			Rules []struct {
				Alert, Expr, For    string
				Labels, Annotations map[string]string
			}
		}
	}
	if err := yaml.UnmarshalStrict(raw, &rules); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	var exprs []string
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			if r.Alert == "" || r.Expr == "" || r.Annotations["summary"] == "" {
				t.Errorf("%s: rule %+v lacks a name, an expression or a summary", file, r)
			}
			exprs = append(exprs, r.Expr)
		}
	}
	checkExprs(t, file, exprs, exported(t))
}

// TestDocs_GrafanaDashboard: the sample dashboard is JSON whose panels'
// queries name only metrics docket exports.
func TestDocs_GrafanaDashboard(t *testing.T) {
	t.Parallel()
	const file = "../docs/monitoring/grafana-dashboard.json"
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Title  string
		Panels []struct {
			Title   string
			Targets []struct{ Expr string }
		}
	}
	if err := json.Unmarshal(raw, &dash); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	var exprs []string
	for _, p := range dash.Panels {
		if len(p.Targets) == 0 {
			t.Errorf("%s: panel %q has no query", file, p.Title)
		}
		for _, tg := range p.Targets {
			exprs = append(exprs, tg.Expr)
		}
	}
	checkExprs(t, file, exprs, exported(t))
}
