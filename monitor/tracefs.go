package monitor

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"
)

// The kernel's SMC tracepoints that mark trouble (net/smc/smc_tracepoint.h):
// a socket switching to TCP with its reason, and a link going down.
// smc_tx_sendmsg and smc_rx_recvmsg fire per call and are left off.
var traceEvents = []string{"smc/smc_switch_to_fallback", "smc/smcr_link_down"}

// Tracer reads SMC tracepoints from a private tracefs instance, so it
// neither sees nor disturbs what other tracers enable in the top-level
// buffer. It needs root and tracefs (mounted at /sys/kernel/tracing).
type Tracer struct {
	dir  string
	pipe *os.File
	mu   sync.Mutex
	evs  []Event
	done chan struct{}
}

// StartTracer makes instances/NAME under tracefs, enables the SMC
// tracepoints there and reads them in the background.
func StartTracer(tracefs, name string) (*Tracer, error) {
	dir := filepath.Join(tracefs, "instances", name)
	if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return nil, fmt.Errorf("tracefs instance %s: %w", dir, err)
	}
	t := &Tracer{dir: dir, done: make(chan struct{})}
	for _, ev := range traceEvents {
		if err := os.WriteFile(filepath.Join(dir, "events", ev, "enable"), []byte("1"), 0); err != nil {
			t.Close()
			return nil, fmt.Errorf("tracepoint %s: %w", strings.Replace(ev, "/", ":", 1), err)
		}
	}
	p, err := os.Open(filepath.Join(dir, "trace_pipe"))
	if err != nil {
		t.Close()
		return nil, fmt.Errorf("tracefs: %w", err)
	}
	t.pipe = p
	go t.read(p)
	return t, nil
}

func (t *Tracer) read(r io.Reader) {
	defer close(t.done)
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		if ev, ok := ParseTraceLine(sc.Text(), time.Now()); ok {
			t.mu.Lock()
			t.evs = append(t.evs, ev)
			t.mu.Unlock()
		}
	}
}

// Drain returns the events read since the last call.
func (t *Tracer) Drain() []Event {
	t.mu.Lock()
	defer t.mu.Unlock()
	evs := t.evs
	t.evs = nil
	return evs
}

// Close disables the tracepoints and removes the instance.
func (t *Tracer) Close() error {
	if t.pipe != nil {
		t.pipe.Close()
	}
	for _, ev := range traceEvents {
		_ = os.WriteFile(filepath.Join(t.dir, "events", ev, "enable"), []byte("0"), 0)
	}
	return os.Remove(t.dir)
}

var traceRE = regexp.MustCompile(`\s(smc_switch_to_fallback|smcr_link_down):\s*(.*)$`)

// ParseTraceLine turns one trace_pipe line of an SMC tracepoint into an
// Event. The formats are the TP_printk strings of smc_tracepoint.h:
// "sk=... clcsk=... net=... fallback_rsn=0x..." and "lnk=... lgr=...
// net=... state=... dev=... location=...".
func ParseTraceLine(line string, now time.Time) (Event, bool) {
	m := traceRE.FindStringSubmatch(line)
	if m == nil {
		return Event{}, false
	}
	ev := Event{Time: now, Source: EventFromTracepoint}
	switch m[1] {
	case "smc_switch_to_fallback":
		ev.Kind = EventFallback
		ev.Text = "fallback: " + m[2]
		if i := strings.Index(m[2], "fallback_rsn="); i >= 0 {
			var code uint32
			if _, err := fmt.Sscanf(m[2][i+len("fallback_rsn="):], "%v", &code); err == nil {
				ev.Text = fmt.Sprintf("socket fell back to TCP: %s [%s]", reasonText(reason(code)), m[2])
			}
		}
	case "smcr_link_down":
		ev.Kind = EventLinkDown
		ev.Text = "SMC-R link down: " + m[2]
	}
	return ev, true
}
