package webhook

import (
	"fmt"
	"net/netip"
)

// SpecialRange is one row of IANA's IPv4 or IPv6 Special-Purpose Address
// Registry (iana-ipv4-special-registry, iana-ipv6-special-registry, as of
// 2025): a prefix, its name, the RFC that made it and whether the registry
// marks it globally reachable. The most specific row containing an address
// decides (192.0.0.9/32 is reachable inside the unreachable 192.0.0.0/24).
type SpecialRange struct {
	Prefix netip.Prefix
	Name   string
	RFC    string
	// Global is the registry's "Globally Reachable" column. Rows marked
	// N/A (6to4, Teredo, the deprecated 6to4 relay anycast and ORCHID)
	// are resolved here: 6to4 and Teredo are judged by the IPv4 address
	// they embed (Embedded), the deprecated rows are refused.
	Global bool
	// Embedded: the address carries an IPv4 address (EmbeddedIPv4) that
	// is judged instead.
	Embedded bool
}

func row(prefix, name, rfc string, global bool) SpecialRange {
	return SpecialRange{Prefix: netip.MustParsePrefix(prefix), Name: name, RFC: rfc, Global: global}
}

// SpecialPurpose is every row of both registries. A live endpoint may reach
// an address only where the most specific row containing it (if any) is
// globally reachable.
var SpecialPurpose = []SpecialRange{
	// IPv4 (iana-ipv4-special-registry)
	row("0.0.0.0/8", `"This network"`, "RFC 791", false),
	row("0.0.0.0/32", `"This host on this network"`, "RFC 1122", false),
	row("10.0.0.0/8", "Private-Use", "RFC 1918", false),
	row("100.64.0.0/10", "Shared Address Space", "RFC 6598", false),
	row("127.0.0.0/8", "Loopback", "RFC 1122", false),
	row("169.254.0.0/16", "Link Local", "RFC 3927", false),
	row("172.16.0.0/12", "Private-Use", "RFC 1918", false),
	row("192.0.0.0/24", "IETF Protocol Assignments", "RFC 6890", false),
	row("192.0.0.0/29", "IPv4 Service Continuity Prefix", "RFC 7335", false),
	row("192.0.0.8/32", "IPv4 dummy address", "RFC 7600", false),
	row("192.0.0.9/32", "Port Control Protocol Anycast", "RFC 7723", true),
	row("192.0.0.10/32", "Traversal Using Relays around NAT Anycast", "RFC 8155", true),
	row("192.0.0.170/32", "NAT64/DNS64 Discovery", "RFC 8880", false),
	row("192.0.0.171/32", "NAT64/DNS64 Discovery", "RFC 8880", false),
	row("192.0.2.0/24", "Documentation (TEST-NET-1)", "RFC 5737", false),
	row("192.31.196.0/24", "AS112-v4", "RFC 7535", true),
	row("192.52.193.0/24", "AMT", "RFC 7450", true),
	row("192.88.99.0/24", "Deprecated (6to4 Relay Anycast)", "RFC 7526", false),
	row("192.168.0.0/16", "Private-Use", "RFC 1918", false),
	row("192.175.48.0/24", "Direct Delegation AS112 Service", "RFC 7534", true),
	row("198.18.0.0/15", "Benchmarking", "RFC 2544", false),
	row("198.51.100.0/24", "Documentation (TEST-NET-2)", "RFC 5737", false),
	row("203.0.113.0/24", "Documentation (TEST-NET-3)", "RFC 5737", false),
	row("240.0.0.0/4", "Reserved", "RFC 1112", false),
	row("255.255.255.255/32", "Limited Broadcast", "RFC 919", false),
	// IPv6 (iana-ipv6-special-registry)
	row("::1/128", "Loopback Address", "RFC 4291", false),
	row("::/128", "Unspecified Address", "RFC 4291", false),
	row("::ffff:0:0/96", "IPv4-mapped Address", "RFC 4291", false),
	{Prefix: netip.MustParsePrefix("64:ff9b::/96"), Name: "IPv4-IPv6 Translat.", RFC: "RFC 6052", Global: true, Embedded: true},
	row("64:ff9b:1::/48", "IPv4-IPv6 Translat.", "RFC 8215", false),
	row("100::/64", "Discard-Only Address Block", "RFC 6666", false),
	row("100:0:0:1::/64", "Dummy IPv6 Prefix", "RFC 9780", false),
	row("2001::/23", "IETF Protocol Assignments", "RFC 2928", false),
	{Prefix: netip.MustParsePrefix("2001::/32"), Name: "TEREDO", RFC: "RFC 4380", Embedded: true},
	row("2001:1::1/128", "Port Control Protocol Anycast", "RFC 7723", true),
	row("2001:1::2/128", "Traversal Using Relays around NAT Anycast", "RFC 8155", true),
	row("2001:1::3/128", "DNS-SD Service Registration Protocol Anycast", "RFC 9665", true),
	row("2001:2::/48", "Benchmarking", "RFC 5180", false),
	row("2001:3::/32", "AMT", "RFC 7450", true),
	row("2001:4:112::/48", "AS112-v6", "RFC 7535", true),
	row("2001:10::/28", "Deprecated (previously ORCHID)", "RFC 4843", false),
	row("2001:20::/28", "ORCHIDv2", "RFC 7343", true),
	row("2001:30::/28", "Drone Remote ID Protocol Entity Tags (DETs) Prefix", "RFC 9374", true),
	row("2001:db8::/32", "Documentation", "RFC 3849", false),
	{Prefix: netip.MustParsePrefix("2002::/16"), Name: "6to4", RFC: "RFC 3056", Embedded: true},
	row("2620:4f:8000::/48", "Direct Delegation AS112 Service", "RFC 7534", true),
	row("3fff::/20", "Documentation", "RFC 9637", false),
	row("5f00::/16", "Segment Routing (SRv6) SIDs", "RFC 9602", false),
	row("fc00::/7", "Unique-Local", "RFC 4193", false),
	row("fe80::/10", "Link-Local Unicast", "RFC 4291", false),
}

