package chaos

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// netLink is a network namespace of the test's own, joined to this host
// by a veth pair with an address each in 198.18.0.0/15 (RFC 2544's range
// for network tests, never routed): the host side hostIP, the namespace's
// side nsIP, a /30 of their own. A worker started in the namespace reaches
// PostgreSQL only over the pair, so cutting the pair is a partition at the
// network level (the partition test's kernel variant): no proxy in between, the
// kernel's TCP on both ends.
type netLink struct {
	t             *testing.T
	ip            string // the ip command
	ns            string // the namespace's name
	hostIf, nsIf  string
	hostIP, nsIP  string
	cuts, healing int
}

// netLinks numbers the links of this process.
var netLinks atomic.Int32

// newNetLink creates the namespace and the pair, and removes both when the
// test ends. It skips the test, saying why, where it cannot: not root, no
// ip command (iproute2), or a kernel or sandbox that refuses namespaces or
// veth pairs.
func newNetLink(t *testing.T) *netLink {
	t.Helper()
	if uid := os.Getuid(); uid != 0 {
		t.Skipf("the network-namespace partition needs root for ip netns and veth pairs (running as uid %d)", uid)
	}
	ip, err := exec.LookPath("ip")
	if err != nil {
		t.Skip("the network-namespace partition needs the ip command (iproute2): " + err.Error())
	}
	n := int(netLinks.Add(1))
	// Names of at most 15 bytes, unique per process and link; the /30 is
	// chosen by the same numbers and checked unused on this host.
	tag := fmt.Sprintf("%d%d", os.Getpid()%100000, n)
	l := &netLink{t: t, ip: ip, ns: "docket-chaos-" + tag, hostIf: "dkc" + tag + "h", nsIf: "dkc" + tag + "n"}
	if len(l.hostIf) > 15 {
		t.Fatalf("interface name %q too long", l.hostIf)
	}
	for k := (os.Getpid() + 64*n) % 16384; ; k = (k + 1) % 16384 {
		// 16,384 /30s in 198.18.0.0/16.
		base := fmt.Sprintf("198.18.%d.%d", k/64, (k%64)*4)
		out, err := exec.Command(ip, "-4", "-o", "addr", "show", "to", base+"/30").CombinedOutput()
		if err != nil {
			t.Fatalf("ip addr show: %v\n%s", err, out)
		}
		if len(strings.TrimSpace(string(out))) == 0 {
			l.hostIP = fmt.Sprintf("198.18.%d.%d", k/64, (k%64)*4+1)
			l.nsIP = fmt.Sprintf("198.18.%d.%d", k/64, (k%64)*4+2)
			break
		}
	}
	if out, err := exec.Command(ip, "netns", "add", l.ns).CombinedOutput(); err != nil {
		t.Skipf("ip netns add refused (no network namespaces here): %v: %s", err, strings.TrimSpace(string(out)))
	}
	t.Cleanup(func() {
		// The pair goes with the namespace; deleting the host side first
		// covers a namespace that would outlive a process still in it.
		_ = exec.Command(ip, "link", "del", l.hostIf).Run()
		if out, err := exec.Command(ip, "netns", "del", l.ns).CombinedOutput(); err != nil {
			t.Errorf("ip netns del %s: %v: %s", l.ns, err, out)
		}
	})
	if out, err := exec.Command(ip, "link", "add", l.hostIf, "type", "veth", "peer", "name", l.nsIf).CombinedOutput(); err != nil {
		t.Skipf("ip link add type veth refused: %v: %s", err, strings.TrimSpace(string(out)))
	}
	l.run(ip, "link", "set", l.nsIf, "netns", l.ns)
	l.run(ip, "addr", "add", l.hostIP+"/30", "dev", l.hostIf)
	l.run(ip, "link", "set", l.hostIf, "up")
	l.run(ip, "-n", l.ns, "addr", "add", l.nsIP+"/30", "dev", l.nsIf)
	l.run(ip, "-n", l.ns, "link", "set", l.nsIf, "up")
	l.run(ip, "-n", l.ns, "link", "set", "lo", "up")
	t.Logf("network namespace %s: %s (%s) ↔ %s (%s, host)", l.ns, l.nsIP, l.nsIf, l.hostIP, l.hostIf)
	return l
}

func (l *netLink) run(name string, args ...string) {
	l.t.Helper()
	if out, err := exec.Command(name, args...).CombinedOutput(); err != nil {
		l.t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
}

// prefix is the command that runs a worker inside the namespace (ip netns
// exec execs it in place: the PID is the worker's).
func (l *netLink) prefix() []string { return []string{l.ip, "netns", "exec", l.ns} }

// cut takes the namespace's end of the pair down: the worker's packets
// have no route (its TCP retransmits into nothing, new connections fail),
// and the host's end loses its carrier, so what the server sends to the
// worker is dropped at the pair. The host keeps its route to nsIP (marked
// linkdown), so nothing falls through to another interface: checked.
func (l *netLink) cut() error {
	if out, err := exec.Command(l.ip, "-n", l.ns, "link", "set", l.nsIf, "down").CombinedOutput(); err != nil {
		return fmt.Errorf("cut: %w: %s", err, out)
	}
	l.cuts++
	out, err := exec.Command(l.ip, "-o", "route", "get", l.nsIP).CombinedOutput()
	if err != nil {
		return fmt.Errorf("ip route get %s: %w: %s", l.nsIP, err, out)
	}
	if !strings.Contains(string(out), " dev "+l.hostIf+" ") {
		return fmt.Errorf("after the cut the host routes %s elsewhere than %s: %s", l.nsIP, l.hostIf, out)
	}
	return nil
}

// heal brings the namespace's end up again.
func (l *netLink) heal() error {
	if out, err := exec.Command(l.ip, "-n", l.ns, "link", "set", l.nsIf, "up").CombinedOutput(); err != nil {
		return fmt.Errorf("heal: %w: %s", err, out)
	}
	l.healing++
	return nil
}

func (l *netLink) String() string {
	return fmt.Sprintf("veth %s↔%s (namespace %s) cut %d times, healed %d", l.hostIf, l.nsIf, l.ns, l.cuts, l.healing)
}

// allowPair lets the pair's /30 connect to the cluster whose data
// directory is dataDir without a password (pgtest's pg_hba.conf trusts
// loopback only), reloads the server's configuration and waits until a
// connection to the host's end (from the host's end: inside the /30)
// gets in: the reload is asynchronous.
func (e *env) allowPair(t *testing.T, dataDir string, l *netLink, port string) {
	t.Helper()
	hba := filepath.Join(dataDir, "pg_hba.conf")
	f, err := os.OpenFile(hba, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, err = fmt.Fprintf(f, "host all all %s/30 trust\n", l.hostIP)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.pool.Exec(context.Background(), `SELECT pg_reload_conf()`); err != nil {
		t.Fatalf("reload configuration: %v", err)
	}
	probe := fmt.Sprintf("host=%s port=%s user=postgres dbname=%s sslmode=disable connect_timeout=2",
		l.hostIP, port, databaseName(t, e.connString))
	waitFor(t, 10*time.Second, "the server to accept connections over the pair", func() (bool, string) {
		c, err := pgx.Connect(context.Background(), probe)
		if err != nil {
			return false, err.Error()
		}
		_ = c.Close(context.Background())
		return true, ""
	})
}
