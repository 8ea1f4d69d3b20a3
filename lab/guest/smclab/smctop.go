package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/smcscope/smcscope/monitor"
)

// smctopWant is what wait-smctop looks for in one snapshot of smctop -o jsonl.
type smctopWant struct {
	links  int      // active links over all link groups; -1: any
	events []string // KIND or KIND/SOURCE, each present in the snapshot's events
	// traced: the snapshot reads the send/receive tracepoints.
	traced bool
	// settled > 0: process settled has traced traffic and the same totals
	// as in the snapshot before: every call it made is counted.
	settled int
	// after: only snapshots after the first after lines count.
	after int
	// callsPID > 0: process callsPID made calls send and receive calls or more.
	callsPID, calls int
}

func (w smctopWant) String() string {
	var parts []string
	if w.links >= 0 {
		parts = append(parts, fmt.Sprintf("%d active link(s)", w.links))
	}
	if len(w.events) > 0 {
		parts = append(parts, "events "+strings.Join(w.events, ", "))
	}
	if w.traced {
		parts = append(parts, "the send/receive tracepoints read")
	}
	if w.settled > 0 {
		parts = append(parts, fmt.Sprintf("process %d's traced totals settled", w.settled))
	}
	if w.after > 0 {
		parts = append(parts, fmt.Sprintf("after snapshot %d", w.after))
	}
	if w.callsPID > 0 {
		parts = append(parts, fmt.Sprintf("process %d with %d traced calls", w.callsPID, w.calls))
	}
	if len(parts) == 0 {
		return "any snapshot"
	}
	return strings.Join(parts, " and ")
}

// match reports whether a snapshot shows what is wanted; prev is the
// snapshot before it (nil for the first).
func (w smctopWant) match(prev *monitor.Snapshot, s monitor.Snapshot) bool {
	if w.traced && !tracing(s) {
		return false
	}
	if w.callsPID > 0 {
		if p, ok := process(s, w.callsPID); !ok || p.TxCalls+p.RxCalls < uint64(w.calls) {
			return false
		}
	}
	if w.settled > 0 {
		now, ok := process(s, w.settled)
		if !ok || now.TxCalls+now.RxCalls == 0 || prev == nil {
			return false
		}
		before, ok := process(*prev, w.settled)
		if !ok || before.TxBytes != now.TxBytes || before.RxBytes != now.RxBytes ||
			before.TxCalls != now.TxCalls || before.RxCalls != now.RxCalls {
			return false
		}
	}
	if w.links >= 0 {
		n := 0
		for _, g := range s.LinkGroups {
			for _, l := range g.Links {
				if l.Active {
					n++
				}
			}
		}
		if n != w.links {
			return false
		}
	}
	for _, want := range w.events {
		kind, source, _ := strings.Cut(want, "/")
		found := false
		for _, e := range s.Events {
			found = found || (e.Kind == monitor.EventKind(kind) && (source == "" || e.Source == monitor.EventSource(source)))
		}
		if !found {
			return false
		}
	}
	return true
}

// tracing reports whether smctop read the send/receive tracepoints for s.
func tracing(s monitor.Snapshot) bool {
	for _, src := range s.Sources {
		if src.Name == "throughput" {
			return src.Available
		}
	}
	return false
}

// process returns process pid's row of s.
func process(s monitor.Snapshot, pid int) (monitor.ProcessRow, bool) {
	for _, p := range s.Processes {
		if p.PID == pid {
			return p, true
		}
	}
	return monitor.ProcessRow{}, false
}

