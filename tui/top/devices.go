package top

import (
	"fmt"
	"strings"

	"github.com/gdamore/tcell/v2"

	"github.com/smcscope/smcscope/monitor"
	"github.com/smcscope/smcscope/tui"
	"github.com/smcscope/smcscope/tui/widget"
)

// devicePort is one port of an RDMA device, the devices screen's row.
type devicePort struct {
	dev  monitor.DeviceRow
	port monitor.PortRow
}

var deviceColumns = []tui.Column{
	col("DEVICE", "RDMA device (ibdev): mlx5_0, rxe0 (Soft-RoCE), erdma_0, ..."),
	col("PORT", "port number"),
	col("STATE", "port state (ACTIVE, DOWN, INIT, ...); not ACTIVE is yellow"),
	col("NETDEV", "network interfaces of the port (RoCE GIDs' netdevs)"),
	col("PNETID", "SMC PNET ID of the port (or DIBS device): SMC pairs a TCP interface with devices of the same PNET ID; (user): set with smc_pnet, (hardware): the device's own"),
	col("SMC", "yes when SMC lists the device (SMC_NETLINK_GET_DEV_SMCR, GET_DEV_SMCD); the DIBS loopback, never listed, when SMC-D link groups are on it"),
	col("LINKS", "SMC-R links on the port now"),
	col("TX", "packets sent per second over the last refresh (port_xmit_packets or rxe's sent_pkts)"),
	col("RX", "packets received per second"),
	col("ERRORS", "error counters that moved in the last refresh, with the increase (red): sequence errors, retries, timeouts, RNR, CNP/ECN"),
	col("TRAFFIC", "sent packets per second over the last minute of refreshes"),
}

func newDevices() *list[monitor.Snapshot, devicePort] {
	return newList("devices", []string{"dev", "rnics", "ports"}, deviceColumns, deviceRows, deviceDetail, deviceDrill)
}

// Traffic counters: the PMA's (ConnectX and most RNICs) or rxe's own.
var txNames = []string{"port_xmit_packets", "sent_pkts"}
var rxNames = []string{"port_rcv_packets", "rcvd_pkts"}

func find(cs []monitor.Counter, names []string) (monitor.Counter, bool) {
	for _, n := range names {
		for _, c := range cs {
			if c.Name == n {
				return c, true
			}
		}
	}
	return monitor.Counter{}, false
}

// deviceRows is the device screen's model: one row per port, its packet
// rates with a sparkline and the error counters that moved.
func deviceRows(s *monitor.Snapshot) []entry[devicePort] {
	var out []entry[devicePort]
	for _, dv := range s.Devices {
		if dv.Kind == monitor.DeviceDIBS {
			// SMC-D's device: no ports or packet counters, its GID and
			// the connections on it.
			row := entryRow(dv.Name, []string{dv.Name, "-", "DIBS", "-", pnetText(dv.PNETID, dv.PNETIDByUser), usedBySMC(dv), fmt.Sprint(dv.Conns), "-", "-", "-", dash(dv.Driver)},
				[]any{nil, nil, nil, nil, nil, nil, dv.Conns})
			out = append(out, entry[devicePort]{devicePort{dev: dv}, row})
			continue
		}
		for _, p := range dv.Ports {
			if p.Port == 0 {
				continue // device-wide hw_counters: shown in the detail
			}
			tx, _ := find(p.Counters, txNames)
			rx, _ := find(p.Counters, rxNames)
			var moving []string
			for _, c := range p.Counters {
				if c.Moving {
					moving = append(moving, fmt.Sprintf("%s+%d", c.Name, c.Delta))
				}
			}
			row := entryRow(portKey(dv.Name, p.Port), []string{
				dv.Name, fmt.Sprint(p.Port), p.State, dash(strings.Join(p.NetDevs, ",")), pnetText(p.PNETID, p.PNETIDByUser),
				usedBySMC(dv), fmt.Sprint(p.Links), fmt.Sprintf("%.0f/s", tx.Rate), fmt.Sprintf("%.0f/s", rx.Rate), dash(strings.Join(moving, " ")),
				widget.Sparkline(tx.History, 20),
			}, []any{nil, p.Port, nil, nil, nil, nil, p.Links, tx.Rate, rx.Rate, len(moving)})
			if !p.Active {
				row.Color = tcell.ColorYellow
			}
			if len(moving) > 0 {
				row.Color = tcell.ColorRed
			}
			out = append(out, entry[devicePort]{devicePort{dv, p}, row})
		}
	}
	return out
}

// deviceDetail is a port's facts and every counter with its rate and
// sparkline, the device-wide counters included.
func deviceDetail(dp devicePort, _ *monitor.Snapshot) string {
	var b strings.Builder
	if dp.dev.Kind == monitor.DeviceDIBS {
		fmt.Fprintf(&b, "%s: DIBS device (SMC-D) %s  GID %s  fabric ID %s  PNET ID %s  used by SMC %s  SMC-D connections %d\n",
			dp.dev.Name, dash(dp.dev.Driver), dash(dp.dev.GID), dash(dp.dev.FabricID), pnetText(dp.dev.PNETID, dp.dev.PNETIDByUser), usedText(dp.dev), dp.dev.Conns)
		if dp.dev.Name == "lo" {
			b.WriteString("the loopback device: SMC-D between two sockets of this host, through memory (CONFIG_DIBS_LO); SMC netlink never lists it, its PNET ID shows only in the PNET table\n")
		}
		return b.String()
	}
	fmt.Fprintf(&b, "%s port %d %s %s  rate %s  driver %s parent %s  used by SMC %s critical %v\n", dp.dev.Name, dp.port.Port, dp.port.State, dp.port.PhysState, dash(dp.port.Rate), dash(dp.dev.Driver), dash(dp.dev.Parent), usedText(dp.dev), dp.dev.Critical)
	if len(dp.port.GIDs) > 0 {
		fmt.Fprintf(&b, "GIDs %s\n", strings.Join(dp.port.GIDs, " "))
	}
	for _, e := range dp.dev.CounterErrors {
		fmt.Fprintf(&b, "left out: %s\n", e)
	}
	cs := dp.port.Counters
	for _, p := range dp.dev.Ports {
		if p.Port == 0 {
			cs = append(append([]monitor.Counter(nil), cs...), p.Counters...)
		}
	}
	for _, c := range cs {
		mark := ""
		if c.Moving {
			mark = "  <- MOVING (" + c.Health + ")"
		}
		fmt.Fprintf(&b, "%-28s %14d %10.1f/s %s%s\n", c.Name, c.Value, c.Rate, widget.Sparkline(c.History, 20), mark)
	}
	return b.String()
}

// deviceDrill opens the link groups with a link on the port (SMC-D: the
// groups on the DIBS device).
func deviceDrill(dp devicePort, s *monitor.Snapshot) (tui.Drill, bool) {
	var keys []string
	if dp.dev.Kind == monitor.DeviceDIBS {
		for _, g := range s.LinkGroups {
			if g.DIBSDev == dp.dev.Name {
				keys = append(keys, g.Key)
			}
		}
		return tui.Drill{View: "linkgroups", Label: "link groups on " + dp.dev.Name, Keys: keys}, true
	}
	for _, g := range s.LinkGroups {
		for _, l := range g.Links {
			if l.IBDev == dp.dev.Name && int(l.IBPort) == dp.port.Port {
				keys = append(keys, g.Key)
				break
			}
		}
	}
	return tui.Drill{View: "linkgroups", Label: "link groups on " + portKey(dp.dev.Name, dp.port.Port), Keys: keys}, true
}
