package main

import (
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
)

// The failover warning's decision: only a server with a standby (streaming
// now, or a physical slot kept for one) whose commits do not wait for it.
func TestReplicationRisk(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		r    replication
		want string // a word of the warning; "" for none
	}{
		{"no standby", replication{SyncCommit: "on"}, ""},
		{"no standby, commit local", replication{SyncCommit: "local"}, ""},
		{"async standby", replication{Standbys: 1, Slots: 1, SyncCommit: "on"}, "synchronous_standby_names is empty"},
		{"async, blank names", replication{Standbys: 1, SyncStandbyNames: "  ", SyncCommit: "on"}, "asynchronously"},
		{"slot of a disconnected standby", replication{Slots: 1, SyncCommit: "on"}, "asynchronously"},
		{"sync standby", replication{Standbys: 1, Slots: 1, SyncStandbyNames: "standby1", SyncCommit: "on"}, ""},
		{"sync, remote_write", replication{Standbys: 1, SyncStandbyNames: "ANY 1 (*)", SyncCommit: "remote_write"}, ""},
		{"sync, remote_apply", replication{Standbys: 2, SyncStandbyNames: "FIRST 1 (a, b)", SyncCommit: "remote_apply"}, ""},
		{"sync names, commit local", replication{Standbys: 1, SyncStandbyNames: "standby1", SyncCommit: "local"}, "synchronous_commit is local"},
		{"sync names, commit off", replication{Slots: 1, SyncStandbyNames: "*", SyncCommit: "off"}, "synchronous_commit is off"},
	} {
		got := c.r.risk()
		switch {
		case c.want == "" && got != "":
			t.Errorf("%s: %+v warns %q, want no warning", c.name, c.r, got)
		case c.want != "" && !strings.Contains(got, c.want):
			t.Errorf("%s: %+v warns %q, want one saying %q", c.name, c.r, got, c.want)
		}
	}
}

// Both forms of a connection string that list an HA pair's hosts name
// PostgreSQL for --database-url, and pgx reads both hosts and the
// read-write target from each.
func TestIsPostgres_MultiHost(t *testing.T) {
	t.Parallel()
	for _, s := range []string{
		"postgres://docket@/docket?host=/run/pg1,/run/pg2&port=5432,5433&target_session_attrs=read-write",
		"postgresql://docket@db1:5432,db2:5433/docket?target_session_attrs=read-write",
		"host=/run/pg1,/run/pg2 port=5432,5433 user=docket dbname=docket target_session_attrs=read-write",
	} {
		if !isPostgres(s) {
			t.Errorf("isPostgres(%q) = false", s)
		}
		cfg, err := pgxpool.ParseConfig(s)
		if err != nil {
			t.Errorf("parse %q: %v", s, err)
			continue
		}
		cc := cfg.ConnConfig
		hosts := map[string]bool{cc.Host: true} // a host of sslmode=prefer has a fallback without TLS
		for _, f := range cc.Fallbacks {
			hosts[f.Host] = true
		}
		if len(hosts) != 2 || cc.ValidateConnect == nil {
			t.Errorf("%q: hosts %v, read-write check %t; want 2 and a check", s, hosts, cc.ValidateConnect != nil)
		}
	}
	for _, s := range []string{"", "sqlite://x.db", "./docket.db", "mysql://db/x", "docket=1"} {
		if isPostgres(s) {
			t.Errorf("isPostgres(%q) = true", s)
		}
	}
}
