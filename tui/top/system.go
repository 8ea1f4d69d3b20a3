package top

import (
	"fmt"
	"io"
	"strings"

	"github.com/gdamore/tcell/v2"

	"github.com/smcscope/smcscope/monitor"
	"github.com/smcscope/smcscope/tui"
)

var systemColumns = []tui.Column{
	col("WHAT", "a fact of the kernel's SMC: version and features (smcr info), EIDs (smcr ueid/seid show), the PNET table (smc_pnet), devices' PNET IDs, net.smc settings"),
	col("VALUE", "its value; - where the kernel reports none"),
	col("NOTE", "what it means; user: set with smc_pnet, hardware: from the device"),
}

// sysRow is one line of the system screen.
type sysRow struct {
	key, what, value, note string
	warn                   bool
}

func newSystem() *list[monitor.Snapshot, sysRow] {
	return newList("system", []string{"sys", "ueid", "pnet"}, systemColumns, systemEntries, systemDetail, nil)
}

func systemEntries(s *monitor.Snapshot) []entry[sysRow] {
	rows := systemRows(s)
	out := make([]entry[sysRow], len(rows))
	for i, r := range rows {
		out[i] = entry[sysRow]{r, entryRow(r.key, []string{r.what, r.value, r.note}, nil)}
		if r.warn {
			out[i].row.Color = tcell.ColorRed
		}
	}
	return out
}

// systemRows is the system screen's model: the kernel's SMC version and
// features, its EIDs, the PNET table and the devices' PNET IDs, and the
// net.smc settings.
func systemRows(s *monitor.Snapshot) []sysRow {
	var out []sysRow
	add := func(key, what, value, note string, warn bool) {
		out = append(out, sysRow{key, what, value, note, warn})
	}
	si := s.System
	if si == nil {
		add("none", "SMC system information", "-", "not read (no SMC netlink: see the overview's sources)", false)
	} else {
		add("version", "SMC version", version(si.Version, si.Release), "the highest SMC version and v2 release the kernel speaks", false)
		add("smcr-v2", "SMC-R v2", yesNo(si.SMCRv2), "SMC-R v2 possible (RoCEv2, routable)", false)
		add("smcd-v2", "SMC-D v2", yesNo(si.SMCDv2), "an SMC-D v2 device is there (an ISM, or the DIBS loopback)", false)
		add("host", "host name (CLC)", dash(si.LocalHost), "the name SMC v2 sends the peer", false)
		if e := si.SEID; e != nil {
			use := "not in use"
			if e.Enabled {
				use = "in use"
			}
			add("seid", "SEID", dash(e.EID), "system EID, "+use, false)
		} else {
			add("seid", "SEID", "-", "none reported (only a kernel capable of SMC-D v2 has one)", false)
		}
		switch {
		case si.UEIDs == nil:
			add("ueid", "UEIDs", "-", "not read", false)
		case len(si.UEIDs) == 0:
			add("ueid", "UEIDs", "none", "SMC v2 needs a UEID both ends share (or the SEID): a v2 peer may decline", si.SEID == nil || !si.SEID.Enabled)
		}
		for i, u := range si.UEIDs {
			add(fmt.Sprintf("ueid-%d", i), "UEID", u, "user EID: the peer must have it too for SMC v2", false)
		}
		switch {
		case si.PNET == nil:
			add("pnet", "PNET table", "-", "not read", false)
		case len(si.PNET) == 0:
			add("pnet", "PNET table", "empty", "no user-set PNET IDs", false)
		}
		for i, e := range si.PNET {
			dev := "netdev " + e.NetDev
			if e.Device != "" {
				dev = fmt.Sprintf("device %s port %d", e.Device, e.DevPort)
				if e.NetDev != "" {
					dev = "netdev " + e.NetDev + ", " + dev
				}
			}
			add(fmt.Sprintf("pnet-%d", i), "PNET "+e.PNETID, dev, "user", false)
		}
		for _, e := range si.Errors {
			add("err-"+e, "not read", "-", e, false)
		}
	}
	for _, d := range s.Devices {
		if d.Kind == monitor.DeviceDIBS {
			note := "DIBS device, not used by SMC"
			switch {
			case !d.SMCKnown:
				note = "DIBS device (whether SMC uses it is not known: the kernel's SMC-D device list was not read)"
			case d.SMC:
				note = "DIBS device, used by SMC-D"
			}
			warn := false
			switch {
			case d.PNETID == "":
				note += "; no PNET ID"
			case si != nil && si.PNET != nil && !netdevHas(si.PNET, d.PNETID):
				// SMC-D uses a device with a PNET ID only for a netdev of the
				// same PNET ID (smc_find_ism_v2_device_clnt, net/smc/af_smc.c).
				note += "; no netdev in the PNET table has this PNET ID: SMC-D cannot use it"
				warn = true
			}
			add("dev-"+d.Name, "PNET ID of "+d.Name, pnetText(d.PNETID, d.PNETIDByUser), note, warn)
			continue
		}
		for _, p := range d.Ports {
			if p.Port == 0 {
				continue
			}
			add("dev-"+portKey(d.Name, p.Port), "PNET ID of "+portKey(d.Name, p.Port), pnetText(p.PNETID, p.PNETIDByUser), "RDMA port, netdevs "+dash(strings.Join(p.NetDevs, ",")), false)
		}
	}
	if on := s.Overview.HSLimitation; on != nil {
		add("hslimit", "handshake limitation", yesNo(*on), "net.smc.limit_smc_hs: SMC handshakes limited under load", false)
	}
	for _, st := range s.Settings {
		add("sysctl-"+st.Name, st.Name, st.Value, "sysctl", false)
	}
	return out
}

// netdevHas reports whether a netdev entry of the PNET table has id.
func netdevHas(table []monitor.PNETRow, id string) bool {
	for _, e := range table {
		if e.NetDev != "" && e.PNETID == id {
			return true
		}
	}
	return false
}

// pnetText writes a PNET ID and who set it: "LABNET (user)", "-" for none.
func pnetText(id string, byUser bool) string {
	switch {
	case id == "":
		return "-"
	case byUser:
		return id + " (user)"
	}
	return id + " (hardware)"
}

func systemDetail(r sysRow, _ *monitor.Snapshot) string {
	return fmt.Sprintf("%s: %s\n%s\n", r.what, r.value, r.note)
}

// writeSystemText writes the system screen's facts (--once -o text) but
// the devices' and sysctls', which the text's own sections show.
func writeSystemText(w io.Writer, s *monitor.Snapshot) {
	fmt.Fprintln(w, "\n== system")
	for _, r := range systemRows(&monitor.Snapshot{System: s.System}) {
		fmt.Fprintf(w, "%s\t%s\t%s\n", r.what, r.value, r.note)
	}
}
