package sqlitestore

import (
	"database/sql"
	"time"
)

// Times are stored as INTEGER unix microseconds, UTC, as the driver
// stores them.

func toMicros(t time.Time) int64 { return t.UnixMicro() }

func fromMicros(us int64) time.Time { return time.UnixMicro(us).UTC() }

func nullTime(v sql.NullInt64) time.Time {
	if !v.Valid {
		return time.Time{}
	}
	return fromMicros(v.Int64)
}
