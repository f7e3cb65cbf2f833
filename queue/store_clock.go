package queue

import (
	"context"
	"time"
)

// storeClockMaxAge is how long a reading of the store's clock is used
// before it is read again: the monotonic clock and the store's drift apart
// by milliseconds a minute at worst, and a jump of the store's own clock is
// caught within this.
const storeClockMaxAge = time.Minute

// storeClock is the store's clock as this process reads it: the store's
// time at the last reading plus the time since, measured on the monotonic
// clock (time.Since). Periodic ticks fall due by it, so that maintenance
// leaders on hosts whose clocks disagree with each other (or with the
// database) run every tick on time, once: a tick recorded by one leader is
// due at the same moment for the next. The host's
// wall clock is not used once the store's has been read: it may be set, or
// stepped by NTP, at any moment, and a step taken as time passed would
// record ticks early (the next then falls due as much later) or stall them
// until the host's clock caught up again (TestWorker_PeriodicHostClockJumps,
// with MaintenanceConfig.HostClock jumping 10 minutes).
type storeClock struct {
	read   func(ctx context.Context) (time.Time, error) // the store's clock (driver.Executor.Now)
	host   func() time.Time                             // the host's (MaintenanceConfig.HostClock): until the first reading
	at     time.Time                                    // the store's time at readAt
	readAt time.Time                                    // time.Now() at the last reading (monotonic); zero before the first
}

// now is the store's time by the last reading, without a round trip.
func (c *storeClock) now() time.Time {
	if c.readAt.IsZero() {
		return c.host()
	}
	return c.at.Add(time.Since(c.readAt))
}

// sync reads the store's clock again when the last reading is older than
// storeClockMaxAge (or there is none), then returns now. A failed reading
// keeps the last; with none yet it returns the host's clock, which the
// periodic runner then uses only to time its retry (periodicRunner.run
// records and runs no tick until the store's clock has answered once).
func (c *storeClock) sync(ctx context.Context) time.Time {
	if c.readAt.IsZero() || time.Since(c.readAt) >= storeClockMaxAge {
		sent := time.Now()
		if at, err := c.read(ctx); err == nil {
			got := time.Now()
			c.at = at.Add(got.Sub(sent) / 2) // the store read it halfway through the round trip
			c.readAt = got
		}
	}
	return c.now()
}
