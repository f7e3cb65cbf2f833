package bench

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/docketq/docket/queue"
	"github.com/docketq/docket/queue/driver"
)

// The scale scenario's shape: claims of scaleClaim jobs, timed over
// scaleRounds rounds after scaleWarmup, at each backlog and tenant count.
const (
	scaleClaim      = 10
	scaleWarmup     = 20
	scaleSmall      = 1000
	scaleTenantLim  = 10
	scaleLease      = time.Minute
	scaleWorkerName = "bench-scale"
	scaleMaxEmpty   = 2000 // empty claims in a row before giving up
	scaleChurnMax   = 100_000
	scaleChurnClaim = 1000
)

// The tenant counts (default of Config.ScaleTenants) and timed rounds of
// scale (variables for the tests).
var (
	scaleTenants = []int{10, 10_000}
	scaleRounds  = 300
)

// runScale times the claim round trip (JobClaim of 10 jobs through the
// driver's executor) and the finish of those jobs, with 10^3 and then
// 10^6 (Jobs) pending jobs, for 10 and for 10^4 tenants, each tenant count
// on its own fresh store. Every tenant has run a job before the timing
// starts, so idle tenants are counted too; each round inserts as many jobs
// as it finished, for the same tenants, so the backlog stays put. The store
// is settled after each bulk load (Env.Settle), so that the figures are the
// claim's own cost rather than the load's aftermath.
//
// Then, at each backlog, claims are timed again under churn: while a
// churner claims, finishes and replaces min(pending, 10^5) jobs 1,000 at a
// time, as a drain does (no vacuum in between), each round times a 10-job
// claim and one pass of the maintenance sweeps (rescue, schedule,
// retention), which then face the dead row versions and finished jobs the
// churn leaves behind (docs/benchmarks.md).
func runScale(ctx context.Context, r *runner) (*Result, error) {
	big := r.cfg.jobsOr(1_000_000)
	small := min(scaleSmall, max(big/10, 1))
	res := &Result{}
	counts := r.cfg.ScaleTenants
	if len(counts) == 0 {
		counts = scaleTenants
	}
	for i, tenants := range counts {
		env := r.env
		if i > 0 {
			var err error
			if env, err = r.store.Open(ctx); err != nil {
				return nil, err
			}
		}
		err := r.scaleOne(ctx, env, res, tenants, small, big)
		if i > 0 {
			err = errors.Join(err, env.Close())
		}
		if err != nil {
			return nil, err
		}
	}
	r.settings(res, "none (driver executor)")
	res.set("claim_max", scaleClaim)
	res.set("rounds", scaleRounds)
	res.set("tenant_limit", scaleTenantLim)
	if r.env.Settle != nil {
		res.set("after_load", "vacuum analyze, checkpoint")
	}
	return res, nil
}

func (r *runner) scaleOne(ctx context.Context, env *Env, res *Result, tenants, small, big int) error {
	client := queue.NewClient(env.Driver, queue.ClientConfig{Logger: r.cfg.Logger})
	if err := client.SetQueueDefaultLimit(ctx, queue.DefaultQueue, scaleTenantLim); err != nil {
		return err
	}
	exec := env.Driver.Executor()
	r.progressf("%d tenants: each runs one job first", tenants)
	if err := primeTenants(ctx, client, exec, tenants); err != nil {
		return err
	}
	var p99, churnP99 []float64
	for _, pending := range []int{small, big} {
		have := 0
		if pending == big {
			have = small
		}
		r.progressf("%d tenants: loading %d pending jobs", tenants, pending)
		took, err := enqueueSpread(ctx, client, pending-have, tenants, have)
		if err != nil {
			return err
		}
		r.progressf("%d tenants: loaded at %.0f jobs/s; timing claims", tenants, float64(pending-have)/took.Seconds())
		if env.Settle != nil {
			if err := env.Settle(ctx); err != nil {
				return fmt.Errorf("settle after load (vacuum, checkpoint; needs superuser or pg_checkpoint): %w", err)
			}
		}
		claims, finishes, empty, err := timeClaims(ctx, client, exec)
		if err != nil {
			return err
		}
		key := "pending" + strconv.Itoa(pending) + "_tenants" + strconv.Itoa(tenants) + "_"
		addPercentiles(res, key, claims, 50, 99)
		addPercentiles(res, key+"finish_", finishes, 50)
		res.add(key+"empty_claims", empty)
		p99 = append(p99, percentile(claims, 99))
		churn := min(pending, scaleChurnMax)
		r.progressf("%d tenants, %d pending: timing claims and sweeps while %d jobs churn", tenants, pending, churn)
		cc, sweeps, err := timeChurn(ctx, client, exec, churn)
		if err != nil {
			return err
		}
		addPercentiles(res, key+"churn_", cc, 50, 99)
		addPercentiles(res, key+"churn_sweep_", sweeps, 50, 99)
		churnP99 = append(churnP99, percentile(cc, 99))
	}
	res.add("tenants"+strconv.Itoa(tenants)+"_p99_ratio", p99[1]/p99[0])
	res.add("tenants"+strconv.Itoa(tenants)+"_churn_p99_ratio", churnP99[1]/churnP99[0])
	return nil
}

