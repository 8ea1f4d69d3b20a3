package top

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/smcscope/smcscope/monitor"
	"github.com/smcscope/smcscope/tui"
)

var procColumns = []tui.Column{
	col("PID", "process ID"),
	col("COMM", "process name"),
	col("SOCKETS", "SMC sockets it sent or received on in the last interval (as the tracepoints name them)"),
	col("CONNS", "its SMC sockets sock_diag lists now"),
	col("TX", "bytes sent through SMC since smctop started (smc_tx_sendmsg lengths)"),
	col("RX", "bytes received through SMC since smctop started (smc_rx_recvmsg lengths)"),
	col("TX/s", "send rate over the last interval, B/KiB/MiB/GiB per second"),
	col("RX/s", "receive rate over the last interval"),
	col("CALLS/s", "send / receive calls per second over the last interval"),
}

func newProcs() *list[monitor.Snapshot, monitor.ProcessRow] {
	return newList("processes", []string{"proc", "ps"}, procColumns, procRows, procDetail, procDrill)
}

// procRows is the processes screen's model: the SMC traffic of each
// process, from the kernel's send and receive tracepoints.
func procRows(s *monitor.Snapshot) []entry[monitor.ProcessRow] {
	out := make([]entry[monitor.ProcessRow], 0, len(s.Processes))
	if len(s.Processes) == 0 {
		why := "no SMC traffic traced yet"
		for _, src := range s.Sources {
			if src.Name == monitor.SourceThroughput && !src.Available {
				why = "not traced: " + src.Detail
			}
		}
		return append(out, entry[monitor.ProcessRow]{row: entryRow("none", []string{"-", why}, nil)})
	}
	noRate := noRates(s)
	for _, p := range s.Processes {
		out = append(out, entry[monitor.ProcessRow]{p, entryRow(strconv.Itoa(p.PID), []string{
			strconv.Itoa(p.PID), p.Comm, strconv.Itoa(p.Sockets), strconv.Itoa(p.Conns),
			bytesText(float64(p.TxBytes)), bytesText(float64(p.RxBytes)), known(noRate, bytesRate(p.TxRate)), known(noRate, bytesRate(p.RxRate)),
			known(noRate, fmt.Sprintf("%.0f/%.0f", p.TxCallRate, p.RxCallRate)),
		}, []any{p.PID, nil, p.Sockets, p.Conns, p.TxBytes, p.RxBytes, p.TxRate, p.RxRate, p.TxCallRate + p.RxCallRate})})
	}
	return out
}

func procDetail(p monitor.ProcessRow, s *monitor.Snapshot) string {
	if p.PID == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s/%d  sent %d B in %d calls, received %d B in %d calls since smctop started\n", p.Comm, p.PID, p.TxBytes, p.TxCalls, p.RxBytes, p.RxCalls)
	if noRates(s) {
		fmt.Fprintf(&b, "now: not measured yet (the first refresh) on %d sockets\n", p.Sockets)
	} else {
		fmt.Fprintf(&b, "now: %s out, %s in, %.0f sends/s, %.0f receives/s on %d sockets\n", bytesRate(p.TxRate), bytesRate(p.RxRate), p.TxCallRate, p.RxCallRate, p.Sockets)
	}
	for _, c := range s.Conns {
		if c.PID == p.PID {
			fmt.Fprintf(&b, "  %s %s %s -> %s\n", c.Key, c.Mode, endpoint(c.Src, c.AddrHidden), endpoint(c.Dst, c.AddrHidden))
		}
	}
	return b.String()
}

// procDrill opens the process's SMC sockets.
func procDrill(p monitor.ProcessRow, s *monitor.Snapshot) (tui.Drill, bool) {
	keys := []string{}
	for _, c := range s.Conns {
		if c.PID == p.PID && p.PID != 0 {
			keys = append(keys, c.Key)
		}
	}
	return tui.Drill{View: "connections", Label: fmt.Sprintf("sockets of %s/%d", p.Comm, p.PID), Keys: keys}, p.PID != 0
}
