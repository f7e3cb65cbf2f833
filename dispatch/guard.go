package dispatch

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// ErrBlocked is the error of an outbound call the SSRF policy refuses.
var ErrBlocked = errors.New("dispatch: address not allowed")

// DefaultPorts are the ports a public address may be called on.
var DefaultPorts = []int{80, 443}

// blockedNets are never called unless allow-listed: loopback, private,
// link-local, CGNAT, unspecified, multicast, reserved and the IPv6 forms
// that embed an IPv4 address (IPv4-mapped addresses are unmapped first).
var blockedNets = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),       // this network, unspecified
	netip.MustParsePrefix("10.0.0.0/8"),      // private
	netip.MustParsePrefix("100.64.0.0/10"),   // CGNAT
	netip.MustParsePrefix("127.0.0.0/8"),     // loopback
	netip.MustParsePrefix("169.254.0.0/16"),  // link-local, cloud metadata
	netip.MustParsePrefix("172.16.0.0/12"),   // private
	netip.MustParsePrefix("192.0.0.0/24"),    // IETF protocol assignments
	netip.MustParsePrefix("192.168.0.0/16"),  // private
	netip.MustParsePrefix("198.18.0.0/15"),   // benchmarking
	netip.MustParsePrefix("224.0.0.0/4"),     // multicast
	netip.MustParsePrefix("240.0.0.0/4"),     // reserved, broadcast
	netip.MustParsePrefix("::/96"),           // unspecified, loopback, IPv4-compatible
	netip.MustParsePrefix("64:ff9b::/96"),    // NAT64: reaches IPv4 behind it
	netip.MustParsePrefix("64:ff9b:1::/48"),  // local NAT64
	netip.MustParsePrefix("100::/64"),        // discard
	netip.MustParsePrefix("2002::/16"),       // 6to4: embeds an IPv4 address
	netip.MustParsePrefix("fc00::/7"),        // unique local (ULA)
	netip.MustParsePrefix("fe80::/10"),       // link-local
	netip.MustParsePrefix("fec0::/10"),       // site-local (deprecated)
	netip.MustParsePrefix("ff00::/8"),        // multicast
	netip.MustParsePrefix("::ffff:0:0/96"),   // IPv4-mapped (unmapped before the check; kept as a guard)
	netip.MustParsePrefix("2001:db8::/32"),   // documentation
	netip.MustParsePrefix("2001::/32"),       // Teredo: embeds an IPv4 address
	netip.MustParsePrefix("::ffff:0:0:0/96"), // IPv4-translated
}

// Resolver looks up a host's addresses (net.DefaultResolver does).
type Resolver interface {
	LookupIPAddr(ctx context.Context, host string) ([]net.IPAddr, error)
}

// Guard is the SSRF policy of outbound calls. The address a connection is
// about to be made to is checked inside net.Dialer.Control, after name
// resolution and before connect(2), so a hostname that resolves (or
// re-resolves: DNS rebinding) to a blocked address is refused however it
// was spelt.
type Guard struct {
	// Allow lists address ranges called although they are blocked
	// (an internal service, a test receiver on loopback), on any port.
	Allow []netip.Prefix
	// Ports a public address may be called on. Default DefaultPorts.
	Ports []int
	// Resolver resolves host names. Default net.DefaultResolver.
	Resolver Resolver
	// Control, when set, runs after the guard's own check passes, just
	// before connect(2) (tests record the connects with it).
	Control func(network, address string, c syscall.RawConn) error
}

