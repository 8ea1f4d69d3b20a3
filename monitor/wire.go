package monitor

import (
	"context"
	"fmt"
	"io"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/smcscope/smcscope/capture"
	"github.com/smcscope/smcscope/decode"
	"github.com/smcscope/smcscope/track"
)

// Wire runs the decoders and the tracker over a capture file or a live
// interface, beside (or instead of) the kernel's view: queue pairs, CDC
// rates, retransmissions and PSN gaps per link, which the kernel does not
// expose.
type Wire struct {
	name  string
	live  bool
	r     *capture.Reader
	tr    *track.Tracker
	speed float64

	closeOnce sync.Once
	closeErr  error

	mu     sync.Mutex
	frames int
	last   time.Time // capture time of the newest frame
	err    error
	done   bool
}

// OpenWire opens a capture file (path) or a live interface (iface, with
// an optional capture filter). speed paces a file by its timestamps (1 =
// real time, 10 = ten times faster); 0 reads it as fast as possible.
func OpenWire(path, iface, filter string, speed float64) (*Wire, error) {
	var (
		r   *capture.Reader
		err error
	)
	if iface != "" {
		r, err = capture.OpenLive(iface, filter, 0)
	} else {
		r, err = capture.Open(path)
	}
	if err != nil {
		return nil, err
	}
	// The tracker reads the layers itself; no field record is needed, nor
	// the ICRC (it is not shown here).
	r.SetFieldDemand([]decode.FieldID{})
	name := path
	if iface != "" {
		name = iface
	}
	return &Wire{name: name, live: iface != "", r: r, tr: track.New(track.Options{}), speed: speed}, nil
}

// Name says where the frames come from: "capture FILE" or "live IFACE".
func (w *Wire) Name() string {
	if w.live {
		return "live " + w.name
	}
	return "capture " + w.name
}

// Run feeds every frame to the tracker until the capture ends, ctx is
// done or a read fails. It is meant to run in its own goroutine; Snapshot
// may be called meanwhile.
func (w *Wire) Run(ctx context.Context) error {
	defer w.Close()
	var first, start time.Time
	for ctx.Err() == nil {
		f, err := w.r.Next()
		if err != nil {
			w.mu.Lock()
			w.done = true
			if err != io.EOF {
				w.err = err
			}
			w.mu.Unlock()
			if err == io.EOF {
				return nil
			}
			return err
		}
		ts := f.CI.Timestamp
		if w.speed > 0 && !w.live {
			if first.IsZero() {
				first, start = ts, time.Now()
			}
			due := start.Add(time.Duration(float64(ts.Sub(first)) / w.speed))
			if d := time.Until(due); d > 0 {
				select {
				case <-ctx.Done():
					return nil
				case <-time.After(d):
				}
			}
		}
		w.tr.Feed(f)
		w.mu.Lock()
		w.frames++
		w.last = ts
		w.mu.Unlock()
	}
	return nil
}

// Progress returns the frames read, the capture time of the newest one,
// whether the capture has ended and the read error that ended it.
func (w *Wire) Progress() (frames int, last time.Time, done bool, err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.frames, w.last, w.done, w.err
}

// Close stops a live capture or closes the file; Run calls it when the
// capture ends, so a later call returns the first result.
func (w *Wire) Close() error {
	w.closeOnce.Do(func() { w.closeErr = w.r.Close() })
	return w.closeErr
}

