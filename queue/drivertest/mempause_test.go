package drivertest_test

import (
	"context"
	"fmt"
	"maps"
	"time"

	"github.com/docketq/docket/queue"
	"github.com/docketq/docket/queue/driver"
)

func (x *memExec) QueuePauseSet(_ context.Context, p *driver.QueuePauseParams) error {
	if err := queue.ValidateQueueName(p.Queue); err != nil {
		return err
	}
	return x.write(func(st *memState, notify func(string, string)) error {
		if !p.Paused {
			delete(st.pausedQueues, p.Queue)
			notify(driver.TopicInsert, p.Queue)
		} else if _, ok := st.pausedQueues[p.Queue]; !ok {
			st.pausedQueues[p.Queue] = time.Now()
		}
		return nil
	})
}

func (x *memExec) TenantPauseSet(_ context.Context, p *driver.TenantPauseParams) error {
	if p.TenantID == "" {
		return fmt.Errorf("%w: pause needs a tenant", queue.ErrInvalid)
	}
	return x.write(func(st *memState, notify func(string, string)) error {
		if p.Paused {
			if _, ok := st.pausedTenants[p.TenantID]; !ok {
				st.pausedTenants[p.TenantID] = time.Now()
			}
			return nil
		}
		delete(st.pausedTenants, p.TenantID)
		for _, j := range st.jobs {
			if j.TenantID == p.TenantID && j.State == queue.StatePending {
				notify(driver.TopicInsert, j.Queue)
			}
		}
		return nil
	})
}

func (x *memExec) PauseList(context.Context) (*queue.Pauses, error) {
	var out *queue.Pauses
	err := x.read(func(st *memState) error {
		out = &queue.Pauses{Queues: maps.Clone(st.pausedQueues), Tenants: maps.Clone(st.pausedTenants)}
		return nil
	})
	return out, err
}