// CheckAddr reports whether the guard lets a connection to ap be made.
func (g *Guard) CheckAddr(ap netip.AddrPort) error {
	addr := ap.Addr().WithZone("").Unmap()
	for _, p := range g.Allow {
		if p.Contains(addr) {
			return nil
		}
	}
	for _, p := range blockedNets {
		if p.Contains(addr) {
			return fmt.Errorf("%w: %s is in %s", ErrBlocked, addr, p)
		}
	}
	if !addr.IsGlobalUnicast() {
		return fmt.Errorf("%w: %s is not a global unicast address", ErrBlocked, addr)
	}
	ports := g.Ports
	if len(ports) == 0 {
		ports = DefaultPorts
	}
	if !slices.Contains(ports, int(ap.Port())) {
		return fmt.Errorf("%w: port %d (allowed: %v)", ErrBlocked, ap.Port(), ports)
	}
	return nil
}

// control is the net.Dialer's Control: it runs before connect(2).
func (g *Guard) control(network, address string, c syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%w: %q is not an address", ErrBlocked, address)
	}
	if !strings.HasPrefix(network, "tcp") {
		return fmt.Errorf("%w: network %s", ErrBlocked, network)
	}
	if err := g.CheckAddr(ap); err != nil {
		return err
	}
	if g.Control != nil {
		return g.Control(network, address, c)
	}
	return nil
}

// dial resolves with the guard's resolver and connects to each address in
// turn, every connect checked by control.
func (g *Guard) dial(ctx context.Context, network, address string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(address)
	if err != nil {
		return nil, fmt.Errorf("dial %s: %w", address, err)
	}
	d := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second, Control: g.control}
	if _, err := netip.ParseAddr(host); err == nil {
		return d.DialContext(ctx, network, address)
	}
	r := g.Resolver
	if r == nil {
		r = net.DefaultResolver
	}
	addrs, err := r.LookupIPAddr(ctx, host)
	if err != nil {
		return nil, fmt.Errorf("resolve %s: %w", host, err)
	}
	var errs []error
	for _, a := range addrs {
		ip := a.IP.String()
		if a.Zone != "" {
			ip += "%" + a.Zone
		}
		conn, err := d.DialContext(ctx, network, net.JoinHostPort(ip, port))
		if err == nil {
			return conn, nil
		}
		errs = append(errs, err)
	}
	if len(errs) == 0 {
		return nil, fmt.Errorf("resolve %s: no addresses", host)
	}
	return nil, errors.Join(errs...)
}

// Client returns an HTTP client whose connections the guard checks. It
// uses no proxy from the environment and follows no redirect: a 3xx is
// returned as it is.
func (g *Guard) Client() *http.Client {
	tr := &http.Transport{
		DialContext:           g.dial,
		Proxy:                 nil,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          64,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: 0, // the request's context bounds it
	}
	return &http.Client{
		Transport:     tr,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// CheckURL refuses what no connection check can: schemes other than http
// and https, a missing host, and hosts written as numbers in forms other
// than the dotted quad ("2130706433", "0x7f.1", "017700000001"), which
// some resolvers read as IPv4 addresses.
func CheckURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBlocked, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("%w: scheme %q (want http or https)", ErrBlocked, u.Scheme)
	}
	host := u.Hostname()
	if host == "" {
		return nil, fmt.Errorf("%w: no host in %q", ErrBlocked, raw)
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return nil, fmt.Errorf("%w: port %q", ErrBlocked, p)
		}
	}
	if _, err := netip.ParseAddr(host); err != nil && numericHost(host) {
		return nil, fmt.Errorf("%w: host %q is a number but not a dotted-quad address", ErrBlocked, host)
	}
	return u, nil
}

// numericHost reports whether every label of host is a number (decimal,
// octal or hex), as inet_aton reads it; real host names end in a label
// with a letter.
func numericHost(host string) bool {
	for l := range strings.SplitSeq(strings.TrimSuffix(host, "."), ".") {
		l = strings.ToLower(l)
		if h, ok := strings.CutPrefix(l, "0x"); ok {
			l = h
			if l == "" {
				continue
			}
			if strings.Trim(l, "0123456789abcdef") != "" {
				return false
			}
			continue
		}
		if l == "" || strings.Trim(l, "0123456789") != "" {
			return false
		}
	}
	return true
}
