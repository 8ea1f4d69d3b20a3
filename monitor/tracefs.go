package monitor

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The kernel's SMC tracepoints (net/smc/smc_tracepoint.h): a socket
// switching to TCP with its reason and a link going down are events;
// smc_tx_sendmsg and smc_rx_recvmsg (Linux 5.17+) fire per send and
// receive call with its length and are summed per socket and process.
// A kernel without the message tracepoints still gets the first two.
var (
	traceEvents = []string{"smc/smc_switch_to_fallback", "smc/smcr_link_down"}
	traceMsgs   = []string{"smc/smc_tx_sendmsg", "smc/smc_rx_recvmsg"}
)

// MsgKey names one traced SMC socket: the process that called, and the
// socket as the tracepoint prints it (smc=%p, a hashed pointer unless
// the trace option hash-ptr is off: the same value for the same socket,
// but no inode).
type MsgKey struct {
	// PID is the process (thread group) that made the call. Trace lines
	// name the calling thread; with the instance's record-tgid option they
	// also name its process. Without it PID is the thread's ID and Thread
	// is set, for the monitor to look the process up in procfs: a Go
	// program (smcping) sends and receives from threads other than its
	// first.
	PID    int
	Thread bool
	Comm   string
	Sock   string
	Dev    string // the device the data went through (dev=): ibdev or the DIBS device
}

// MsgCount is what one socket sent and received through SMC since the
// last Drain.
type MsgCount struct {
	TxBytes, RxBytes uint64
	TxCalls, RxCalls uint64
}

// Tracer reads SMC tracepoints from a private tracefs instance, so it
// neither sees nor disturbs what other tracers enable in the top-level
// buffer. It needs root and tracefs (mounted at /sys/kernel/tracing).
type Tracer struct {
	dir  string
	pipe *os.File
	mu   sync.Mutex
	evs  []Event
	msgs map[MsgKey]*MsgCount
	// Msgs says whether smc_tx_sendmsg and smc_rx_recvmsg are traced
	// (MsgsErr why not).
	Msgs    bool
	MsgsErr error
	done    chan struct{}
}

// StartTracer makes instances/NAME under tracefs, enables the SMC
// tracepoints there and reads them in the background.
func StartTracer(tracefs, name string) (*Tracer, error) {
	dir := filepath.Join(tracefs, "instances", name)
	if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return nil, fmt.Errorf("tracefs instance %s: %w", dir, err)
	}
	t := &Tracer{dir: dir, done: make(chan struct{}), msgs: map[MsgKey]*MsgCount{}}
	for _, ev := range traceEvents {
		if err := os.WriteFile(filepath.Join(dir, "events", ev, "enable"), []byte("1"), 0); err != nil {
			t.Close()
			return nil, fmt.Errorf("tracepoint %s: %w", strings.Replace(ev, "/", ":", 1), err)
		}
	}
	// Each line then carries the calling thread's process ID as well.
	// Older kernels without the option get thread IDs (MsgKey.Thread).
	_ = os.WriteFile(filepath.Join(dir, "options", "record-tgid"), []byte("1"), 0)
	t.Msgs = true
	for _, ev := range traceMsgs {
		if err := os.WriteFile(filepath.Join(dir, "events", ev, "enable"), []byte("1"), 0); err != nil {
			t.Msgs, t.MsgsErr = false, fmt.Errorf("tracepoint %s: %w", strings.Replace(ev, "/", ":", 1), err)
			break
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
		line := sc.Text()
		if k, tx, n, ok := ParseMsgLine(line); ok {
			t.mu.Lock()
			c := t.msgs[k]
			if c == nil {
				c = &MsgCount{}
				t.msgs[k] = c
			}
			if tx {
				c.TxBytes += n
				c.TxCalls++
			} else {
				c.RxBytes += n
				c.RxCalls++
			}
			t.mu.Unlock()
			continue
		}
		if ev, ok := ParseTraceLine(line, time.Now()); ok {
			t.mu.Lock()
			t.evs = append(t.evs, ev)
			t.mu.Unlock()
		}
	}
}

// DrainMsgs returns the sums per socket since the last call.
func (t *Tracer) DrainMsgs() map[MsgKey]MsgCount {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make(map[MsgKey]MsgCount, len(t.msgs))
	for k, c := range t.msgs {
		out[k] = *c
	}
	clear(t.msgs)
	return out
}

// msgRE is a trace_pipe line of smc_tx_sendmsg or smc_rx_recvmsg: the
// task (comm-tid), with record-tgid its process "(  tgid)" ("(-------)"
// when the kernel has not recorded it), then "smc=%p net=%llu len=%zu
// dev=%s".
var msgRE = regexp.MustCompile(`^\s*(.*)-(\d+)\s+(?:\(\s*([0-9-]+)\)\s+)?\[\d+\].*\s(smc_tx_sendmsg|smc_rx_recvmsg):\s+smc=(\S+)\s+net=\d+\s+len=(\d+)\s+dev=(\S*)`)

// ParseMsgLine reads one smc_tx_sendmsg or smc_rx_recvmsg line: the
// socket and process, whether it was a send, and its length.
func ParseMsgLine(line string) (k MsgKey, tx bool, n uint64, ok bool) {
	if !strings.Contains(line, "smc_tx_sendmsg") && !strings.Contains(line, "smc_rx_recvmsg") {
		return k, false, 0, false
	}
	m := msgRE.FindStringSubmatch(line)
	if m == nil {
		return k, false, 0, false
	}
	tid, err1 := strconv.Atoi(m[2])
	n, err2 := strconv.ParseUint(m[6], 10, 64)
	if err1 != nil || err2 != nil {
		return k, false, 0, false
	}
	k = MsgKey{PID: tid, Thread: true, Comm: strings.TrimSpace(m[1]), Sock: m[5], Dev: m[7]}
	if tgid, err := strconv.Atoi(m[3]); err == nil && tgid > 0 {
		k.PID, k.Thread = tgid, false
	}
	return k, m[4] == "smc_tx_sendmsg", n, true
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
	for _, ev := range append(traceEvents, traceMsgs...) {
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
