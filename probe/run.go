package probe

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"slices"
	"sync"
	"time"
)

// Run executes Options: the server until ctx ends, or the client's
// measurements with their report on stdout. Logs go to stderr.
func Run(ctx context.Context, o Options, stdout, stderr io.Writer) error {
	if o.Server {
		return runServer(ctx, o, stderr)
	}
	return runClient(ctx, o, stdout, KernelInspector{})
}

func runServer(ctx context.Context, o Options, stderr io.Writer) error {
	log := slog.New(slog.NewTextHandler(stderr, nil))
	s := NewServer(ServerConfig{
		Addr: o.Listen, Port: o.Port, TCPPort: o.TCPPort, TCPOnly: o.TCPOnly, SMCProto: o.Proto,
		MaxMessage: o.MaxMessage, MaxConns: o.MaxConns, IdleTimeout: o.IdleTimeout, RequestTimeout: o.RequestTimeout,
		Log: log, Inspector: KernelInspector{},
	})
	if err := s.Listen(); err != nil {
		return err
	}
	kind := o.Proto.String()
	if o.TCPOnly {
		kind = "tcp (not SMC-capable)"
	}
	args := []any{"proto", kind, "addr", s.Addrs()[0].String()}
	if len(s.Addrs()) > 1 {
		args = append(args, "tcp_baseline", s.Addrs()[1].String())
	}
	args = append(args, "max_msg", o.MaxMessage, "max_conns", o.MaxConns, "idle", o.IdleTimeout.String(), "request_timeout", o.RequestTimeout.String())
	log.Info("listening", args...)
	return s.Serve(ctx)
}

// connRun is one measured connection and its preallocated samples.
type connRun struct {
	conn    *Conn
	pinger  *Pinger
	proof   Proof
	samples []time.Duration
	sent    []time.Duration // when each sample's ping left, for --log
	yield   yielder
}

// modeRun is the set of connections of one protocol.
type modeRun struct {
	proto Proto
	// baseline marks the --compare tcp connections; ratios divide by them.
	baseline bool
	target   netip.AddrPort
	conns    []*connRun
}

func (m *modeRun) close() {
	for _, c := range m.conns {
		c.conn.Close()
	}
}

// interruptOn wakes the measuring goroutines, blocked in read(2), when ctx
// ends (Ctrl-C); without it they would wait for the next reply.
func (m *modeRun) interruptOn(ctx context.Context) (stop func() bool) {
	return context.AfterFunc(ctx, func() {
		for _, c := range m.conns {
			interrupt(c.conn.Conn)
		}
	})
}

func resolve(ctx context.Context, host string) (netip.Addr, error) {
	if a, err := netip.ParseAddr(host); err == nil {
		return a.Unmap(), nil
	}
	addrs, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return netip.Addr{}, fmt.Errorf("resolve %s: %w", host, err)
	}
	// SMC-Rv2 works over IPv4 only (smc_find_proposal_devices in
	// net/smc/af_smc.c drops v2 for a native IPv6 clcsock), so prefer it.
	for _, a := range addrs {
		if a.Unmap().Is4() {
			return a.Unmap(), nil
		}
	}
	return addrs[0], nil
}

func dialMode(ctx context.Context, o Options, p Proto, target netip.AddrPort, in Inspector, n, maxSize, samples int, base time.Time) (*modeRun, error) {
	m := &modeRun{proto: p, target: target}
	for range n {
		c, err := Dial(ctx, p, target, o.Timeout)
		if err != nil {
			m.close()
			return nil, err
		}
		cr := &connRun{conn: c, pinger: NewPinger(c, maxSize), samples: make([]time.Duration, 0, samples)}
		cr.pinger.SetBase(base)
		if o.Digest {
			cr.pinger.EnableDigest(uint64(len(m.conns)+1)<<8|uint64(p), c.LocalAddr().String(), c.RemoteAddr().String())
		}
		if o.LogFile != "" {
			cr.sent = make([]time.Duration, 0, samples)
		}
		if p.IsSMC() {
			// Ask while the connection is open: sock_diag forgets closed sockets.
			cr.proof = Prove(in, c.ID())
		} else {
			cr.proof = Proof{Mode: ModeTCP}
		}
		m.conns = append(m.conns, cr)
	}
	return m, nil
}