var (
	ipv4Multicast  = netip.MustParsePrefix("224.0.0.0/4")
	ipv6Multicast  = netip.MustParsePrefix("ff00::/8")
	ipv6Global     = netip.MustParsePrefix("2000::/3")
	ipv4Compatible = netip.MustParsePrefix("::/96")
	ipv4Mapped     = netip.MustParsePrefix("::ffff:0:0/96")
	nat64WellKnown = netip.MustParsePrefix("64:ff9b::/96")
	sixToFour      = netip.MustParsePrefix("2002::/16")
	teredo         = netip.MustParsePrefix("2001::/32")
	unspecifiedV6  = netip.IPv6Unspecified()
	loopbackV6     = netip.IPv6Loopback()
)

// special returns the most specific registry row containing addr.
func special(addr netip.Addr) (SpecialRange, bool) {
	var best SpecialRange
	found := false
	for _, r := range SpecialPurpose {
		if r.Prefix.Contains(addr) && (!found || r.Prefix.Bits() > best.Prefix.Bits()) {
			best, found = r, true
		}
	}
	return best, found
}

// EmbeddedIPv4 returns the IPv4 address an IPv6 address carries and the
// form that carries it: IPv4-mapped (::ffff:a.b.c.d), IPv4-compatible
// (::a.b.c.d, deprecated; not :: and ::1), NAT64 (64:ff9b::a.b.c.d,
// RFC 6052), 6to4 (2002:AABB:CCDD::/48, RFC 3056) and Teredo (2001::/32,
// RFC 4380: the client's address is the last 32 bits inverted). The
// local-use NAT64 prefix 64:ff9b:1::/48 is refused whole by its registry
// row, so it is not decoded here.
func EmbeddedIPv4(addr netip.Addr) (netip.Addr, string, bool) {
	if !addr.Is6() {
		return netip.Addr{}, "", false
	}
	addr = addr.WithZone("")
	b := addr.As16()
	last := func() netip.Addr { return netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]}) }
	switch {
	case ipv4Mapped.Contains(addr):
		return last(), "an IPv4-mapped address", true
	case addr == unspecifiedV6 || addr == loopbackV6:
		return netip.Addr{}, "", false
	case ipv4Compatible.Contains(addr):
		return last(), "an IPv4-compatible address", true
	case nat64WellKnown.Contains(addr):
		return last(), "a NAT64 address (64:ff9b::/96)", true
	case sixToFour.Contains(addr):
		return netip.AddrFrom4([4]byte{b[2], b[3], b[4], b[5]}), "a 6to4 address (2002::/16)", true
	case teredo.Contains(addr):
		return netip.AddrFrom4([4]byte{^b[12], ^b[13], ^b[14], ^b[15]}), "a Teredo address (2001::/32)", true
	}
	return netip.Addr{}, "", false
}

// NotGlobal says what kind of address addr is and why it is not a
// globally reachable unicast address; kind is "" when it is one. It is not
// when the most specific row of the special-purpose registries containing
// it says so, when it is multicast, when it is an IPv6 address outside
// global unicast space (2000::/3, IANA's IPv6 address space registry), or
// when it embeds an IPv4 address that is not (EmbeddedIPv4: the embedded
// address decides).
func NotGlobal(addr netip.Addr) (kind, why string) {
	addr = addr.WithZone("")
	if v4, form, ok := EmbeddedIPv4(addr); ok {
		if kind, why := NotGlobal(v4); kind != "" {
			return kind, fmt.Sprintf("%s is %s embedding %s; %s", addr, form, v4, why)
		}
		return "", ""
	}
	if r, ok := special(addr); ok && !r.Global {
		return kindOf(r), fmt.Sprintf("%s is in %s, %s (%s), not globally reachable", addr, r.Prefix, r.Name, r.RFC)
	}
	switch {
	case ipv4Multicast.Contains(addr), ipv6Multicast.Contains(addr):
		return "multicast", fmt.Sprintf("%s is a multicast address", addr)
	case addr.Is6() && !ipv6Global.Contains(addr) && !nat64WellKnown.Contains(addr):
		if r, ok := special(addr); ok && r.Global {
			return "", ""
		}
		return "reserved", fmt.Sprintf("%s is outside IPv6 global unicast space (2000::/3)", addr)
	}
	return "", ""
}

// kindOf names a refused row's kind for messages.
func kindOf(r SpecialRange) string {
	switch r.Name {
	case "Loopback", "Loopback Address":
		return "loopback"
	case "Private-Use", "Unique-Local", "Shared Address Space":
		return "private"
	case "Link Local", "Link-Local Unicast":
		return "link-local"
	case `"This network"`, `"This host on this network"`, "Unspecified Address":
		return "unspecified"
	case "Limited Broadcast":
		return "broadcast"
	}
	return "special-purpose"
}
