package webhook_test

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/webhook"
)

// registryRows is IANA's IPv4 and IPv6 Special-Purpose Address Registries
// row by row (2025), written out independently of webhook.SpecialPurpose:
// an address at each end of the block and whether a live endpoint may use
// it. "N/A" rows: 6to4 and Teredo are judged by the embedded IPv4 address
// (their ends embed 0.0.0.0 and 255.255.255.255: refused), the deprecated
// 6to4 relay anycast and ORCHID blocks are refused.
var registryRows = []struct {
	prefix      string
	first, last string
	global      bool
}{
	{"0.0.0.0/8", "0.0.0.1", "0.255.255.255", false},
	{"0.0.0.0/32", "0.0.0.0", "0.0.0.0", false},
	{"10.0.0.0/8", "10.0.0.0", "10.255.255.255", false},
	{"100.64.0.0/10", "100.64.0.0", "100.127.255.255", false},
	{"127.0.0.0/8", "127.0.0.0", "127.255.255.255", false},
	{"169.254.0.0/16", "169.254.0.0", "169.254.255.255", false},
	{"172.16.0.0/12", "172.16.0.0", "172.31.255.255", false},
	{"192.0.0.0/24", "192.0.0.11", "192.0.0.255", false},
	{"192.0.0.0/29", "192.0.0.0", "192.0.0.7", false},
	{"192.0.0.8/32", "192.0.0.8", "192.0.0.8", false},
	{"192.0.0.9/32", "192.0.0.9", "192.0.0.9", true},
	{"192.0.0.10/32", "192.0.0.10", "192.0.0.10", true},
	{"192.0.0.170/32", "192.0.0.170", "192.0.0.170", false},
	{"192.0.0.171/32", "192.0.0.171", "192.0.0.171", false},
	{"192.0.2.0/24", "192.0.2.0", "192.0.2.255", false},
	{"192.31.196.0/24", "192.31.196.0", "192.31.196.255", true},
	{"192.52.193.0/24", "192.52.193.0", "192.52.193.255", true},
	{"192.88.99.0/24", "192.88.99.0", "192.88.99.255", false},
	{"192.168.0.0/16", "192.168.0.0", "192.168.255.255", false},
	{"192.175.48.0/24", "192.175.48.0", "192.175.48.255", true},
	{"198.18.0.0/15", "198.18.0.0", "198.19.255.255", false},
	{"198.51.100.0/24", "198.51.100.0", "198.51.100.255", false},
	{"203.0.113.0/24", "203.0.113.0", "203.0.113.255", false},
	{"240.0.0.0/4", "240.0.0.0", "255.255.255.254", false},
	{"255.255.255.255/32", "255.255.255.255", "255.255.255.255", false},
	{"::1/128", "::1", "::1", false},
	{"::/128", "::", "::", false},
	{"::ffff:0:0/96", "::ffff:0.0.0.0", "::ffff:255.255.255.255", false},
	{"64:ff9b::/96", "64:ff9b::a00:1", "64:ff9b::ffff:ffff", false},  // 10.0.0.1, 255.255.255.255
	{"64:ff9b::/96", "64:ff9b::5db8:d70e", "64:ff9b::808:808", true}, // 93.184.215.14, 8.8.8.8
	{"64:ff9b:1::/48", "64:ff9b:1::", "64:ff9b:1:ffff:ffff:ffff:ffff:ffff", false},
	{"100::/64", "100::", "100::ffff:ffff:ffff:ffff", false},
	{"100:0:0:1::/64", "100:0:0:1::", "100:0:0:1:ffff:ffff:ffff:ffff", false},
	{"2001::/23", "2001:100::", "2001:1ff:ffff:ffff:ffff:ffff:ffff:ffff", false},
	{"2001::/32", "2001::", "2001:0:ffff:ffff:ffff:ffff:ffff:ffff", false},
	{"2001::/32", "2001:0:4136:e378:8000:63bf:a247:28f1", "2001:0:5ef5:79fd:0:0:a247:28f1", true}, // client 93.184.215.14 (~a247:28f1)
	{"2001:1::1/128", "2001:1::1", "2001:1::1", true},
	{"2001:1::2/128", "2001:1::2", "2001:1::2", true},
	{"2001:1::3/128", "2001:1::3", "2001:1::3", true},
	{"2001:2::/48", "2001:2::", "2001:2:0:ffff:ffff:ffff:ffff:ffff", false},
	{"2001:3::/32", "2001:3::", "2001:3:ffff:ffff:ffff:ffff:ffff:ffff", true},
	{"2001:4:112::/48", "2001:4:112::", "2001:4:112:ffff:ffff:ffff:ffff:ffff", true},
	{"2001:10::/28", "2001:10::", "2001:1f:ffff:ffff:ffff:ffff:ffff:ffff", false},
	{"2001:20::/28", "2001:20::", "2001:2f:ffff:ffff:ffff:ffff:ffff:ffff", true},
	{"2001:30::/28", "2001:30::", "2001:3f:ffff:ffff:ffff:ffff:ffff:ffff", true},
	{"2001:db8::/32", "2001:db8::", "2001:db8:ffff:ffff:ffff:ffff:ffff:ffff", false},
	{"2002::/16", "2002::", "2002:ffff:ffff:ffff:ffff:ffff:ffff:ffff", false},
	{"2002::/16", "2002:5db8:d70e::1", "2002:808:808:ffff::", true},
	{"2620:4f:8000::/48", "2620:4f:8000::", "2620:4f:8000:ffff:ffff:ffff:ffff:ffff", true},
	{"3fff::/20", "3fff::", "3fff:fff:ffff:ffff:ffff:ffff:ffff:ffff", false},
	{"5f00::/16", "5f00::", "5f00:ffff:ffff:ffff:ffff:ffff:ffff:ffff", false},
	{"fc00::/7", "fc00::", "fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", false},
	{"fe80::/10", "fe80::", "febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff", false},
}

