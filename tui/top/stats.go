package top

import (
	"fmt"
	"io"
	"strings"

	"github.com/gdamore/tcell/v2"

	"github.com/smcscope/smcscope/monitor"
	"github.com/smcscope/smcscope/tui"
)

// statsColumns: a counter's total, and for a size histogram its buckets
// (the kernel's: a buffer or payload of up to 8 KiB, 16 KiB, ... 1 MiB,
// and above).
var statsColumns = func() []tui.Column {
	cols := []tui.Column{
		col("TECH", "SMC-R or SMC-D: the kernel keeps every counter per technology (SMC_NETLINK_GET_STATS, smcr/smcd stats)"),
		col("COUNTER", "what is counted since the module loaded; rx/tx: receive/send side"),
		col("VALUE", "the count (bytes: bytes); for a histogram the sum of its buckets"),
	}
	for _, b := range monitor.SizeBuckets {
		cols = append(cols, col(b, "histogram bucket: sizes up to "+b+" (G1024K: above 1024K)"))
	}
	return cols
}()

// statRow is one counter of the statistics screen and what it means.
type statRow struct {
	key, tech, name, value, meaning string
	hist                            *monitor.SizeHistogram
	warn                            bool
}

func newStats() *list[monitor.Snapshot, statRow] {
	return newList("statistics", []string{"stats", "st"}, statsColumns, statsEntries, statsDetail, nil)
}

func statsEntries(s *monitor.Snapshot) []entry[statRow] {
	rows := statRows(s)
	out := make([]entry[statRow], len(rows))
	for i, r := range rows {
		cells := statCells(r)
		sortv := make([]any, len(cells))
		if r.hist != nil {
			for j, v := range r.hist {
				sortv[3+j] = v
			}
		}
		out[i] = entry[statRow]{r, entryRow(r.key, cells, sortv)}
		if r.warn {
			out[i].row.Color = tcell.ColorRed
		}
	}
	return out
}

// statCells are a row's cells, for the screen and the text alike; a
// counter's bucket cells are empty, so the text's columns stay aligned
// over every row.
func statCells(r statRow) []string {
	cells := make([]string, len(statsColumns))
	cells[0], cells[1], cells[2] = r.tech, r.name, r.value
	if r.hist != nil {
		for i, v := range r.hist {
			cells[3+i] = fmt.Sprint(v)
		}
	}
	return cells
}

