package probe

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"
)

// Report is what the client prints; -o json writes it as is.
type Report struct {
	Target  string       `json:"target"`
	Proto   string       `json:"proto"`
	Conns   []ConnReport `json:"connections"`
	Results []Result     `json:"results,omitempty"`
	Ratios  []Ratio      `json:"ratios_to_tcp,omitempty"`
	BW      []BWResult   `json:"bandwidth,omitempty"`
	// FinalDiag is --diag: each connection's sock_diag line at the end.
	FinalDiag []string `json:"final_diag,omitempty"`
	// Digests is --digest: what each connection's application wrote and
	// read, "conn N PROTO: src=A dst=B c2s_bytes=... c2s_sha256=...".
	Digests  []string `json:"digests,omitempty"`
	hists    map[string][]Bucket
	histKeys []string
}

// ConnReport is the proof of one connection's mode.
type ConnReport struct {
	Proto           string `json:"proto"`
	Local           string `json:"local"`
	Remote          string `json:"remote"`
	Inode           uint64 `json:"inode"`
	Cookie          uint64 `json:"cookie,omitempty"`
	Mode            string `json:"mode"`
	Reason          uint32 `json:"reason,omitempty"`
	ReasonName      string `json:"reason_name,omitempty"`
	ReasonMeaning   string `json:"reason_meaning,omitempty"`
	PeerDiagnosis   uint32 `json:"peer_diagnosis,omitempty"`
	PeerDiagName    string `json:"peer_diagnosis_name,omitempty"`
	PeerDiagMeaning string `json:"peer_diagnosis_meaning,omitempty"`
	Token           uint32 `json:"token,omitempty"`
	Link            *Link  `json:"link,omitempty"`
	DMB             *DMB   `json:"dmb,omitempty"`
	ProofError      string `json:"proof_error,omitempty"`
	proof           Proof
}

// Result is the statistics of one protocol at one size. RTT is the round
// trip; HalfRTT = RTT/2 is the one-way estimate sockperf reports.
type Result struct {
	Proto   string  `json:"proto"`
	Mode    string  `json:"mode"`
	Size    int     `json:"size"`
	RTT     Summary `json:"rtt"`
	HalfRTT Summary `json:"half_rtt"`
	// baseline marks the --compare tcp results, the denominator of Ratios.
	baseline bool
}

// Ratio compares one protocol with the TCP baseline at one size, RTT over
// RTT (below 1: faster than TCP).
type Ratio struct {
	Proto string  `json:"proto"`
	Size  int     `json:"size"`
	P50   float64 `json:"p50"`
	Mean  float64 `json:"mean"`
	P99   float64 `json:"p99"`
}

func newReport(m *modeRun) *Report {
	r := &Report{Target: m.target.String(), Proto: m.proto.String(), hists: map[string][]Bucket{}}
	r.addConns(m)
	return r
}

func (r *Report) addConns(m *modeRun) {
	for _, c := range m.conns {
		r.Conns = append(r.Conns, connReport(m.proto, c.conn.LocalAddr().String(), c.conn.RemoteAddr().String(), c.conn.ID(), c.proof))
	}
}

func connReport(p Proto, local, remote string, id SocketID, pr Proof) ConnReport {
	cr := ConnReport{Proto: p.String(), Local: local, Remote: remote, Inode: id.Inode, Cookie: id.Cookie, Mode: pr.Mode.String(), Token: pr.Token, Link: pr.Link, DMB: pr.DMB, proof: pr}
	if pr.Mode == ModeFallback {
		cr.Reason, cr.ReasonName, cr.ReasonMeaning = uint32(pr.Reason), pr.Reason.String(), pr.Reason.Meaning()
		if d := pr.PeerDiagnosis; d != 0 {
			cr.PeerDiagnosis, cr.PeerDiagName, cr.PeerDiagMeaning = uint32(d), d.String(), d.Meaning()
		}
	}
	if pr.Err != nil {
		cr.ProofError = pr.Err.Error()
	}
	return cr
}

// modeLabel names what the samples measured: the protocol asked for and
// the mode the kernel chose, "smc/SMC-R" or "smc/TCP-FALLBACK".
func modeLabel(m *modeRun) string {
	mode := ""
	for _, c := range m.conns {
		switch {
		case mode == "":
			mode = c.proof.Mode.String()
		case mode != c.proof.Mode.String():
			mode = "mixed"
		}
	}
	return mode
}

func (r *Report) addResult(o Options, m *modeRun, size int) {
	n := 0
	for _, c := range m.conns {
		n += len(c.samples)
	}
	all := make([]time.Duration, 0, n)
	for _, c := range m.conns {
		all = append(all, c.samples...)
	}
	s := Summarize(all)
	res := Result{Proto: m.proto.String(), Mode: modeLabel(m), Size: size, RTT: s, HalfRTT: s.Half()}
	if o.Hist {
		key := fmt.Sprintf("%s size %d", res.Proto, size)
		r.hists[key] = Histogram(all, 20)
		r.histKeys = append(r.histKeys, key)
	}
	res.baseline = m.baseline
	r.Results = append(r.Results, res)
}

// addRatios divides every other protocol's results at size by those of the
// TCP baseline measured in the same rounds.
func (r *Report) addRatios(size int) {
	var base *Result
	for i := range r.Results {
		if x := &r.Results[i]; x.Size == size && x.baseline {
			base = x
		}
	}
	if base == nil || base.RTT.P50 <= 0 || base.RTT.Mean <= 0 || base.RTT.P99 <= 0 {
		return
	}
	for _, x := range r.Results {
		if x.Size != size || x.baseline {
			continue
		}
		r.Ratios = append(r.Ratios, Ratio{
			Proto: x.Proto,
			Size:  size,
			P50:   float64(x.RTT.P50) / float64(base.RTT.P50),
			Mean:  float64(x.RTT.Mean) / float64(base.RTT.Mean),
			P99:   float64(x.RTT.P99) / float64(base.RTT.P99),
		})
	}
}