// TestSpecialPurposeRegistries: every row of both registries, at both ends
// of its block, under a live endpoint's policy; the operator's
// allow-private setting lets everything through.
func TestSpecialPurposeRegistries(t *testing.T) {
	live, onprem := webhook.PolicyFor(account.Live, false), webhook.PolicyFor(account.Live, true)
	covered := map[string]bool{}
	for _, r := range registryRows {
		p := netip.MustParsePrefix(r.prefix)
		covered[p.String()] = true
		for _, s := range []string{r.first, r.last} {
			a := netip.MustParseAddr(s)
			if !p.Contains(a) {
				t.Fatalf("%s is not in %s", s, r.prefix)
			}
			msg := live.AddrProblem(a)
			if (msg == "") != r.global {
				t.Errorf("%s (%s): live policy says %q; want allowed=%v", s, r.prefix, msg, r.global)
			}
			if !r.global && !strings.Contains(msg, "address") {
				t.Errorf("%s: message %q does not say what is wrong", s, msg)
			}
			if onprem.AddrProblem(a) != "" {
				t.Errorf("%s: refused with --webhook-allow-private", s)
			}
		}
	}
	for _, r := range webhook.SpecialPurpose {
		if !covered[r.Prefix.String()] {
			t.Errorf("registry row %s (%s) has no case here", r.Prefix, r.Name)
		}
	}
	if len(webhook.SpecialPurpose) != len(covered) {
		t.Errorf("%d rows in the code, %d prefixes tested", len(webhook.SpecialPurpose), len(covered))
	}
	// Public addresses outside every row, multicast and unassigned space.
	for s, global := range map[string]bool{"93.184.215.14": true, "8.8.8.8": true, "1.1.1.1": true, "2606:2800:21f:cb07:6820:80da:af6b:8b2c": true,
		"2a00:1450:4001:82b::200e": true, "224.0.0.1": false, "239.255.255.250": false, "ff02::1": false, "ff0e::1": false,
		"fec0::1": false, "4000::1": false, "::2:0:0:1": false, "1::": false, "192.0.1.255": true, "192.0.3.0": true, "198.17.255.255": true, "198.20.0.0": true,
		"223.255.255.255": true, "100.63.255.255": true, "100.128.0.0": true, "172.15.255.255": true, "172.32.0.0": true} {
		if got := live.AddrProblem(netip.MustParseAddr(s)) == ""; got != global {
			t.Errorf("%s: allowed %v, want %v", s, got, global)
		}
	}
}

