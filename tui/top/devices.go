package top

import (
	"fmt"
	"strings"

	"github.com/gdamore/tcell/v2"

	"github.com/smcscope/smcscope/monitor"
	"github.com/smcscope/smcscope/render"
	"github.com/smcscope/smcscope/tui/widget"
)

type devices struct {
	t  *widget.Table
	by map[string]devicePort
}

type devicePort struct {
	dev  monitor.DeviceRow
	port monitor.PortRow
}

func newDevices() *devices {
	return &devices{t: widget.NewTable("DEVICE", "PORT", "STATE", "NETDEV", "PNETID", "SMC", "LINKS", "TX", "RX", "ERRORS", "TRAFFIC")}
}

func (d *devices) Name() string         { return "devices" }
func (d *devices) Table() *widget.Table { return d.t }

func (d *devices) update(s *monitor.Snapshot) {
	d.by = map[string]devicePort{}
	for _, dv := range s.Devices {
		for _, p := range dv.Ports {
			d.by[portKey(dv.Name, p.Port)] = devicePort{dv, p}
		}
	}
	d.t.SetRows(deviceRows(s))
}

func portKey(dev string, port int) string { return fmt.Sprintf("%s/%d", dev, port) }

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
func deviceRows(s *monitor.Snapshot) []widget.Row {
	var rows []widget.Row
	for _, dv := range s.Devices {
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
			color := tcell.Color(0)
			if p.State != "ACTIVE" {
				color = tcell.ColorYellow
			}
			if len(moving) > 0 {
				color = tcell.ColorRed
			}
			errs := "-"
			if len(moving) > 0 {
				errs = strings.Join(moving, " ")
			}
			rows = append(rows, widget.Row{Key: portKey(dv.Name, p.Port), Color: color, Cells: []string{
				dv.Name, fmt.Sprint(p.Port), p.State, render.Dash(strings.Join(p.NetDevs, ",")), render.Dash(p.PNETID),
				yesNo(dv.SMC), fmt.Sprint(p.Links), fmt.Sprintf("%.0f/s", tx.Rate), fmt.Sprintf("%.0f/s", rx.Rate), errs,
				widget.Sparkline(tx.History, 20),
			}})
		}
	}
	return rows
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func (d *devices) Detail(key string) string {
	dp, ok := d.by[key]
	if !ok {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s port %d %s %s  rate %s  driver %s parent %s  used by SMC %v critical %v\n", dp.dev.Name, dp.port.Port, dp.port.State, dp.port.PhysState, render.Dash(dp.port.Rate), render.Dash(dp.dev.Driver), render.Dash(dp.dev.Parent), dp.dev.SMC, dp.dev.Critical)
	if len(dp.port.GIDs) > 0 {
		fmt.Fprintf(&b, "GIDs %s\n", strings.Join(dp.port.GIDs, " "))
	}
	cs := dp.port.Counters
	if dev0, ok := d.by[portKey(dp.dev.Name, 0)]; ok {
		cs = append(append([]monitor.Counter(nil), cs...), dev0.port.Counters...)
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

func (d *devices) Drill(key string) (string, string, bool) {
	dp, ok := d.by[key]
	if !ok {
		return "", "", false
	}
	return "linkgroups", dp.dev.Name, true
}