func (r *Report) writeHeader(w io.Writer, o Options) error {
	if o.Output == "json" {
		return nil
	}
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "smcping %s proto %s, %d connection(s) per protocol", r.Target, r.Proto, o.Parallel)
	if o.Duration > 0 {
		fmt.Fprintf(bw, ", %v per size", o.Duration)
	} else {
		fmt.Fprintf(bw, ", %d messages per connection and size", o.Count)
	}
	if o.Interval > 0 {
		fmt.Fprintf(bw, ", one every %v\n", o.Interval)
	} else {
		fmt.Fprintf(bw, ", back to back\n")
	}
	for i, c := range r.Conns {
		fmt.Fprintf(bw, "conn %d %s %s -> %s: %s\n", i+1, c.Proto, c.Local, c.Remote, c.proof)
	}
	return bw.Flush()
}

// writeBody prints the measurements: the statistics tables, ratios,
// histograms and stream results, or the whole report as JSON.
func (r *Report) writeBody(w io.Writer, o Options) error {
	if o.Output == "json" {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(r)
	}
	bw := bufio.NewWriter(w)
	if len(r.Results) > 0 {
		writeTable(bw, "RTT (round trip), usec", r.Results, func(x Result) Summary { return x.RTT })
		writeTable(bw, "RTT/2 (one-way estimate, as sockperf reports), usec", r.Results, func(x Result) Summary { return x.HalfRTT })
	}
	for _, q := range r.Ratios {
		fmt.Fprintf(bw, "%s/tcp ratio size %d: p50 %.3f  mean %.3f  p99 %.3f\n", q.Proto, q.Size, q.P50, q.Mean, q.P99)
	}
	for _, k := range r.histKeys {
		fmt.Fprintf(bw, "\nhistogram RTT usec, %s\n", k)
		WriteHistogram(bw, r.hists[k])
	}
	if len(r.BW) > 0 {
		tw := tabwriter.NewWriter(bw, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintf(bw, "\none-way stream\n")
		fmt.Fprintln(tw, "proto\tsize\tconns\tmessages\tseconds\tMB/s\tmsg/s\t")
		for _, b := range r.BW {
			fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%.3f\t%.1f\t%.0f\t\n", b.Proto, b.Size, b.Conns, b.Messages, b.Seconds, b.MBPerSec, b.MsgsPerSec)
		}
		tw.Flush()
	}
	if len(r.FinalDiag) > 0 {
		fmt.Fprintf(bw, "\nkernel state at the end (sock_diag)\n")
		for _, l := range r.FinalDiag {
			fmt.Fprintf(bw, "diag %s\n", l)
		}
	}
	if len(r.Digests) > 0 {
		fmt.Fprintf(bw, "\nwhat the application wrote and read (--digest)\n")
		for _, l := range r.Digests {
			fmt.Fprintf(bw, "digest %s\n", l)
		}
	}
	return bw.Flush()
}

func writeTable(w io.Writer, title string, rs []Result, pick func(Result) Summary) {
	fmt.Fprintf(w, "\n%s\n", title)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "size\tproto\tmode\tn\tmin\tmean\tstddev\tp50\tp90\tp99\tp99.9\tp99.99\tmax\t")
	for _, x := range rs {
		s := pick(x)
		fmt.Fprintf(tw, "%d\t%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", x.Size, x.Proto, x.Mode, s.N,
			usec(s.Min), usec(s.Mean), usec(s.Stddev), usec(s.P50), usec(s.P90), usec(s.P99), usec(s.P999), usec(s.P9999), usec(s.Max))
	}
	tw.Flush()
}

// csvLog is --log: every sample, in the order taken, one line each, like
// sockperf's --full-log. sent_ns is when the ping left, counted from the
// start of the run on the monotonic clock, the same time line for every
// connection and protocol; rtt_ns is its round trip.
type csvLog struct {
	f *os.File
	w *bufio.Writer
}

func openCSV(name string) (*csvLog, error) {
	f, err := os.Create(name)
	if err != nil {
		return nil, usagef("--log %q: %v", name, err)
	}
	l := &csvLog{f: f, w: bufio.NewWriter(f)}
	if _, err := l.w.WriteString("proto,mode,size,conn,seq,sent_ns,rtt_ns\n"); err != nil {
		l.close()
		return nil, fmt.Errorf("--log: %w", err)
	}
	return l, nil
}

func (l *csvLog) write(m *modeRun, size int) error {
	for ci, c := range m.conns {
		mode := strings.ToLower(c.proof.Mode.String())
		for i, s := range c.samples {
			var sent time.Duration
			if i < len(c.sent) {
				sent = c.sent[i]
			}
			if _, err := fmt.Fprintf(l.w, "%s,%s,%d,%d,%d,%d,%d\n", m.proto, mode, size, ci+1, i, sent.Nanoseconds(), s.Nanoseconds()); err != nil {
				return fmt.Errorf("--log: %w", err)
			}
		}
	}
	return nil
}

func (l *csvLog) close() error {
	if l.f == nil {
		return nil
	}
	err := l.w.Flush()
	if cerr := l.f.Close(); err == nil {
		err = cerr
	}
	l.f = nil
	if err != nil {
		return fmt.Errorf("--log: %w", err)
	}
	return nil
}
