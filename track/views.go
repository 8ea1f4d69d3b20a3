package track

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/smcscope/smcscope/expert"
)

// View names for smcdump -z.
const (
	ViewConns    = "smc,conns"
	ViewLinks    = "smc,links"
	ViewLGR      = "smc,lgr"
	ViewDecline  = "smc,decline"
	ViewTimeline = "smc,timeline"
	ViewExpert   = "smc,expert"
	// ViewFollow is the application bytes of one connection (Options.Stream),
	// as tshark's -z follow,tcp: written by package output/follow.
	ViewFollow = "smc,follow"
)

// Views lists the view names with a one-line description, for -z help.
func Views() [][2]string {
	return [][2]string{
		{ViewConns, "SMC connections: outcome, handshake times, CDCs and bytes per direction"},
		{ViewLinks, "RoCE links: QPs, state, RC ACK/NAK/RNR, PSN gaps, retransmissions"},
		{ViewLGR, "link groups: peers, links, connections, deletion reason"},
		{ViewDecline, "fallbacks: who declined, when, why (decline codes named)"},
		{ViewTimeline + ",CONN", "life of one connection frame by frame (CONN = ID or ip:port)"},
		{ViewExpert, "expert findings by severity: what to look at, with first/last frame and count (package expert)"},
		{ViewFollow + ",CONN", "the application bytes of one SMC-R connection, both directions in order, as tshark's -z follow,tcp (smc,follow,CONN,MODE: ascii, hex, raw or yaml)"},
		{ViewExpert + ",SEVERITY", "the same from a severity up: chat, note, warn (warning) or error, as tshark's -z expert,warn"},
	}
}

// ErrUnknownView is returned for a -z name the tracker does not provide.
var ErrUnknownView = errors.New("unknown view")

// ParseView splits a -z argument such as "smc,timeline,3" into the view
// name and its argument.
func ParseView(spec string) (name, arg string, err error) {
	if strings.HasPrefix(spec, ViewTimeline) {
		rest := strings.TrimPrefix(spec, ViewTimeline)
		if !strings.HasPrefix(rest, ",") || len(rest) < 2 {
			return "", "", fmt.Errorf("%w: %q needs a connection: %s,ID or %s,IP:PORT", ErrUnknownView, spec, ViewTimeline, ViewTimeline)
		}
		return ViewTimeline, rest[1:], nil
	}
	if rest, ok := strings.CutPrefix(spec, ViewFollow+","); ok && rest != "" {
		return ViewFollow, rest, nil
	}
	if rest, ok := strings.CutPrefix(spec, ViewExpert+","); ok {
		// tshark's -z expert,warn: a severity floor for the view.
		if _, ok := expert.ParseSeverity(rest); !ok {
			return "", "", fmt.Errorf("%w: %q: severity %q is not chat, note, warn (warning) or error", ErrUnknownView, spec, rest)
		}
		return ViewExpert, rest, nil
	}
	switch spec {
	case ViewConns, ViewLinks, ViewLGR, ViewDecline, ViewExpert:
		return spec, "", nil
	}
	return "", "", fmt.Errorf("%w: %q (known: smc,conns smc,links smc,lgr smc,decline smc,timeline,CONN smc,follow,CONN[,MODE] smc,expert smc,expert,SEVERITY)", ErrUnknownView, spec)
}

// OptionsForViews returns opts with what the given -z specs need set
// before the pass (a timeline is recorded only for the connections it
// names). Unknown specs are left for the renderer (zview.View) to report.
func OptionsForViews(opts Options, specs []string) Options {
	for _, s := range specs {
		if name, arg, err := ParseView(s); err == nil && name == ViewTimeline {
			if opts.Timeline != "" && opts.Timeline != arg {
				opts.Timeline = "all"
			} else {
				opts.Timeline = arg
			}
		}
	}
	return opts
}

// NewForViews validates -z specs and returns a tracker set up for them
// (timelines recorded for the connections they name).
func NewForViews(opts Options, specs []string) (*Tracker, error) {
	for _, s := range specs {
		if _, _, err := ParseView(s); err != nil {
			return nil, err
		}
	}
	return New(OptionsForViews(opts, specs)), nil
}

// FindConn finds a connection by tracker ID ("3") or endpoint
// ("10.10.0.2:54812"), as -z smc,timeline,CONN names it.
func (s *Snapshot) FindConn(arg string) (*Conn, error) {
	if id, err := strconv.Atoi(arg); err == nil {
		for i := range s.Conns {
			if s.Conns[i].ID == id {
				return &s.Conns[i], nil
			}
		}
		if s.folded.conns.n > 0 {
			return nil, fmt.Errorf("smc,timeline: no connection %d among the ones kept whole (see smc,conns; %d older ones were folded into the totals)", id, s.folded.conns.n)
		}
		return nil, fmt.Errorf("smc,timeline: no connection %d (see smc,conns)", id)
	}
	for i := range s.Conns {
		c := &s.Conns[i]
		if (c.Client.IsValid() && c.Client.String() == arg) || (c.Server.IsValid() && c.Server.String() == arg) {
			return c, nil
		}
	}
	return nil, fmt.Errorf("smc,timeline: no connection with endpoint %q (see smc,conns)", arg)
}
