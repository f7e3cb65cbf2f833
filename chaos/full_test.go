//go:build chaos

package chaos

import (
	"testing"
	"time"

	"github.com/docketq/docket/internal/faultproxy"
	"github.com/docketq/docket/queue/postgres/pgtest"
)

// The full-size variants of the chaos tests (docs/reliability.md), for the
// nightly tier (`go test -tags chaos -timeout 45m ./chaos/...`).

// TestKillStorm_Full is the kill -9 storm: 100,000 jobs across 50 tenants, 4 workers
// × 8, a random worker SIGKILLed every 2 s for 60 s, lease 5 s, rescuer
// every 1 s.
func TestKillStorm_Full(t *testing.T) {
	runStorm(t, stormConfig{
		jobs: 100_000, tenants: 50, procs: 4, slots: 8,
		storm: 60 * time.Second, every: 2 * time.Second,
		lease: 5 * time.Second, rescue: time.Second,
		drain: 5 * time.Minute, batch: 500,
	})
}

// TestKillStorm_Medium is the kill -9 storm at the size the smoke tier ran until
// it was cut to 3 minutes: 10,000 jobs, a kill every 2 s for 16 s.
func TestKillStorm_Medium(t *testing.T) {
	runStorm(t, stormConfig{
		jobs: 10_000, tenants: 50, procs: 4, slots: 8,
		storm: 16 * time.Second, every: 2 * time.Second,
		lease: 2 * time.Second, rescue: 250 * time.Millisecond,
		drain: 30 * time.Second, batch: 20,
	})
}

// TestPoisonPill_Full is the poison pill at full size: the pill among 2,000 normal
// jobs.
func TestPoisonPill_Full(t *testing.T) {
	runPoison(t, 2000, 2*time.Minute)
}

// TestTenantStarvation_Full is tenant starvation at full size: tenant A floods 50,000
// jobs of 10 ms, 4 workers × 8.
func TestTenantStarvation_Full(t *testing.T) {
	runStarvation(t, starvationConfig{
		flood: 50_000, others: 25, perOther: 10, procs: 4, slots: 8,
		p95: 2 * time.Second, aloneShare: 0.35, drain: 10 * time.Minute,
	})
}

// TestPartition_Full is the blackhole partition at full size: a worker of four
// blackholed from PostgreSQL for 30 s (15 leases of 2 s) while 20,000
// jobs are enqueued over 60 s.
func TestPartition_Full(t *testing.T) {
	runPartition(t, partitionConfig{mode: faultproxy.Drop, jobs: 20_000, procs: 3, slots: 8,
		lease: 2 * time.Second, fault: 30 * time.Second, produce: 60 * time.Second, drain: 3 * time.Minute})
}

// TestPartitionNetns_MidTransaction is the partition at the network level: the
// victim runs in a network namespace of its own and reaches PostgreSQL
// over a veth pair (the server listens on the host's end, in
// 198.18.0.0/15, besides loopback); the pair is cut — the namespace's end
// taken down — for 3 leases while the victim holds a completing
// transaction open, as in TestPartition_MidTransaction, then brought up.
// No proxy: both ends' kernels see the partition as a real one (the
// worker's TCP retransmits into nothing, the server's replies are dropped
// at the pair). Same bounds as the proxy's variants. Skipped, saying why,
// when not root or where network namespaces or veth pairs are refused.
//
// In the full tier, not the smoke tier: in 2 of 6 runs on a loaded 2-core
// box one transaction of the victim that had written docket_jobs stayed
// idle in transaction on the server through the whole partition although
// CompleteTx gives it an idle limit of one lease (docs/reliability.md,
// not diagnosed yet); the proxy's variant has not shown it.
func TestPartitionNetns_MidTransaction(t *testing.T) {
	runPartition(t, partitionConfig{netns: true, jobs: 1200, procs: 2, slots: 8, midTx: true, hold: 300 * time.Millisecond,
		lease: 2 * time.Second, fault: 6 * time.Second, produce: 12 * time.Second, drain: 40 * time.Second})
}

// TestPartitionReset_Full is the partition's reset variant at full size.
func TestPartitionReset_Full(t *testing.T) {
	runPartition(t, partitionConfig{mode: faultproxy.Reset, jobs: 20_000, procs: 3, slots: 8,
		lease: 2 * time.Second, fault: 30 * time.Second, produce: 60 * time.Second, drain: 3 * time.Minute})
}

// TestPGRestart_Full is the fast restart at full size: 20,000 jobs, the
// restart at t = 10 s.
func TestPGRestart_Full(t *testing.T) {
	runServerFault(t, serverFault{name: "pg_ctl restart -m fast", inject: func(c *pgtest.Cluster) error {
		return c.Restart("fast")
	}}, serverFaultConfig{jobs: 20_000, procs: 4, slots: 8, produce: 30 * time.Second, faultAfter: 10 * time.Second})
}

// TestPGCrash_Full is the durable crash at full size: the crash at t = 10 s.
func TestPGCrash_Full(t *testing.T) {
	runServerFault(t, serverFault{name: "pg_ctl stop -m immediate; pg_ctl start", durable: true,
		inject: func(c *pgtest.Cluster) error {
			if err := c.StopServer("immediate"); err != nil {
				return err
			}
			return c.StartServer()
		}}, serverFaultConfig{jobs: 10_000, procs: 4, slots: 8, produce: 30 * time.Second, faultAfter: 10 * time.Second})
}

// TestListenerKilled_Full is the LISTEN kill at full size: LISTEN backends
// terminated every 5 s for 60 s.
func TestListenerKilled_Full(t *testing.T) {
	runListenerKilled(t, 60*time.Second, 5*time.Second)
}

// TestHorizonPin_Full is the horizon pin in the full tier: a 3-minute
// pin after a 30 s baseline, 1 minute of churn after it.
func TestHorizonPin_Full(t *testing.T) {
	runHorizonPin(t, horizonConfig{rate: 200, procs: 4, slots: 8,
		baseline: 30 * time.Second, pin: 3 * time.Minute, after: time.Minute,
		drain: 2 * time.Minute, ageSlack: time.Second})
}

// TestXIDBudget_Full is the XID budget at full size: 10,000 jobs (9,000 in
// transactions of 100, 1,000 singly).
func TestXIDBudget_Full(t *testing.T) {
	runXIDBudget(t, 9000, 1000)
}

// TestNotifyCost_Full is the NOTIFY cost measurement at full size: 60 s per mode.
func TestNotifyCost_Full(t *testing.T) {
	runNotifyCost(t, time.Minute)
}

// TestPriorityInversion_Full is the priority inversion with 5 s low-priority
// jobs (the smoke tier's run 3 s).
func TestPriorityInversion_Full(t *testing.T) {
	runPriority(t, 5*time.Second)
}
