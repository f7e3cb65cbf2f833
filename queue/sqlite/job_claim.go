package sqlite

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/docketq/docket/queue/driver"
)

// readyTenantsSQL lists the tenants of a queue that have work, a free slot
// and no pause, least virtual time first (then least recently served);
// none while the queue is paused (pause.go). It reads the partial index of
// exactly those tenants: idle, saturated and paused ones cost nothing.
const readyTenantsSQL = `
SELECT tenant_id, max_running - running, vtime, weight FROM docket_tenant_queues
WHERE queue = ?1 AND has_work = 1 AND running < max_running AND paused = 0
  AND NOT EXISTS (SELECT 1 FROM docket_queues q WHERE q.queue = ?1 AND q.paused_at IS NOT NULL)
ORDER BY vtime, served_at, tenant_id
LIMIT ?2`

// pickTenantJobsSQL reads a tenant's first pending jobs and their costs,
// from the fetch index.
const pickTenantJobsSQL = `
SELECT id, cost FROM docket_jobs
WHERE queue = ?1 AND tenant_id = ?2 AND state = 'pending'
ORDER BY priority DESC, id
LIMIT ?3`

// claimTenantJobsSQL starts the next attempts of a tenant's first pending
// jobs (cost: the jobs taken). random() | 1 is a random, odd, so non-zero,
// 64-bit token per job.
const claimTenantJobsSQL = `
UPDATE docket_jobs SET
	state = 'running', attempt = attempt + 1, lease_token = (random() | 1),
	lease_expires_at = ?1, worker_id = ?2, started_at = ?3, updated_at = ?3,
	stage = '', progress = 0, progress_message = ''
WHERE id IN (
	SELECT id FROM docket_jobs
	WHERE queue = ?4 AND tenant_id = ?5 AND state = 'pending'
	ORDER BY priority DESC, id
	LIMIT ?6)
RETURNING ` + jobColumns

const (
	serveTenantSQL = `
UPDATE docket_tenant_queues SET running = running + ?1, served_at = ?2, has_work = ?3, vtime = ?4
WHERE queue = ?5 AND tenant_id = ?6`
	noWorkSQL = `UPDATE docket_tenant_queues SET has_work = 0 WHERE queue = ? AND tenant_id = ?`
	// hasPendingSQL tells whether a tenant has a pending job left, from the
	// fetch index.
	hasPendingSQL = `SELECT EXISTS (SELECT 1 FROM docket_jobs WHERE queue = ? AND tenant_id = ? AND state = 'pending')`
)

type readyTenant struct {
	id     string
	free   int
	vtime  float64
	weight int
}

// JobClaim claims up to p.Max pending jobs of one queue, shared by cost
// (driver.FairTake, docs/claiming.md). The whole claim is one write
// transaction, and SQLite runs one at a time, so the running counts it
// checks cannot change under it: no tenant exceeds its limit. No tenant is
// ever held by another claim, so more reports the tenants beyond Max and
// the jobs the fair bound left out.
func (e *executor) JobClaim(ctx context.Context, p *driver.JobClaimParams) ([]*driver.Job, bool, error) {
	if err := driver.ValidateQueueName(p.Queue); err != nil {
		return nil, false, err
	}
	if p.Max <= 0 || p.LeaseDuration <= 0 {
		return nil, false, fmt.Errorf("claim jobs: %w: claim needs Max > 0 and LeaseDuration > 0", driver.ErrInvalid)
	}
	var (
		jobs []*driver.Job
		more bool
	)
	err := e.write(ctx, func(t *txn) error {
		jobs, more = nil, false
		tenants, err := t.readyTenants(ctx, p.Queue, p.Max+1)
		if err != nil || len(tenants) == 0 {
			return err
		}
		if len(tenants) > p.Max {
			tenants, more = tenants[:p.Max], true
		}
		share := (p.Max + len(tenants) - 1) / len(tenants)
		fair := make([]driver.FairTenant, len(tenants))
		for i, tn := range tenants {
			want := min(tn.free, share)
			costs, err := t.pickCosts(ctx, p.Queue, tn.id, want)
			if err != nil {
				return err
			}
			fair[i] = driver.FairTenant{VTime: tn.vtime, Weight: tn.weight, Free: tn.free, Wanted: want, Costs: costs}
		}
		take, vtimes, cut := driver.FairTake(fair, p.Max)
		more = more || cut
		expires := t.now + p.LeaseDuration.Microseconds()
		for i, tn := range tenants {
			if len(fair[i].Costs) == 0 {
				if _, err := t.exec(ctx, noWorkSQL, p.Queue, tn.id); err != nil {
					return err
				}
				continue
			}
			if take[i] == 0 {
				more = true // not served: it keeps its turn for the next claim
				continue
			}
			got, err := t.claimTenant(ctx, p, tn.id, take[i], vtimes[i], expires)
			if err != nil {
				return err
			}
			jobs = append(jobs, got...)
		}
		return nil
	})
	if err != nil {
		return nil, false, fmt.Errorf("claim jobs: %w", err)
	}
	return jobs, more, nil
}

func (t *txn) readyTenants(ctx context.Context, queueName string, limit int) ([]readyTenant, error) {
	rows, err := t.query(ctx, readyTenantsSQL, queueName, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []readyTenant
	for rows.Next() {
		var r readyTenant
		if err := rows.Scan(&r.id, &r.free, &r.vtime, &r.weight); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// pickCosts returns the costs of a tenant's next want pending jobs.
func (t *txn) pickCosts(ctx context.Context, queueName, tenant string, want int) ([]int, error) {
	rows, err := t.query(ctx, pickTenantJobsSQL, queueName, tenant, want)
	if err != nil {
		return nil, fmt.Errorf("tenant %s: %w", tenant, err)
	}
	defer rows.Close()
	var costs []int
	for rows.Next() {
		var id int64
		var c int
		if err := rows.Scan(&id, &c); err != nil {
			return nil, err
		}
		costs = append(costs, c)
	}
	return costs, rows.Err()
}

// claimTenant claims the first n jobs of one tenant and updates its slot
// row: running, vtime, served_at, and has_work, which stays set only while
// a pending job is left (a look-up after the take). The flag is exact, so
// a later claim never picks a tenant whose last job is gone and comes back
// empty.
func (t *txn) claimTenant(ctx context.Context, p *driver.JobClaimParams, tenant string, n int, vtime float64, expires int64) ([]*driver.Job, error) {
	jobs, err := scanJobs(t.query(ctx, claimTenantJobsSQL, expires, p.WorkerID, t.now, p.Queue, tenant, n))
	if err != nil {
		return nil, fmt.Errorf("tenant %s: %w", tenant, err)
	}
	// RETURNING follows no order: restore the tenant's start order.
	slices.SortFunc(jobs, func(a, b *driver.Job) int {
		return cmp.Or(cmp.Compare(b.Priority, a.Priority), cmp.Compare(a.ID, b.ID))
	})
	hasWork := false
	if err := t.queryRow(ctx, hasPendingSQL, p.Queue, tenant).Scan(&hasWork); err != nil {
		return nil, fmt.Errorf("tenant %s: %w", tenant, err)
	}
	_, err = t.exec(ctx, serveTenantSQL, len(jobs), t.now, hasWork, vtime, p.Queue, tenant)
	return jobs, err
}
