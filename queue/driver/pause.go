package driver

import "time"

// QueuePauseParams pauses or resumes a queue.
type QueuePauseParams struct {
	Queue  string
	Paused bool
}

// TenantPauseParams pauses or resumes a tenant in every queue.
type TenantPauseParams struct {
	TenantID string
	Paused   bool
}

// Pauses are the queues and tenants paused now, each with the time its
// pause began (the store's clock).
type Pauses struct {
	Queues  map[string]time.Time
	Tenants map[string]time.Time
}

// QueuePaused reports whether queue is paused.
func (p *Pauses) QueuePaused(queue string) bool {
	_, ok := p.Queues[queue]
	return ok
}

// TenantPaused reports whether tenantID is paused.
func (p *Pauses) TenantPaused(tenantID string) bool {
	_, ok := p.Tenants[tenantID]
	return ok
}