// TestEmbeddedIPv4: every IPv4 registry row, embedded in each IPv6 form
// (IPv4-mapped, IPv4-compatible, NAT64 64:ff9b::/96, 6to4, Teredo with the
// client address inverted), is judged like the IPv4 address itself; the
// issue's addresses are refused; a loopback address is allowed to a test
// endpoint only as itself or IPv4-mapped.
func TestEmbeddedIPv4(t *testing.T) {
	live, test := webhook.PolicyFor(account.Live, false), webhook.PolicyFor(account.Test, false)
	embed := map[string]func(v4 [4]byte) netip.Addr{
		"mapped": func(v [4]byte) netip.Addr {
			return netip.AddrFrom16([16]byte{10: 0xff, 11: 0xff, 12: v[0], 13: v[1], 14: v[2], 15: v[3]})
		},
		"compatible": func(v [4]byte) netip.Addr { return netip.AddrFrom16([16]byte{12: v[0], 13: v[1], 14: v[2], 15: v[3]}) },
		"nat64": func(v [4]byte) netip.Addr {
			return netip.AddrFrom16([16]byte{0: 0, 1: 0x64, 2: 0xff, 3: 0x9b, 12: v[0], 13: v[1], 14: v[2], 15: v[3]})
		},
		"6to4": func(v [4]byte) netip.Addr {
			return netip.AddrFrom16([16]byte{0: 0x20, 1: 0x02, 2: v[0], 3: v[1], 4: v[2], 5: v[3], 15: 1})
		},
		"teredo": func(v [4]byte) netip.Addr {
			// server 65.54.227.120, flags 0x8000, port, client inverted
			return netip.AddrFrom16([16]byte{0: 0x20, 1: 0x01, 4: 65, 5: 54, 6: 227, 7: 120, 8: 0x80, 10: 0x63, 11: 0xbf,
				12: ^v[0], 13: ^v[1], 14: ^v[2], 15: ^v[3]})
		},
	}
	for _, r := range registryRows {
		p := netip.MustParsePrefix(r.prefix)
		if !p.Addr().Is4() {
			continue
		}
		for _, s := range []string{r.first, r.last} {
			v4 := netip.MustParseAddr(s)
			for form, f := range embed {
				a := f(v4.As4())
				if e, _, ok := webhook.EmbeddedIPv4(a); form != "compatible" || s != "0.0.0.0" && s != "0.0.0.1" {
					if !ok || e != v4 {
						t.Errorf("%s form of %s: %s embeds %v %v", form, s, a, e, ok)
					}
				}
				if got := live.AddrProblem(a) == ""; got != r.global {
					t.Errorf("%s (%s form of %s, %s): allowed %v, want %v: %q", a, form, s, r.prefix, got, r.global, live.AddrProblem(a))
				}
			}
		}
	}
	for _, s := range []string{"::127.0.0.1", "::7f00:1", "64:ff9b::a9fe:a9fe", "2002:a9fe:a9fe::1", "198.18.0.1", "192.0.0.192", "240.0.0.1",
		"255.255.255.255", "::ffff:169.254.169.254", "2001:0:4136:e378:8000:63bf:5601:5601", "64:ff9b:1::a9fe:a9fe"} {
		a := netip.MustParseAddr(s)
		if msg := live.AddrProblem(a); msg == "" {
			t.Errorf("live endpoint may reach %s", s)
		}
	}
	for s, ok := range map[string]bool{"127.0.0.1": true, "::1": true, "::ffff:127.0.0.1": true, "::127.0.0.1": false,
		"64:ff9b::7f00:1": false, "2002:7f00:1::": false, "2001:0:4136:e378:8000:63bf:80ff:fffe": false, "10.0.0.1": false} {
		if got := test.AddrProblem(netip.MustParseAddr(s)) == ""; got != ok {
			t.Errorf("test endpoint, %s: allowed %v, want %v", s, got, ok)
		}
	}
	if msg := live.AddrProblem(netip.MustParseAddr("64:ff9b::a9fe:a9fe")); !strings.Contains(msg, "169.254.169.254") || !strings.Contains(msg, "NAT64") {
		t.Errorf("NAT64 message does not name the embedded address: %q", msg)
	}
}
