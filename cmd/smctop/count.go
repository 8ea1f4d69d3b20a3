package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/smcscope/smcscope/capture"
	"github.com/smcscope/smcscope/fleet"
	"github.com/smcscope/smcscope/internal/cli"
	"github.com/smcscope/smcscope/monitor"
	"github.com/smcscope/smcscope/tui/top"
)

// runCount prints c.count snapshots an interval apart. A replay (-r,
// not --once) steps through its capture: each snapshot reads the next
// interval of capture time, at once (with --speed S, S times the
// capture's pace), and the output ends with the snapshot in which the
// capture ended; if the count ends first, stderr says where. --once on a
// replay reads it to its end. On a live host the first snapshot comes one
// interval after a first refresh, so it has rates. An interrupt ends the
// output early but whole: a JSON array is still closed.
//
// A capture that fails part-way (cut short, a corrupt record) still gets
// its snapshots of everything read up to the failure, as the dashboard
// shows them; the error follows them, and the exit status is smcdump's
// for the same file: 2 when the file is damaged, 1 for other failures.
func runCount(ctx context.Context, m *monitor.Monitor, c config) int {
	w := m.Wire()
	step := w != nil && !w.Live() && !c.once
	var readErr error
	switch {
	case step:
	case w != nil:
		readErr = w.Run(ctx)
	default:
		m.Refresh()
	}
	out := &output{w: os.Stdout, format: c.format, array: c.format == "json" && !c.once}
	if err := out.open(); err != nil {
		fmt.Fprintln(os.Stderr, "smctop: "+err.Error())
		return 1
	}
	// Each broken counter is reported once, on stderr, so the output
	// stays a clean document for scripts.
	warned := map[string]bool{}
	code := 0
	ended := false
	n := 0
	for ; n < c.count && !ended; n++ {
		if step {
			if n > 0 && c.speed > 0 && !wait(ctx, time.Duration(float64(c.interval)/c.speed)) || ctx.Err() != nil {
				break
			}
			ended, readErr = w.Advance(c.interval)
		} else if (w == nil || n > 0) && !wait(ctx, c.interval) {
			break
		}
		s := m.Refresh()
		for _, e := range s.CounterErrors() {
			if !warned[e] {
				warned[e] = true
				fmt.Fprintln(os.Stderr, "smctop: RDMA counter left out: "+e)
			}
		}
		if err := out.write(s, func(w io.Writer) error { return top.WriteText(w, s) }); err != nil {
			fmt.Fprintln(os.Stderr, "smctop: "+err.Error())
			return 1
		}
	}
	if err := out.close(); err != nil {
		fmt.Fprintln(os.Stderr, "smctop: "+err.Error())
		code = 1
	}
	if step && !ended && ctx.Err() == nil {
		_, _, _, at := w.Replay()
		fmt.Fprintf(os.Stderr, "smctop: %d snapshots, %v of capture time apart, reached %s: the capture goes on (a larger --count or --interval reads further)\n",
			n, c.interval, at.UTC().Format("2006-01-02 15:04:05.000000"))
	}
	if readErr != nil {
		fmt.Fprintln(os.Stderr, "smctop: "+readErr.Error())
		if damaged(readErr) {
			return 2
		}
		return 1
	}
	var se *cli.SignalError
	if w != nil && !w.Live() && !w.Ended() && errors.As(context.Cause(ctx), &se) {
		// As smcdump: a replay stopped before its capture's end printed
		// a part, and a script must be able to tell.
		fmt.Fprintf(os.Stderr, "smctop: %s: stopped by %s before the capture's end: the snapshot shows what was read\n", c.read, se.Name())
		return 128 + int(se.Signal)
	}
	return code
}

// damaged reports whether err is a capture file damaged part-way, which
// smcdump exits 2 for (output.ExitCode): the output is incomplete, not
// absent.
func damaged(err error) bool {
	return errors.Is(err, capture.ErrTruncatedFile) || errors.Is(err, capture.ErrCorruptRecord) ||
		errors.Is(err, capture.ErrChanged)
}

// wait waits d and reports whether ctx is still going.
func wait(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// output writes snapshots in one -o format. With array set (-o json with
// --count) the snapshots are the elements of one JSON array, written as
// they come, so a consumer can start before the last one and the whole
// output stays one JSON document.
type output struct {
	w      io.Writer
	format string
	array  bool
	n      int
}

func (o *output) open() error {
	if !o.array {
		return nil
	}
	_, err := io.WriteString(o.w, "[\n")
	return err
}

// write writes one snapshot (a host's or the fleet's); text writes it as
// text.
func (o *output) write(s any, text func(io.Writer) error) error {
	defer func() { o.n++ }()
	switch {
	case o.format == "text":
		return text(o.w)
	case o.format == "jsonl":
		b, err := json.Marshal(s)
		if err != nil {
			return err
		}
		_, err = o.w.Write(append(b, '\n'))
		return err
	case o.array:
		b, err := json.MarshalIndent(s, "  ", "  ")
		if err != nil {
			return err
		}
		sep := "  "
		if o.n > 0 {
			sep = ",\n  "
		}
		_, err = o.w.Write(append([]byte(sep), b...))
		return err
	default:
		b, err := json.MarshalIndent(s, "", "  ")
		if err != nil {
			return err
		}
		_, err = o.w.Write(append(b, '\n'))
		return err
	}
}

func (o *output) close() error {
	if !o.array {
		return nil
	}
	end := "]\n"
	if o.n > 0 {
		end = "\n]\n"
	}
	_, err := io.WriteString(o.w, end)
	return err
}

// runFleetCount prints c.count snapshots of the fleet an interval apart;
// a Prometheus that cannot be read is exit status 1 after the output.
func runFleetCount(ctx context.Context, fc *fleet.Client, c config) int {
	out := &output{w: os.Stdout, format: c.format, array: c.format == "json" && !c.once}
	if err := out.open(); err != nil {
		fmt.Fprintln(os.Stderr, "smctop: "+err.Error())
		return 1
	}
	code := 0
	var last fleet.Snapshot
	for i := 0; i < c.count; i++ {
		if i > 0 && !wait(ctx, c.interval) {
			break
		}
		s := fleet.Keep(last, fleet.Read(ctx, fc))
		last = s
		if s.Error != "" {
			fmt.Fprintln(os.Stderr, "smctop: "+s.Error)
			code = 1
		}
		if err := out.write(s, func(w io.Writer) error { return top.WriteFleetText(w, s) }); err != nil {
			fmt.Fprintln(os.Stderr, "smctop: "+err.Error())
			return 1
		}
	}
	if err := out.close(); err != nil {
		fmt.Fprintln(os.Stderr, "smctop: "+err.Error())
		return 1
	}
	return code
}