// timeChurn claims, finishes and replaces churn jobs in claims of
// scaleChurnClaim in the background and meanwhile times, round after round
// until the churn is done, a claim of scaleClaim (finished and replaced
// too) and one pass of the rescue, schedule and retention sweeps.
func timeChurn(ctx context.Context, client *queue.Client, exec driver.Executor, churn int) (claims, sweeps []time.Duration, err error) {
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	churned := make(chan error, 1)
	go func() { churned <- churnJobs(cctx, client, exec, churn) }()
	params := &driver.JobClaimParams{Queue: queue.DefaultQueue, WorkerID: scaleWorkerName, Max: scaleClaim, LeaseDuration: scaleLease}
	for {
		select {
		case err := <-churned:
			return claims, sweeps, err
		default:
		}
		start := time.Now()
		jobs, _, err := exec.JobClaim(ctx, params)
		if err != nil {
			return nil, nil, err
		}
		claims = append(claims, time.Since(start))
		if len(jobs) > 0 {
			if err := finishAll(ctx, exec, jobs); err != nil {
				return nil, nil, err
			}
			if err := replace(ctx, client, jobs); err != nil {
				return nil, nil, err
			}
		}
		start = time.Now()
		if err := sweepOnce(ctx, exec); err != nil {
			return nil, nil, err
		}
		sweeps = append(sweeps, time.Since(start))
	}
}

// churnJobs claims, finishes and replaces n jobs, scaleChurnClaim at a time.
func churnJobs(ctx context.Context, client *queue.Client, exec driver.Executor, n int) error {
	params := &driver.JobClaimParams{Queue: queue.DefaultQueue, WorkerID: scaleWorkerName + "-churn", Max: scaleChurnClaim, LeaseDuration: scaleLease}
	for emptyRun := 0; n > 0; {
		jobs, _, err := exec.JobClaim(ctx, params)
		if err != nil {
			return err
		}
		if len(jobs) == 0 {
			if emptyRun++; emptyRun > scaleMaxEmpty {
				return fmt.Errorf("churn: %d claims in a row found nothing", emptyRun)
			}
			continue
		}
		emptyRun = 0
		if err := finishAll(ctx, exec, jobs); err != nil {
			return err
		}
		if err := replace(ctx, client, jobs); err != nil {
			return err
		}
		n -= len(jobs)
	}
	return nil
}

// sweepOnce runs the maintenance sweeps once, with the default retention
// (nothing is old enough to go).
func sweepOnce(ctx context.Context, exec driver.Executor) error {
	if _, err := exec.JobRescue(ctx, &driver.JobRescueParams{Limit: 1000}); err != nil {
		return err
	}
	if _, err := exec.JobSchedule(ctx, &driver.JobScheduleParams{Limit: 1000}); err != nil {
		return err
	}
	_, err := exec.JobDeleteFinished(ctx, &driver.JobDeleteFinishedParams{
		CompletedAge: 24 * time.Hour, FailedAge: 7 * 24 * time.Hour, CancelledAge: 24 * time.Hour, Limit: 1000,
	})
	return err
}

// primeTenants makes every tenant run and finish one job.
func primeTenants(ctx context.Context, client *queue.Client, exec driver.Executor, tenants int) error {
	if _, err := enqueueSpread(ctx, client, tenants, tenants, 0); err != nil {
		return err
	}
	for left := tenants; left > 0; {
		jobs, _, err := exec.JobClaim(ctx, &driver.JobClaimParams{
			Queue: queue.DefaultQueue, WorkerID: scaleWorkerName, Max: 1000, LeaseDuration: scaleLease,
		})
		if err != nil {
			return err
		}
		if len(jobs) == 0 {
			return fmt.Errorf("priming: %d jobs left but none claimable", left)
		}
		if err := finishAll(ctx, exec, jobs); err != nil {
			return err
		}
		left -= len(jobs)
	}
	return nil
}

// timeClaims claims, finishes and replaces jobs for the warm-up and timed
// rounds and returns the timed claim and finish durations, and how many
// timed claims came back empty although jobs were pending.
func timeClaims(ctx context.Context, client *queue.Client, exec driver.Executor) (claims, finishes []time.Duration, empty int, err error) {
	params := &driver.JobClaimParams{Queue: queue.DefaultQueue, WorkerID: scaleWorkerName, Max: scaleClaim, LeaseDuration: scaleLease}
	emptyRun := 0
	for i := -scaleWarmup; i < scaleRounds; i++ {
		start := time.Now()
		jobs, _, err := exec.JobClaim(ctx, params)
		claimed := time.Since(start)
		if err != nil {
			return nil, nil, 0, err
		}
		if i >= 0 {
			claims = append(claims, claimed)
		}
		if len(jobs) == 0 {
			if emptyRun++; emptyRun > scaleMaxEmpty {
				return nil, nil, 0, fmt.Errorf("%d claims in a row found nothing", emptyRun)
			}
			if i >= 0 {
				empty++
			}
			continue
		}
		emptyRun = 0
		start = time.Now()
		if err := finishAll(ctx, exec, jobs); err != nil {
			return nil, nil, 0, err
		}
		if i >= 0 {
			finishes = append(finishes, time.Since(start))
		}
		if err := replace(ctx, client, jobs); err != nil {
			return nil, nil, 0, err
		}
	}
	return claims, finishes, empty, nil
}

// replace enqueues one new job per finished one, for the same tenants.
func replace(ctx context.Context, client *queue.Client, jobs []*queue.Job) error {
	again := make([]*queue.EnqueueParams, len(jobs))
	for j, job := range jobs {
		again[j] = &queue.EnqueueParams{Kind: benchKind, TenantID: job.TenantID, Args: emptyArgs}
	}
	_, err := client.EnqueueMany(ctx, again)
	return err
}

func finishAll(ctx context.Context, exec driver.Executor, jobs []*queue.Job) error {
	ps := make([]*driver.JobFinishParams, len(jobs))
	for i, j := range jobs {
		ps[i] = &driver.JobFinishParams{Lease: j.Lease(), Outcome: queue.OutcomeCompleted, WorkerID: scaleWorkerName}
	}
	errs, err := exec.JobFinish(ctx, ps)
	if err != nil {
		return err
	}
	return errors.Join(errs...)
}