func runClient(ctx context.Context, o Options, stdout io.Writer, in Inspector) error {
	// Before anything goes on the wire: a --log that cannot be written is
	// a mistake in the command line, not a failed measurement.
	var logw *csvLog
	if o.LogFile != "" && !o.Check {
		var err error
		if logw, err = openCSV(o.LogFile); err != nil {
			return err
		}
		defer logw.close()
	}
	addr, err := resolve(ctx, o.Host)
	if err != nil {
		return err
	}
	// Each connection of a mode waits in its own read at once (the
	// modes take turns): a P for each, and one to spare.
	reserveProcs(o.Parallel)
	if o.Check {
		return runCheck(ctx, o, stdout, addr, in)
	}
	maxSize := slices.Max(o.Sizes)
	perConn := o.Count
	if o.Duration > 0 {
		perConn = max(o.MaxSamples/o.Parallel, 1)
	}
	if o.Bandwidth {
		perConn = 0
	}
	start := time.Now() // the time line of --log
	primary, err := dialMode(ctx, o, o.Proto, netip.AddrPortFrom(addr, o.Port), in, o.Parallel, maxSize, perConn, start)
	if err != nil {
		return err
	}
	defer primary.close()
	defer primary.interruptOn(ctx)()
	modes := []*modeRun{primary}
	rep := newReport(primary)
	for _, p := range o.Compare {
		port := o.Port
		if p == ProtoTCP {
			port = o.TCPPort
		}
		m, err := dialMode(ctx, o, p, netip.AddrPortFrom(addr, port), in, o.Parallel, maxSize, perConn, start)
		if err != nil {
			return fmt.Errorf("--compare %s (port %d): %w", p, port, err)
		}
		defer m.close()
		defer m.interruptOn(ctx)()
		m.baseline = p == ProtoTCP
		modes = append(modes, m)
		rep.addConns(m)
	}
	if o.Require == "smc" {
		for _, m := range modes {
			for _, c := range m.conns {
				if !m.proto.IsSMC() {
					continue
				}
				if err := c.proof.Require(); err != nil {
					// Nothing was measured: the proofs are the whole report.
					if o.Output == "json" {
						rep.writeBody(stdout, o)
					} else {
						rep.writeHeader(stdout, o)
					}
					return err
				}
			}
		}
	}
	// The proofs come first, so a long run shows at once what it measures.
	if err := rep.writeHeader(stdout, o); err != nil {
		return err
	}
	for _, size := range o.Sizes {
		if o.Bandwidth {
			for _, m := range modes {
				r, err := stream(ctx, o, m, size)
				if err != nil {
					return cmp.Or(ctx.Err(), err)
				}
				rep.BW = append(rep.BW, r)
			}
			continue
		}
		if err := measure(ctx, o, modes, size); err != nil {
			if ctx.Err() == nil {
				return err
			}
			// Interrupted (Ctrl-C): report what was measured, as ping does.
			for _, m := range modes {
				if len(m.conns[0].samples) > 0 {
					rep.addResult(o, m, size)
				}
			}
			return errors.Join(ctx.Err(), rep.writeBody(stdout, o))
		}
		for _, m := range modes {
			if logw != nil {
				if err := logw.write(m, size); err != nil {
					return err
				}
			}
			rep.addResult(o, m, size)
		}
		rep.addRatios(size)
	}
	if logw != nil {
		if err := logw.close(); err != nil {
			return err
		}
	}
	if o.Diag {
		rep.FinalDiag = finalDiag(in, modes)
	}
	if o.Digest {
		for _, m := range modes {
			for _, c := range m.conns {
				rep.Digests = append(rep.Digests, fmt.Sprintf("conn %d %s: %s", len(rep.Digests)+1, m.proto, c.pinger.DigestLine()))
			}
		}
	}
	return rep.writeBody(stdout, o)
}

// finalDiag is --diag: the kernel's sock_diag line of every connection,
// taken after the last reply and before closing, "conn N PROTO: ...".
func finalDiag(in Inspector, modes []*modeRun) []string {
	var out []string
	sl, ok := in.(SocketLiner)
	for _, m := range modes {
		for _, c := range m.conns {
			var line string
			switch {
			case !m.proto.IsSMC():
				line = "not an SMC socket"
			case !ok:
				line = "no sock_diag line from this inspector"
			default:
				l, err := sl.SocketLine(c.conn.ID())
				if err != nil {
					l = "error: " + err.Error()
				}
				line = l
			}
			out = append(out, fmt.Sprintf("conn %d %s: %s", len(out)+1, m.proto, line))
		}
	}
	return out
}

