package top

import (
	"fmt"
	"net/netip"
	"strings"

	"github.com/smcscope/smcscope/monitor"
)

// The spellings every screen and the text output share.

// connReason is a connection's local fallback reason and the peer's
// diagnosis by kernel name, or the wire's detail for a connection that
// did not end in SMC.
func connReason(c monitor.ConnRow) string {
	var parts []string
	d := c.Details()
	if d.Fallback.Code != 0 {
		parts = append(parts, fmt.Sprintf("%#08x %s", d.Fallback.Code, d.Fallback.Name))
	}
	if d.PeerDiagnosis.Code != 0 {
		parts = append(parts, fmt.Sprintf("peer %#08x %s", d.PeerDiagnosis.Code, d.PeerDiagnosis.Name))
	}
	if len(parts) == 0 && c.Source == monitor.SourceWire && !c.Mode.SMC() {
		return dash(d.Detail)
	}
	return dash(strings.Join(parts, "; "))
}

// groupState is a link group's kernel type, or "deleted" when the wire saw
// it end.
func groupState(g monitor.LinkGroupRow) string {
	if g.Deleted {
		return "deleted"
	}
	return dash(g.Type)
}

// reasonText writes a reason as "0x00010000 lost-path (meaning)".
func reasonText(r monitor.Reason) string {
	if r.Code == 0 && r.Name == "" {
		return "-"
	}
	return fmt.Sprintf("%#08x %s (%s)", r.Code, r.Name, r.Meaning)
}

// deletionText is a DELETE_LINK's reason, or the words for one the
// capture does not hold.
func deletionText(r monitor.Reason, notCaptured bool) string {
	if notCaptured {
		return monitor.ReasonNotCaptured
	}
	return reasonText(r)
}

// linkWire is what the wire saw of a link (QPs, packets, trouble).
func linkWire(l monitor.LinkRow) string {
	if l.QPN == 0 && l.Packets == 0 {
		return ""
	}
	s := fmt.Sprintf("qp %s<->%s pkts %d cdcs %d retrans %d psn-gaps %d nak %d rnr %d", hexOrDash(l.QPN), hexOrDash(l.PeerQPN), l.Packets, l.CDCs, l.Retransmit, l.PSNGaps, l.NAKs, l.RNRs)
	for _, c := range l.Credits {
		s += fmt.Sprintf(" credits %s %d (min %d, starved %d)", c.Dir, c.Now, c.Min, c.Starved)
	}
	return s
}

// groupKind is a group's KIND: SMC-R or SMC-D, and what an ANCK handshake
// agreed ("SMC-R credits RWWI").
func groupKind(g monitor.LinkGroupRow) string {
	if g.ANCK != "" {
		return string(g.Kind) + " " + g.ANCK
	}
	return string(g.Kind)
}

// endpoint writes a socket address, "*:PORT" when sock_diag hid it
// (IPPROTO_SMC), "-" when there is none; IPv6 in brackets.
func endpoint(ap netip.AddrPort, hidden bool) string {
	if hidden {
		return fmt.Sprintf("*:%d", ap.Port())
	}
	if !ap.IsValid() {
		return "-"
	}
	return ap.String()
}

// process writes "comm/pid", "-" without an owner.
func process(pid int, comm string) string {
	if pid == 0 {
		return "-"
	}
	return fmt.Sprintf("%s/%d", comm, pid)
}

// numOrDash writes a number, "-" for zero.
func numOrDash(v int) string {
	if v == 0 {
		return "-"
	}
	return fmt.Sprint(v)
}

// device writes "ibdev/port", "-" without a device.
func device(name string, port uint8) string {
	if name == "" {
		return "-"
	}
	return fmt.Sprintf("%s/%d", name, port)
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// version writes an SMC version and release ("v2.1"), "-" for none.
func version(v, r uint8) string {
	if v == 0 {
		return "-"
	}
	if r == 0 {
		return fmt.Sprintf("v%d", v)
	}
	return fmt.Sprintf("v%d.%d", v, r)
}

// bytesRate writes bytes per second with a binary prefix.
func bytesRate(v float64) string { return bytesText(v) + "/s" }

// noRates reports whether s is a monitor's first refresh: a rate is a
// change over the interval since the refresh before, and there is none
// (Snapshot.Interval 0; smctop --once), so its rates are "-", not 0.
func noRates(s *monitor.Snapshot) bool { return s.Interval <= 0 }

// bytesText writes a byte count with a binary prefix: 512B, 10.0KiB, 1.2MiB.
func bytesText(v float64) string {
	switch {
	case v >= 1<<40:
		return fmt.Sprintf("%.1fTiB", v/(1<<40))
	case v >= 1<<30:
		return fmt.Sprintf("%.1fGiB", v/(1<<30))
	case v >= 1<<20:
		return fmt.Sprintf("%.1fMiB", v/(1<<20))
	case v >= 1<<10:
		return fmt.Sprintf("%.1fKiB", v/(1<<10))
	}
	return fmt.Sprintf("%.0fB", v)
}

// usedText is usedBySMC as the text output and details write it:
// "true", "false" or "-".
func usedText(d monitor.DeviceRow) string {
	if !d.SMCKnown {
		return "-"
	}
	return fmt.Sprint(d.SMC)
}

// usedBySMC says whether SMC uses a device: "yes", "no", or "-" when the
// kernel's device list could not be read.
func usedBySMC(d monitor.DeviceRow) string {
	if !d.SMCKnown {
		return "-"
	}
	return yesNo(d.SMC)
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// hexOrDash writes v in hex, "-" for 0 (not known).
func hexOrDash(v uint32) string {
	if v == 0 {
		return "-"
	}
	return fmt.Sprintf("%#x", v)
}

// positive reports a rate known and above 0.
func positive(r *float64) bool { return r != nil && *r > 0 }

// countOrDash writes a count the kernel may not have given, "-" for none.
func countOrDash[N int | uint64](n *N) string {
	if n == nil {
		return "-"
	}
	return fmt.Sprint(*n)
}
