package queue

import (
	"context"
	"time"
)

// storeClockMaxAge is how long a reading of the store's clock is used
// before it is read again. Hosts' clocks drift by milliseconds a minute at
// worst; a jump (a host's clock set by hand) is caught within this.
const storeClockMaxAge = time.Minute

// storeClock is the store's clock as this process reads it: the host's
// clock plus the offset measured when the store's was last read. Periodic
// ticks fall due by it, so that maintenance leaders on hosts whose clocks
// disagree with each other (or with the database) run every tick on time,
// once: a tick recorded by one leader is due at the same moment for the
// next (reliability test 21).
type storeClock struct {
	read   func(ctx context.Context) (time.Time, error) // the store's clock (driver.Executor.Now)
	host   func() time.Time                             // the host's (MaintenanceConfig.HostClock)
	offset time.Duration                                // store − host at the last reading
	readAt time.Time                                    // by the host's clock; zero before the first reading
}

// now is the store's time by the last reading, without a round trip.
func (c *storeClock) now() time.Time { return c.host().Add(c.offset) }

// sync reads the store's clock again when the last reading is older than
// storeClockMaxAge (or there is none), then returns now. A failed reading
// keeps the last offset (none: the host's clock): the store is then
// unreachable for the runner's own statements too.
func (c *storeClock) sync(ctx context.Context) time.Time {
	if c.readAt.IsZero() || c.host().Sub(c.readAt) >= storeClockMaxAge {
		sent := c.host()
		if at, err := c.read(ctx); err == nil {
			got := c.host()
			c.offset = at.Sub(sent.Add(got.Sub(sent) / 2)) // the store read it halfway through the round trip
			c.readAt = got
		}
	}
	return c.now()
}
