package postgres

// ProcessNameOf is ProcessName of a given host and pid, and ProcessPool
// parses the pool out of one, for tests.
var (
	ProcessNameOf = processName
	ProcessPool   = processPool
)
