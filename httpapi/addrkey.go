package httpapi

import (
	"net"
	"net/netip"
)

// addrKey names the client an address belongs to, for the caps and
// throttles kept per client: an IPv4 address is one client, and so is an
// IPv6 /64, because a single host is routinely given a whole /64 and can
// pick any of its 2^64 addresses for each connection. IPv4-mapped IPv6
// addresses count as their IPv4 address. Anything unparsable is its own
// key, unchanged.
func addrKey(host string) string {
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return host
	}
	ip = ip.Unmap().WithZone("")
	if ip.Is4() {
		return ip.String()
	}
	return netip.PrefixFrom(ip, 64).Masked().String()
}

// hostOf is the client key (addrKey) of a remote address.
func hostOf(a net.Addr) string {
	if ta, ok := a.(*net.TCPAddr); ok {
		if ip, ok := netip.AddrFromSlice(ta.IP); ok {
			return addrKey(ip.String())
		}
	}
	host, _, err := net.SplitHostPort(a.String())
	if err != nil {
		return addrKey(a.String())
	}
	return addrKey(host)
}