// statRows is the statistics screen's model: every counter of the
// kernel's SMC statistics, per technology, as smcr/smcd stats show them.
// Without the kernel's statistics it says so instead of showing zeros.
func statRows(s *monitor.Snapshot) []statRow {
	k := s.Kernel
	if k == nil {
		why := "not read"
		for _, src := range s.Sources {
			if src.Name == monitor.SourceNetlink && !src.Available {
				why = "not read: " + src.Detail
			}
		}
		return []statRow{{key: "none", tech: "-", name: "no kernel statistics", value: "-", meaning: why}}
	}
	var out []statRow
	for _, t := range []struct {
		name string
		v    monitor.TechTotals
	}{{"SMC-R", k.SMCR}, {"SMC-D", k.SMCD}} {
		v := t.v
		add := func(key, name string, n uint64, meaning string, warn bool) {
			out = append(out, statRow{key: t.name + "/" + key, tech: t.name, name: name, value: fmt.Sprint(n), meaning: meaning, warn: warn && n > 0})
		}
		hist := func(key, name string, h monitor.SizeHistogram, meaning string) {
			h2 := h
			out = append(out, statRow{key: t.name + "/" + key, tech: t.name, name: name, value: fmt.Sprint(h.Total()), meaning: meaning, hist: &h2})
		}
		add("clnt-v1", "client handshakes v1", v.ClientV1Success, "connections this host made as client with SMC v1 (SMC_NLA_STATS_T_CLNT_V1_SUCC)", false)
		add("clnt-v2", "client handshakes v2", v.ClientV2Success, "connections made as client with SMC v2", false)
		add("srv-v1", "server handshakes v1", v.ServerV1Success, "connections accepted as server with SMC v1", false)
		add("srv-v2", "server handshakes v2", v.ServerV2Success, "connections accepted as server with SMC v2", false)
		add("rx-bytes", "rx bytes", v.RxBytes, "bytes received over SMC", false)
		add("tx-bytes", "tx bytes", v.TxBytes, "bytes sent over SMC", false)
		add("rx-calls", "rx calls", v.RxCount, "receive calls", false)
		add("tx-calls", "tx calls", v.TxCount, "send calls", false)
		conns := v.ClientSuccess + v.ServerSuccess
		avg := "-"
		if conns > 0 {
			avg = fmt.Sprintf("%.1f", float64(v.RxCount+v.TxCount)/float64(conns))
		}
		out = append(out, statRow{key: t.name + "/avg", tech: t.name, name: "requests per connection", value: avg,
			meaning: "send and receive calls per connection made (smcr stats' average requests per SMC connection); - without connections"})
		usage := func(key, name string, n *uint64, meaning string) {
			value := "-"
			if n != nil {
				value = fmt.Sprint(*n)
			}
			out = append(out, statRow{key: t.name + "/" + key, tech: t.name, name: name, value: value, meaning: meaning})
		}
		usage("rx-usage", "rx buffer in use", v.RxRMBUsage, "bytes now in receive buffers (Linux 6.10+; - before: the kernel does not tell)")
		usage("tx-usage", "tx buffer in use", v.TxRMBUsage, "bytes now in send buffers (Linux 6.10+; - before)")
		add("sendpage", "sendpage calls", v.Calls.Sendpage, "sendpage() calls (0 since its removal in 6.5)", false)
		add("splice", "splice calls", v.Calls.Splice, "splice() calls", false)
		add("cork", "cork set", v.Calls.Cork, "TCP_CORK set on SMC sockets", false)
		add("nodelay", "nodelay set", v.Calls.Nodelay, "TCP_NODELAY set on SMC sockets", false)
		add("urgent", "urgent data", v.Calls.UrgentData, "urgent (out-of-band) data sent", false)
		for _, d := range []struct {
			dir  string
			side string
			ev   monitor.BufferEvents
		}{{"rx", "receive", v.RxBuffer}, {"tx", "send", v.TxBuffer}} {
			p := d.dir + " buffer "
			add(d.dir+"-full", p+"full", d.ev.Full, "the own "+d.side+" buffer was found full: the reader is slower than the writer, or the buffer too small", true)
			add(d.dir+"-full-peer", p+"full at peer", d.ev.FullPeer, "the peer's buffer was found full", true)
			add(d.dir+"-small", p+"too small", d.ev.SizeSmall, "a smaller "+d.side+" buffer than wanted was made (memory, or net.smc."+map[string]string{"rx": "rmem", "tx": "wmem"}[d.dir]+")", true)
			add(d.dir+"-small-peer", p+"too small at peer", d.ev.SizeSmallPeer, "the peer's buffer was smaller than wanted", true)
			add(d.dir+"-alloc", p+"allocated", d.ev.Alloc, "buffers allocated", false)
			add(d.dir+"-reuse", p+"reused", d.ev.Reuse, "free buffers of the link group reused instead of allocated", false)
			add(d.dir+"-downgrade", p+"downgraded", d.ev.Downgrade, "allocations that failed at one size and tried a smaller one", true)
		}
		hist("rx-sizes", "rx buffer sizes", v.RxBufferSizes, "receive buffers (RMBs, DMBs) made, by size (SMC_NLA_STATS_T_RX_RMB_SIZE)")
		hist("tx-sizes", "tx buffer sizes", v.TxBufferSizes, "send buffers made, by size (SMC_NLA_STATS_T_TX_RMB_SIZE)")
		hist("rx-pload", "rx payload sizes", v.RxPayloadSizes, "receive calls by payload size (SMC_NLA_STATS_T_RXPLOAD_SIZE)")
		hist("tx-pload", "tx payload sizes", v.TxPayloadSizes, "send calls by payload size (SMC_NLA_STATS_T_TXPLOAD_SIZE)")
	}
	add := func(key, name string, n uint64, meaning string) {
		out = append(out, statRow{key: key, tech: "both", name: name, value: fmt.Sprint(n), meaning: meaning, warn: n > 0})
	}
	add("hs-clnt", "client handshake errors", k.ClientHSErrors, "handshakes that failed as client (SMC_NLA_STATS_CLNT_HS_ERR_CNT)")
	add("hs-srv", "server handshake errors", k.ServerHSErrors, "handshakes that failed as server")
	return out
}

func statsDetail(r statRow, _ *monitor.Snapshot) string {
	d := fmt.Sprintf("%s %s: %s\n%s\n", r.tech, r.name, r.value, r.meaning)
	if r.hist != nil {
		var b strings.Builder
		for i, v := range r.hist {
			fmt.Fprintf(&b, "  %-7s %d\n", monitor.SizeBuckets[i], v)
		}
		d += b.String()
	}
	return d
}

// writeStatsText writes the statistics screen's rows (--once -o text).
func writeStatsText(w io.Writer, k *monitor.KernelStats) {
	fmt.Fprintln(w, "\n== statistics")
	if k == nil {
		fmt.Fprintln(w, "- (no kernel statistics)")
		return
	}
	fmt.Fprintln(w, "TECH\tCOUNTER\tVALUE\t"+strings.Join(monitor.SizeBuckets[:], "\t"))
	for _, r := range statRows(&monitor.Snapshot{Kernel: k}) {
		fmt.Fprintln(w, strings.Join(statCells(r), "\t"))
	}
}