// measure runs warm-up and then alternating rounds of each protocol until
// every connection has o.Count samples or o.Duration has passed. Rounds
// keep slow drifts of the path (other load, CPU frequency) from favouring
// one protocol.
func measure(ctx context.Context, o Options, modes []*modeRun, size int) error {
	for _, m := range modes {
		err := parallel(m.conns, func(_ int, c *connRun) error {
			c.samples = c.samples[:0]
			c.sent = c.sent[:0]
			for range o.Warmup {
				if _, err := c.pinger.Ping(size); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("%s warm-up, size %d: %w", m.proto, size, err)
		}
	}
	round := o.Round
	// Alternating protocols, the first ping of a round follows the other
	// protocol's: caches, the scheduler's idea of the threads and the
	// NIC's queues are the other's, so it is a warm-up, not a sample.
	switched := len(modes) > 1
	if !switched {
		round = 1000 // only to look at ctx now and then
	}
	// -t, as -n, is per protocol: each gets o.Duration of its own rounds.
	spent := make([]time.Duration, len(modes))
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		done := true
		for i, m := range modes {
			var deadline time.Time
			if o.Duration > 0 {
				if spent[i] >= o.Duration {
					continue
				}
				deadline = time.Now().Add(o.Duration - spent[i])
			}
			start := time.Now()
			err := parallel(m.conns, func(_ int, c *connRun) error { return c.loop(size, round, deadline, o.Interval, switched) })
			spent[i] += time.Since(start)
			if err != nil {
				return fmt.Errorf("%s ping-pong, size %d: %w", m.proto, size, err)
			}
			for _, c := range m.conns {
				full := len(c.samples) == cap(c.samples)
				done = done && (full || (o.Duration > 0 && spent[i] >= o.Duration))
			}
		}
		if done {
			return nil
		}
	}
}

// loop is the measuring loop: no allocation, samples appended within the
// capacity reserved before. Its clock is the Pinger's: the time after a
// ping is when it was sent plus its round trip, so a ping costs the two
// clock reads of its round trip and no more (time.Now, which the deadline
// would need, reads the wall clock as well).
func (c *connRun) loop(size, quota int, deadline time.Time, interval time.Duration, warm bool) error {
	if warm && len(c.samples) < cap(c.samples) {
		if _, err := c.pinger.Ping(size); err != nil {
			return err
		}
	}
	base := c.pinger.base
	now := time.Since(base)
	var end time.Duration // deadline as an offset from base; 0: none
	if !deadline.IsZero() {
		end = max(deadline.Sub(base), 1)
	}
	next := now
	for i := 0; i < quota && len(c.samples) < cap(c.samples); i++ {
		if end > 0 && now >= end {
			return nil
		}
		if interval > 0 {
			if d := next - time.Since(base); d > 0 {
				time.Sleep(d)
			}
			next += interval
		}
		rtt, err := c.pinger.Ping(size)
		if err != nil {
			return err
		}
		now = c.pinger.SentAt() + rtt
		c.samples = append(c.samples, rtt)
		if cap(c.sent) > 0 {
			c.sent = append(c.sent, c.pinger.SentAt())
		}
		c.yield.maybe(now)
		readTick(c.conn.Conn, rtt)
	}
	return nil
}

func parallel(conns []*connRun, fn func(int, *connRun) error) error {
	if len(conns) == 1 {
		return fn(0, conns[0])
	}
	errs := make([]error, len(conns))
	var wg sync.WaitGroup
	for i, c := range conns {
		wg.Go(func() { errs[i] = fn(i, c) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// BWResult is one one-way stream measurement.
type BWResult struct {
	Proto      string  `json:"proto"`
	Size       int     `json:"size"`
	Conns      int     `json:"conns"`
	Messages   int     `json:"messages"`
	Bytes      int64   `json:"bytes"`
	Seconds    float64 `json:"seconds"`
	MBPerSec   float64 `json:"mb_per_s"`
	MsgsPerSec float64 `json:"msg_per_s"`
}

// stream sends no-reply messages for o.Duration (or o.Count per
// connection), then one ping: its echo proves the server has read all, so
// the time includes delivery, not just queueing into the send buffer.
func stream(ctx context.Context, o Options, m *modeRun, size int) (BWResult, error) {
	counts := make([]int, len(m.conns))
	var deadline time.Time
	start := time.Now()
	if o.Duration > 0 {
		deadline = start.Add(o.Duration)
	}
	err := parallel(m.conns, func(i int, c *connRun) error {
		n := 0
		for ; o.Duration > 0 || n < o.Count; n++ {
			if o.Duration > 0 && n%64 == 0 && (!time.Now().Before(deadline) || ctx.Err() != nil) {
				break
			}
			if err := c.pinger.Send(size); err != nil {
				return err
			}
		}
		counts[i] = n
		_, err := c.pinger.Ping(HeaderLen)
		return err
	})
	if err != nil {
		return BWResult{}, fmt.Errorf("%s stream, size %d: %w", m.proto, size, err)
	}
	secs := time.Since(start).Seconds()
	r := BWResult{Proto: m.proto.String(), Size: size, Conns: len(m.conns), Seconds: secs}
	for _, n := range counts {
		r.Messages += n
	}
	r.Bytes = int64(r.Messages) * int64(size)
	r.MBPerSec = float64(r.Bytes) / 1e6 / secs
	r.MsgsPerSec = float64(r.Messages) / secs
	return r, nil
}

// CheckReport is what --check -o json prints: the verdict, the stage that
// failed with its error, and the connection's proof and round trips.
type CheckReport struct {
	Verdict string      `json:"verdict"`         // "OK" or "FAIL"
	Stage   string      `json:"stage,omitempty"` // where it failed: connect, ping, mode
	Error   string      `json:"error,omitempty"`
	Target  string      `json:"target"`
	Proto   string      `json:"proto"`
	Size    int         `json:"size"`
	Conn    *ConnReport `json:"connection,omitempty"`
	Pings   int         `json:"pings,omitempty"`
	RTT     *Summary    `json:"rtt,omitempty"`
}

// runCheck opens one connection, proves its mode, exchanges a few pings
// and prints one line, "OK SMC-R via ..." or "FAIL fallback ...", or with
// -o json one CheckReport.
func runCheck(ctx context.Context, o Options, stdout io.Writer, addr netip.Addr, in Inspector) error {
	size := o.Sizes[0]
	target := netip.AddrPortFrom(addr, o.Port)
	rep := CheckReport{Verdict: "FAIL", Target: target.String(), Proto: o.Proto.String(), Size: size}
	print := func(err error, text string) error {
		if err != nil {
			rep.Error = err.Error()
		}
		var werr error
		if o.Output == "json" {
			enc := json.NewEncoder(stdout)
			enc.SetIndent("", "  ")
			werr = enc.Encode(rep)
		} else {
			_, werr = fmt.Fprintln(stdout, text)
		}
		return errors.Join(err, werr)
	}
	m, err := dialMode(ctx, o, o.Proto, target, in, 1, size, 10, time.Now())
	if err != nil {
		rep.Stage = "connect"
		return print(err, fmt.Sprintf("FAIL connect: %v", err))
	}
	defer m.close()
	c := m.conns[0]
	cr := connReport(o.Proto, c.conn.LocalAddr().String(), c.conn.RemoteAddr().String(), c.conn.ID(), c.proof)
	rep.Conn = &cr
	if err := c.loop(size, 10, time.Time{}, 0, false); err != nil {
		rep.Stage = "ping"
		return print(err, fmt.Sprintf("FAIL %s ping: %v", c.proof, err))
	}
	s := Summarize(c.samples)
	rep.Pings, rep.RTT = s.N, &s
	err = c.proof.Require()
	if !o.Proto.IsSMC() {
		err = nil
	}
	verdict := "OK"
	if err != nil {
		verdict, rep.Stage = "FAIL", "mode"
	}
	rep.Verdict = verdict
	return print(err, fmt.Sprintf("%s %s (%s %v, rtt p50 %sus over %d pings of %d B)",
		verdict, c.proof, o.Proto, c.conn.RemoteAddr(), usec(s.P50), s.N, size))
}
