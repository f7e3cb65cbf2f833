package postgres

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5/pgxpool"
)

// processNamePrefix starts the application_name of every session of a
// named Docket process (ProcessName).
const processNamePrefix = "docket "

// maxAppName is the longest application_name PostgreSQL keeps
// (NAMEDATALEN - 1 bytes); it truncates longer ones.
const maxAppName = 63

// ProcessName is the application_name of the sessions of a long-running
// Docket process: "docket <kind> <host>:<pid> pool=<n>", kind naming the
// program ("serve", "worker"), n its pool's MaxConns. It identifies the
// process among the server's sessions, which is how ReadConnBudget counts
// the other processes that share a connection budget, and their pools; an
// operator sees which process holds a session. A long host name is cut so
// that the whole fits in the 63 bytes PostgreSQL keeps.
func ProcessName(kind string, pool int32) string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "unknown"
	}
	return processName(kind, host, os.Getpid(), pool)
}

func processName(kind, host string, pid int, pool int32) string {
	tail := ":" + strconv.Itoa(pid) + " pool=" + strconv.Itoa(int(pool))
	head := processNamePrefix + kind + " "
	if room := maxAppName - len(head) - len(tail); len(host) > room {
		host = host[:max(room, 0)]
	}
	return head + host + tail
}

// NameProcess gives cfg's sessions the application_name ProcessName(kind,
// cfg.MaxConns) unless the connection string (or PGAPPNAME) set one: a
// process named by its user is not identified as Docket's (ReadConnBudget
// counts its sessions as anyone's).
func NameProcess(cfg *pgxpool.Config, kind string) {
	if cfg.ConnConfig.RuntimeParams["application_name"] == "" {
		cfg.ConnConfig.RuntimeParams["application_name"] = ProcessName(kind, cfg.MaxConns)
	}
}

// processPool parses the pool size out of a ProcessName; ok is false for a
// name that is not one, or whose pool was cut off.
func processPool(name string) (pool int, ok bool) {
	if !strings.HasPrefix(name, processNamePrefix) {
		return 0, false
	}
	i := strings.LastIndex(name, " pool=")
	if i < 0 {
		return 0, false
	}
	n, err := strconv.Atoi(name[i+len(" pool="):])
	if err != nil || n <= 0 {
		return 0, false
	}
	return n, true
}

// describeProcesses is n processes with their pools, for a message: "6
// processes × (pool 5 + 1)" when the pools are alike, else "6 processes'
// pools + 1 each".
func describeProcesses(n int, pools map[int]int) string {
	noun := "processes"
	if n == 1 {
		noun = "process"
	}
	if len(pools) == 1 {
		for pool := range pools {
			return fmt.Sprintf("%d %s × (pool %d + 1)", n, noun, pool)
		}
	}
	return fmt.Sprintf("%d %s' pools + 1 each", n, noun)
}
