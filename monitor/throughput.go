package monitor

import (
	"bufio"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// ProcessRow is one process's SMC traffic, from the smc_tx_sendmsg and
// smc_rx_recvmsg tracepoints: every send and receive call with its
// length, so the rates are what the application moved, whatever the
// cursors of its sockets did between two refreshes.
type ProcessRow struct {
	PID  int    `json:"pid"`
	Comm string `json:"comm"`
	// Sockets counts the sockets it sent or received on (as the
	// tracepoint names them), Conns its SMC sockets sock_diag lists.
	Sockets int `json:"sockets"`
	Conns   int `json:"conns"`
	// Since smctop started.
	TxBytes uint64 `json:"tx_bytes"`
	RxBytes uint64 `json:"rx_bytes"`
	TxCalls uint64 `json:"tx_calls"`
	RxCalls uint64 `json:"rx_calls"`
	// Over the last interval, per second.
	TxRate     float64 `json:"tx_bytes_per_second"`
	RxRate     float64 `json:"rx_bytes_per_second"`
	TxCallRate float64 `json:"tx_calls_per_second"`
	RxCallRate float64 `json:"rx_calls_per_second"`
}

// TracedIO is what the tracepoints saw of one connection in the last
// interval: set when its process has one SMC socket, so every traced call
// of the process is the connection's.
type TracedIO struct {
	TxBytes uint64  `json:"tx_bytes"`
	RxBytes uint64  `json:"rx_bytes"`
	TxCalls uint64  `json:"tx_calls"`
	RxCalls uint64  `json:"rx_calls"`
	TxRate  float64 `json:"tx_bytes_per_second"`
	RxRate  float64 `json:"rx_bytes_per_second"`
}

// procTotals are a process's sums since smctop started.
type procTotals struct {
	comm                               string
	txBytes, rxBytes, txCalls, rxCalls uint64
}

// throughput turns one interval's traced calls into per-process rows
// (totals kept in m.procs) and, where a process owns exactly one SMC
// socket, the connection's TracedIO. The tracepoint names a socket only
// by a hashed pointer, which no other source carries, so a process with
// several SMC sockets gets its totals but no per-connection split.
func (m *Monitor) throughput(s *Snapshot, msgs map[MsgKey]MsgCount) {
	type agg struct {
		MsgCount
		comm  string
		socks map[string]bool
	}
	per := map[int]*agg{}
	for k, c := range msgs {
		pid := k.PID
		if k.Thread {
			pid = m.process(k.PID)
		}
		a := per[pid]
		if a == nil {
			a = &agg{comm: k.Comm, socks: map[string]bool{}}
			per[pid] = a
		}
		a.TxBytes += c.TxBytes
		a.RxBytes += c.RxBytes
		a.TxCalls += c.TxCalls
		a.RxCalls += c.RxCalls
		a.socks[k.Sock] = true
	}
	owned := map[int][]int{} // pid -> indexes of its kernel SMC sockets
	for i, c := range s.Conns {
		if c.Source == SourceKernel && c.PID != 0 && c.Mode.SMC() {
			owned[c.PID] = append(owned[c.PID], i)
		}
	}
	dt := s.Interval.Seconds()
	rate := func(n uint64) float64 {
		if dt <= 0 {
			return 0
		}
		return float64(n) / dt
	}
	if m.procs == nil {
		m.procs = map[int]*procTotals{}
	}
	for pid, a := range per {
		t := m.procs[pid]
		if t == nil {
			t = &procTotals{}
			m.procs[pid] = t
		}
		t.comm = a.comm
		t.txBytes += a.TxBytes
		t.rxBytes += a.RxBytes
		t.txCalls += a.TxCalls
		t.rxCalls += a.RxCalls
		if idx := owned[pid]; len(idx) == 1 && len(a.socks) == 1 {
			s.Conns[idx[0]].Traced = &TracedIO{TxBytes: a.TxBytes, RxBytes: a.RxBytes, TxCalls: a.TxCalls, RxCalls: a.RxCalls,
				TxRate: rate(a.TxBytes), RxRate: rate(a.RxBytes)}
		}
	}
	for pid, t := range m.procs {
		a := per[pid]
		if a == nil && len(owned[pid]) == 0 {
			delete(m.procs, pid) // quiet and without SMC sockets: gone
			continue
		}
		r := ProcessRow{PID: pid, Comm: t.comm, Conns: len(owned[pid]), TxBytes: t.txBytes, RxBytes: t.rxBytes, TxCalls: t.txCalls, RxCalls: t.rxCalls}
		if a != nil {
			r.Sockets = len(a.socks)
			r.TxRate, r.RxRate = rate(a.TxBytes), rate(a.RxBytes)
			r.TxCallRate, r.RxCallRate = rate(a.TxCalls), rate(a.RxCalls)
		}
		s.Processes = append(s.Processes, r)
	}
	sort.Slice(s.Processes, func(i, j int) bool { return s.Processes[i].PID < s.Processes[j].PID })
}

// process returns the process (thread group) of thread tid from procfs
// (/proc/TID/status names it, though /proc lists only processes), tid
// itself when procfs cannot say. Threads are remembered: a program's
// threads make most of its calls, refresh after refresh.
func (m *Monitor) process(tid int) int {
	if pid, ok := m.tgids[tid]; ok {
		return pid
	}
	pid := tid
	if m.o.ProcRoot != "" {
		if f, err := os.Open(filepath.Join(m.o.ProcRoot, strconv.Itoa(tid), "status")); err == nil {
			sc := bufio.NewScanner(f)
			for sc.Scan() {
				if v, ok := strings.CutPrefix(sc.Text(), "Tgid:"); ok {
					if n, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && n > 0 {
						pid = n
					}
					break
				}
			}
			f.Close()
		}
	}
	if m.tgids == nil || len(m.tgids) >= 4096 {
		m.tgids = map[int]int{} // threads come and go: start over rather than grow
	}
	m.tgids[tid] = pid
	return pid
}
