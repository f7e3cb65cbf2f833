// The tests of the engine (queue and queue/queuetest) against both drivers. A
// module of its own, so that the engine's go.mod names neither database
// library and an application of the engine lists only its own driver's.

module github.com/docketq/docket/queue/enginetest

go 1.26.0

require (
	github.com/docketq/docket/queue v0.0.0
	github.com/docketq/docket/queue/postgres v0.0.0
	github.com/docketq/docket/queue/sqlite v0.0.0
	github.com/jackc/pgx/v5 v5.12.0
)

require (
	github.com/dustin/go-humanize v1.1.0 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/jackc/pgpassfile v1.0.0 // indirect
	github.com/jackc/pgservicefile v0.0.0-20240606120523-5a60cdf6a761 // indirect
	github.com/jackc/puddle/v2 v2.2.3 // indirect
	github.com/mattn/go-isatty v0.0.24 // indirect
	github.com/ncruces/go-strftime v1.1.0 // indirect
	github.com/remyoudompheng/bigfft v0.0.0-20230129092748-24d4a6f8daec // indirect
	github.com/robfig/cron/v3 v3.0.1 // indirect
	golang.org/x/sync v0.24.0 // indirect
	golang.org/x/sys v0.49.0 // indirect
	golang.org/x/text v0.43.0 // indirect
	modernc.org/libc v1.79.0 // indirect
	modernc.org/mathutil v1.7.1 // indirect
	modernc.org/memory v1.12.1 // indirect
	modernc.org/sqlite v1.61.1 // indirect
)

replace (
	github.com/docketq/docket/queue => ../
	github.com/docketq/docket/queue/postgres => ../postgres
	github.com/docketq/docket/queue/sqlite => ../sqlite
)
