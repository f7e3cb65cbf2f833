package pgstore_test

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/docketq/docket"
)

// BenchmarkHealthGet reads the monitoring views of a jobs table of n rows:
// 90% completed over the last 30 hours, 4% failed (half of them retried),
// 5% pending and 1% running over 1,000 tenants, after VACUUM ANALYZE. It
// prints each view's plan (EXPLAIN ANALYZE) once, on stderr.
//
//	go test -run '^$' -bench HealthGet -benchtime 5x ./postgres
func BenchmarkHealthGet(b *testing.B) {
	for _, n := range benchHealthSizes {
		b.Run(fmt.Sprintf("jobs=%d", n), func(b *testing.B) {
			d := newStore(b)
			ctx := b.Context()
			_, err := d.Pool().Exec(ctx, `
INSERT INTO docket_jobs (queue, kind, tenant_id, state, attempt, max_attempts, run_at, created_at,
                         started_at, completed_at, lease_token, lease_expires_at, retry_of, error_message)
SELECT 'documents', 'process_document', 't' || (i % 1000),
       s.state, CASE WHEN s.state = 'pending' THEN 0 ELSE 1 + i % 3 END, 3,
       now() - (i % 108000) * interval '1 second', now() - (i % 108000) * interval '1 second',
       CASE WHEN s.state <> 'pending' THEN now() - (i % 108000) * interval '1 second' END,
       CASE WHEN s.state IN ('completed', 'failed') THEN now() - (i % 108000) * interval '1 second' + (i % 60) * interval '1 second' END,
       CASE WHEN s.state = 'running' THEN i ELSE 0 END,
       CASE WHEN s.state = 'running' THEN now() + interval '1 minute' END,
       NULL, CASE WHEN s.state = 'failed' THEN 'boom' ELSE '' END
FROM generate_series(1, $1) i,
     LATERAL (SELECT CASE WHEN i % 100 < 90 THEN 'completed' WHEN i % 100 < 94 THEN 'failed'
                          WHEN i % 100 < 99 THEN 'pending' ELSE 'running' END AS state) s`, n)
			if err != nil {
				b.Fatal(err)
			}
			// Half the failed jobs have been retried.
			_, err = d.Pool().Exec(ctx, `INSERT INTO docket_jobs (queue, kind, tenant_id, state, retry_of)
SELECT queue, kind, tenant_id, 'cancelled', id FROM docket_jobs WHERE state = 'failed' AND id % 2 = 0`)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := d.Pool().Exec(ctx, "VACUUM ANALYZE"); err != nil {
				b.Fatal(err)
			}
			for _, v := range []string{"docket_queue_health", "docket_queue_health WHERE state IN ('scheduled', 'pending', 'running')",
				"docket_processing_performance", "docket_stuck_jobs", "docket_failed_jobs", "docket_queue_depth"} {
				rows, err := d.Pool().Query(ctx, "EXPLAIN (ANALYZE, COSTS OFF) SELECT count(*) FROM "+v)
				if err != nil {
					b.Fatal(err)
				}
				var plan []string
				for rows.Next() {
					var line string
					if err := rows.Scan(&line); err != nil {
						b.Fatal(err)
					}
					plan = append(plan, line)
				}
				rows.Close()
				fmt.Fprintf(os.Stderr, "%s at %d jobs:\n%s\n", v, n, strings.Join(plan, "\n"))
			}
			for _, p := range []struct {
				name string
				skip bool
			}{{"all", false}, {"poller", true}} { // the poller skips performance and finished states
				b.Run(p.name, func(b *testing.B) {
					for b.Loop() {
						if _, err := d.HealthGet(ctx, &docket.HealthParams{SkipPerformance: p.skip, SkipFinished: p.skip}); err != nil {
							b.Fatal(err)
						}
					}
				})
			}
		})
	}
}

var benchHealthSizes = []int{100_000, 1_000_000}