// parseWaitSmctop reads wait-smctop's arguments:
// FILE SECONDS [-pid PID] [-links N] [-event KIND[/SOURCE]]... [-traced]
// [-settled PID] [-after N] [-calls PID:N]
func parseWaitSmctop(args []string) (file string, d time.Duration, pid int, want smctopWant, err error) {
	want.links = -1
	if len(args) < 2 {
		return "", 0, 0, want, usageError("wait-smctop: need FILE SECONDS")
	}
	file = args[0]
	secs, perr := strconv.ParseFloat(args[1], 64)
	if perr != nil || secs < 0 {
		return "", 0, 0, want, usageError(fmt.Sprintf("wait-smctop: bad SECONDS %q", args[1]))
	}
	d = time.Duration(secs * float64(time.Second))
	rest := args[2:]
	for len(rest) > 0 {
		if rest[0] == "-traced" {
			want.traced = true
			rest = rest[1:]
			continue
		}
		if len(rest) < 2 {
			return "", 0, 0, want, usageError(fmt.Sprintf("wait-smctop: %s needs a value", rest[0]))
		}
		v := rest[1]
		switch rest[0] {
		case "-pid":
			if pid, perr = strconv.Atoi(v); perr != nil || pid <= 0 {
				return "", 0, 0, want, usageError(fmt.Sprintf("wait-smctop: bad -pid %q", v))
			}
		case "-links":
			if want.links, perr = strconv.Atoi(v); perr != nil || want.links < 0 {
				return "", 0, 0, want, usageError(fmt.Sprintf("wait-smctop: bad -links %q", v))
			}
		case "-event":
			if v == "" || strings.HasPrefix(v, "/") {
				return "", 0, 0, want, usageError(fmt.Sprintf("wait-smctop: bad -event %q", v))
			}
			want.events = append(want.events, v)
		case "-settled":
			if want.settled, perr = strconv.Atoi(v); perr != nil || want.settled <= 0 {
				return "", 0, 0, want, usageError(fmt.Sprintf("wait-smctop: bad -settled %q", v))
			}
		case "-calls":
			p, c, ok := strings.Cut(v, ":")
			var perr2 error
			want.callsPID, perr = strconv.Atoi(p)
			want.calls, perr2 = strconv.Atoi(c)
			if !ok || perr != nil || perr2 != nil || want.callsPID <= 0 || want.calls < 0 {
				return "", 0, 0, want, usageError(fmt.Sprintf("wait-smctop: bad -calls %q (want PID:N)", v))
			}
		case "-after":
			if want.after, perr = strconv.Atoi(v); perr != nil || want.after < 0 {
				return "", 0, 0, want, usageError(fmt.Sprintf("wait-smctop: bad -after %q", v))
			}
		default:
			return "", 0, 0, want, usageError(fmt.Sprintf("wait-smctop: unknown option %q", rest[0]))
		}
		rest = rest[2:]
	}
	return file, d, pid, want, nil
}

// findSnapshot returns the number (from 1) of the first complete line of
// smctop -o jsonl output that shows want, 0 if none does yet, and how many
// complete lines there are. A last line without its newline is still being
// written and is left for the next look.
func findSnapshot(data []byte, want smctopWant) (match, lines int, err error) {
	var prev *monitor.Snapshot
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			break
		}
		line := data[:i]
		data = data[i+1:]
		lines++
		var s monitor.Snapshot
		if err := json.Unmarshal(line, &s); err != nil {
			return 0, lines, fmt.Errorf("line %d: %w", lines, err)
		}
		if match == 0 && lines > want.after && want.match(prev, s) {
			match = lines
		}
		if lines > want.after {
			prev = &s
		}
	}
	return match, lines, nil
}

// exited reports whether process pid is gone or a zombie.
func exited(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	// "PID (COMM) STATE ...": COMM may hold spaces and parentheses.
	i := bytes.LastIndexByte(b, ')')
	return i < 0 || i+2 >= len(b) || b[i+2] == 'Z'
}

// waitSmctop waits until smctop's JSONL stream in file has a snapshot
// showing want, for at most d, or until smctop (pid) has exited.
func waitSmctop(file string, d time.Duration, pid int, want smctopWant, w io.Writer) error {
	start := time.Now()
	for {
		gone := pid > 0 && exited(pid) // before reading: what it wrote before exiting is read
		data, err := os.ReadFile(file)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		match, lines, err := findSnapshot(data, want)
		if err != nil {
			return fmt.Errorf("wait-smctop: %s: %w", file, err)
		}
		if match > 0 {
			_, err := fmt.Fprintf(w, "smctop_snapshot=%d of=%d shows=%q after_ms=%d\n", match, lines, want, time.Since(start).Milliseconds())
			return err
		}
		switch {
		case gone:
			return fmt.Errorf("wait-smctop: smctop (pid %d) exited; none of its %d snapshots shows %s", pid, lines, want)
		case time.Since(start) >= d:
			return fmt.Errorf("wait-smctop: none of %d snapshots in %v shows %s", lines, d, want)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