// rows turns the tracker's state into the dashboard's rows.
func (w *Wire) rows() ([]ConnRow, []LinkGroupRow, []Event) {
	s := w.tr.Snapshot()
	links := map[int]track.LinkRow{}
	for _, l := range s.LinkRows() {
		links[l.ID] = l
	}
	var conns []ConnRow
	for _, c := range s.ConnRows() {
		r := ConnRow{
			Key: "wire:" + strconv.Itoa(c.ID), Source: "wire", Mode: wireMode(c.Outcome), State: wireState(c),
			Src: parseAddrPort(c.Client), Dst: parseAddrPort(c.Server), Detail: c.Detail,
			RxBytes: c.Srv2Client.Bytes, TxBytes: c.Client2Srv.Bytes, Token: c.ClientToken,
			RMBE: c.ClientRMBE, PeerRMBE: c.ServerRMBE,
		}
		if c.Close != "" {
			r.Detail += "; close: " + c.Close
		}
		if c.LGR != 0 {
			r.LGRID = uint32(c.LGR)
		}
		if l, ok := links[c.Link]; ok {
			r.LinkID = l.LinkID
		}
		if code, ok := declineCode(c.Detail); ok {
			r.PeerDiagnosis = reason(code)
		}
		conns = append(conns, r)
	}
	var groups []LinkGroupRow
	var evs []Event
	for _, g := range s.LGRRows() {
		gr := LinkGroupRow{
			Key: "wire-lgr:" + strconv.Itoa(g.ID), Source: "wire", ID: uint32(g.ID), Kind: "SMC-R",
			State: g.State, Version: g.Version, MaxLinks: g.MaxLinks, MaxConns: g.MaxConns,
			Conns: uint32(len(g.Conns) + g.ConnsFolded), DeleteReason: g.DeleteCode, History: g.History,
		}
		active := 0
		for _, id := range g.Links {
			l, ok := links[id]
			if !ok {
				continue
			}
			lr := LinkRow{
				ID: l.LinkID, State: l.State, Active: l.State == track.LinkUp.String(), Conns: uint32(len(l.Conns) + l.ConnsFolded),
				GID: l.Client.GID, PeerGID: l.Server.GID,
				QPN: parseHex(l.Client.QPN), PeerQPN: parseHex(l.Server.QPN),
				Packets: l.C2S.Packets + l.S2C.Packets, CDCs: l.C2S.CDCs + l.S2C.CDCs,
				Retransmit: l.C2S.Retrans + l.S2C.Retrans, PSNGaps: l.C2S.PSNGaps + l.S2C.PSNGaps,
				NAKs: l.C2S.NAKs + l.S2C.NAKs, RNRs: l.C2S.RNRs + l.S2C.RNRs, DeleteReason: l.DeleteCode,
			}
			if lr.Active {
				active++
			}
			gr.Links = append(gr.Links, lr)
		}
		gr.Redundant = active >= 2
		for _, h := range g.History {
			evs = append(evs, Event{Kind: wireEventKind(h), Source: "wire", Text: fmt.Sprintf("link group %d: %s", g.ID, h)})
		}
		groups = append(groups, gr)
	}
	return conns, groups, evs
}

func wireMode(outcome string) string {
	switch {
	case strings.HasPrefix(outcome, "SMC-R"):
		return "SMC-R"
	case strings.HasPrefix(outcome, "SMC-D"):
		return "SMC-D"
	case strings.HasPrefix(outcome, "fallback"):
		return "fallback"
	case strings.HasPrefix(outcome, "failed"):
		return "failed"
	}
	return "pending"
}

func wireState(c track.ConnRow) string {
	if c.Closed {
		return "closed"
	}
	return "open"
}

func wireEventKind(h string) string {
	switch {
	case strings.Contains(h, "moved") || strings.Contains(h, "failover"):
		return EventFailover
	case strings.Contains(h, "deleted") || strings.Contains(h, "DELETE"):
		return EventLinkDown
	case strings.Contains(h, "added") || strings.Contains(h, "confirmed"):
		return EventLinkUp
	}
	return EventSMC
}

func parseAddrPort(s string) netip.AddrPort {
	ap, _ := netip.ParseAddrPort(s)
	return ap
}

func parseHex(s string) uint32 {
	v, err := strconv.ParseUint(strings.TrimPrefix(s, "0x"), 16, 32)
	if err != nil {
		return 0
	}
	return uint32(v)
}

// declineCode finds a 0x0NNNNNNN decline code in the tracker's detail.
func declineCode(detail string) (uint32, bool) {
	i := strings.Index(detail, "0x0")
	if i < 0 || len(detail) < i+10 {
		return 0, false
	}
	v, err := strconv.ParseUint(detail[i+2:i+10], 16, 32)
	return uint32(v), err == nil
}
