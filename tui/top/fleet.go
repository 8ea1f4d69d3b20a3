package top

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/gdamore/tcell/v2"
	"github.com/rivo/tview"

	"github.com/smcscope/smcscope/expert"
	"github.com/smcscope/smcscope/fleet"
	"github.com/smcscope/smcscope/internal/numfmt"
	"github.com/smcscope/smcscope/monitor"
	"github.com/smcscope/smcscope/tui"
)

// The fleet's views (smctop --prometheus): hosts, the link groups joined
// across hosts, and who declined whom.

var hostColumns = []tui.Column{
	col("INSTANCE", "the exporter as Prometheus scrapes it (host:port); enter shows its own dashboard when it answers, else its link groups"),
	col("HOST", "its host name (the one SMC v2 sends in CLC)"),
	col("UP", "Prometheus's last scrape of it worked; sources it could not read follow"),
	col("SMC-R", "SMC-R sockets now"),
	col("SMC-D", "SMC-D sockets now"),
	col("FALLBACK", "sockets now in TCP fallback"),
	col("FB/s", "fallbacks per second over the last 5 minutes"),
	col("HS-ERR/s", "SMC handshake errors per second over the last 5 minutes"),
	col("LGRS", "SMC-R link groups"),
	col("NO-RED", "link groups without redundancy (fewer than two active links)"),
	col("LINKS DOWN", "links not active (lost in a failover, or activating)"),
}

var groupColumns = []tui.Column{
	col("CLIENT", "the client's half: instance and its link group ID"),
	col("SERVER", "the server's half: instance and its link group ID ('-': that host does not export it, or is down)"),
	col("CLIENT LINKS", "the client's links: number:state, device"),
	col("SERVER LINKS", "the server's links"),
	col("CONNS", "connections, client / server"),
	col("NOTE", "asymmetric: the halves have a different number of active links; one-sided: only one host exports the group"),
}

var declineColumns = []tui.Column{
	col("DECLINER", "the host that declined SMC (instance, or the peer address when Prometheus does not scrape it)"),
	col("DECLINED", "the host it declined"),
	col("REASON", "the decliner's reason, by kernel name (SMC_CLC_DECL_*); smc.fleet.eid_mismatch when the two hosts share no UEID and no SEID in use (red)"),
	col("DECLINED SEES", "the declined host's local reason: PEERDECL (its peer diagnosis is the decliner's reason)"),
	col("SOCKETS", "sockets in fallback now, on the decliner / on the declined"),
	col("TOTAL", "fallbacks with this reason the decliner's kernel counted since SMC loaded (all peers)"),
}

func newHosts(f *Fleet) *list[fleet.Snapshot, fleet.Host] {
	return newList("hosts", []string{"h", "fleet"}, hostColumns, hostRows, hostDetail, f.hostDrill)
}

func newGroups() *list[fleet.Snapshot, fleet.Group] {
	return newList("linkgroups", []string{"lgr", "groups"}, groupColumns, groupRows, groupDetail, groupDrill)
}

func newDeclines() *list[fleet.Snapshot, fleet.Decline] {
	return newList("declines", []string{"dec", "fallbacks"}, declineColumns, declineRows, declineDetail, declineDrill)
}

// fleetDrillHelp is what enter does in the fleet's views.
const fleetDrillHelp = "on a host, its own dashboard when its exporter answers (esc or q comes back), else its link groups; on a link group or a decline, its two hosts"

// hostsDrill shows the hosts of the given instances (those Prometheus
// scrapes: a peer named by its address has no row).
func hostsDrill(label string, insts ...string) (tui.Drill, bool) {
	return tui.Drill{View: "hosts", Label: label, Keys: insts}, true
}

func groupDrill(g fleet.Group, _ *fleet.Snapshot) (tui.Drill, bool) {
	var insts []string
	lgr := "-"
	for _, h := range []*fleet.Half{g.Client, g.Server} {
		if h != nil {
			if insts = append(insts, h.Instance); len(insts) == 1 {
				lgr = h.LGR // the client's ID, or the one half's
			}
		}
	}
	return hostsDrill("hosts of link group "+lgr, insts...)
}

func declineDrill(d fleet.Decline, _ *fleet.Snapshot) (tui.Drill, bool) {
	return hostsDrill("hosts of the decline", d.Decliner, d.Declined)
}

func declineDetail(d fleet.Decline, _ *fleet.Snapshot) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s declined %s: %s\n", d.Decliner, d.Declined, declineReason(d))
	fmt.Fprintf(&b, "%s sees %s (its peer's diagnosis: %s)\n", d.Declined, dash(d.DeclinedReason), d.Reason)
	fmt.Fprintf(&b, "sockets in fallback now: %d on the decliner, %d on the declined; the decliner's kernel counted %d with this reason since SMC loaded\n",
		d.DeclinerConns, d.DeclinedConns, d.DeclinerTotal)
	if c := d.Conflict; c != nil {
		fmt.Fprintf(&b, "%s is claimed by %s: which of them it was cannot be told\n", c.Address, strings.Join(c.Instances, ", "))
	}
	return b.String()
}

func hostRows(s *fleet.Snapshot) []entry[fleet.Host] {
	out := make([]entry[fleet.Host], 0, len(s.Hosts))
	for _, h := range s.Hosts {
		up := "yes"
		if !h.Up {
			up = "DOWN"
		}
		if len(h.SourcesDown) > 0 {
			up += " (" + strings.Join(h.SourcesDown, ",") + " no)"
		}
		cells := []string{h.Instance, dash(h.Name), up, fmt.Sprint(h.SMCR), fmt.Sprint(h.SMCD), fmt.Sprint(h.Fallback),
			rateText(h.FallbackRate), rateText(h.HandshakeErrorRate), fmt.Sprint(h.LinkGroups), fmt.Sprint(h.NoRedundancy), fmt.Sprint(h.LinksDown)}
		values := []any{nil, nil, nil, h.SMCR, h.SMCD, h.Fallback, rateValue(h.FallbackRate), rateValue(h.HandshakeErrorRate), h.LinkGroups, h.NoRedundancy, h.LinksDown}
		if !h.Up {
			// Prometheus has no current sample of a host it cannot
			// scrape: its counts are unknown, not 0.
			for i := 3; i < len(cells); i++ {
				cells[i], values[i] = "-", nil
			}
		}
		r := entryRow(h.Instance, cells, values)
		switch {
		case !h.Up:
			r.Color = tcell.ColorRed
		case h.FallbackRate != nil && *h.FallbackRate > 0 || h.LinksDown > 0:
			r.Color = tcell.ColorYellow
		}
		out = append(out, entry[fleet.Host]{h, r})
	}
	return out
}

// rateText writes a rate the fleet read, "-" where Prometheus has none.
func rateText(v *float64) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprintf("%.2f", *v)
}

// rateValue is a rate for sorting (nil sorts as no value).
func rateValue(v *float64) any {
	if v == nil {
		return nil
	}
	return *v
}

func hostDetail(h fleet.Host, s *fleet.Snapshot) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s  host %s  addresses %s  up %v\n", h.Instance, dash(h.Name), dash(strings.Join(h.Addresses, " ")), h.Up)
	if len(h.SourcesDown) > 0 {
		fmt.Fprintf(&b, "sources the exporter could not read: %s\n", strings.Join(h.SourcesDown, ", "))
	}
	for _, c := range s.Conflicts {
		if slices.Contains(c.Instances, h.Instance) {
			fmt.Fprintf(&b, "address %s is also claimed by %s: a peer at it is named by the address\n", c.Address, strings.Join(slices.DeleteFunc(slices.Clone(c.Instances), func(i string) bool { return i == h.Instance }), ", "))
		}
	}
	switch {
	case !h.Up:
		b.WriteString("Prometheus cannot scrape it now: nothing current is known of it\n")
	case !h.EIDsKnown:
		b.WriteString("EIDs -  (the exporter does not export smc_system_info)\n")
	case len(h.EIDs) == 0:
		b.WriteString("EIDs: none (no UEID, no SEID in use): SMC v2 peers decline it\n")
	default:
		fmt.Fprintf(&b, "EIDs (UEIDs, SEID in use): %s\n", strings.Join(h.EIDs, " "))
	}
	for _, g := range s.LinkGroups {
		for _, half := range []*fleet.Half{g.Client, g.Server} {
			if half != nil && half.Instance == h.Instance {
				fmt.Fprintf(&b, "link group %s (%s): %s\n", half.LGR, half.Role, groupLine(g))
			}
		}
	}
	for _, d := range s.Declines {
		if d.Decliner == h.Instance || d.Declined == h.Instance {
			fmt.Fprintf(&b, "%s declined %s: %s\n", d.Decliner, d.Declined, declineReason(d))
		}
	}
	return b.String()
}

// hostDrill opens the host's own dashboard when its exporter answers
// (its /snapshot.json), else the link groups the host has a half of.
func (f *Fleet) hostDrill(h fleet.Host, s *fleet.Snapshot) (tui.Drill, bool) {
	if f.reachable != nil && f.reachable(h.Instance) {
		f.open = h.Instance
		f.App.Stop()
		return tui.Drill{}, false
	}
	keys := []string{}
	for _, g := range s.LinkGroups {
		for _, half := range []*fleet.Half{g.Client, g.Server} {
			if half != nil && half.Instance == h.Instance {
				keys = append(keys, g.Key)
			}
		}
	}
	return tui.Drill{View: "linkgroups", Label: "link groups of " + h.Instance, Keys: keys}, true
}

func halfName(h *fleet.Half) string {
	if h == nil {
		return "-"
	}
	return h.Instance + " " + h.LGR
}

func halfLinks(h *fleet.Half) string {
	if h == nil {
		return "-"
	}
	var ls []string
	for _, l := range h.Links {
		ls = append(ls, fmt.Sprintf("%s:%s %s", l.ID, linkState(l), dash(l.Device)))
	}
	return dash(strings.Join(ls, " "))
}

func groupNote(g fleet.Group) string {
	switch {
	case g.Client == nil || g.Server == nil:
		return "one-sided"
	case g.Asymmetric:
		return fmt.Sprintf("asymmetric: %d active links / %d", g.Client.Active(), g.Server.Active())
	}
	return ""
}

func groupLine(g fleet.Group) string {
	return fmt.Sprintf("client %s [%s]  server %s [%s]  %s", halfName(g.Client), halfLinks(g.Client), halfName(g.Server), halfLinks(g.Server), groupNote(g))
}

func groupRows(s *fleet.Snapshot) []entry[fleet.Group] {
	out := make([]entry[fleet.Group], 0, len(s.LinkGroups))
	for _, g := range s.LinkGroups {
		conns := func(h *fleet.Half) string {
			if h == nil {
				return "-"
			}
			return fmt.Sprint(h.Conns)
		}
		r := entryRow(g.Key, []string{halfName(g.Client), halfName(g.Server), halfLinks(g.Client), halfLinks(g.Server),
			conns(g.Client) + "/" + conns(g.Server), dash(groupNote(g))}, nil)
		if g.Asymmetric || g.Client == nil || g.Server == nil {
			r.Color = tcell.ColorYellow
		}
		out = append(out, entry[fleet.Group]{g, r})
	}
	return out
}

func groupDetail(g fleet.Group, _ *fleet.Snapshot) string {
	var b strings.Builder
	for _, h := range []*fleet.Half{g.Client, g.Server} {
		if h == nil {
			continue
		}
		red := fmt.Sprint(h.Redundant)
		if h.RedundancyUnknown {
			red = "- (not known)"
		}
		fmt.Fprintf(&b, "%s half: %s (%s) link group %s, %d connections, redundant %s\n", h.Role, h.Instance, dash(h.Host), h.LGR, h.Conns, red)
	}
	if n := groupNote(g); n != "" {
		b.WriteString(n + "\n")
	}
	writePairs(&b, g, "", "  ")
	return b.String()
}

// writePairs writes a group's links with both ends' RDMA port counters,
// each line begun with indent, the counters after sep.
func writePairs(w io.Writer, g fleet.Group, indent, sep string) {
	for _, p := range g.Pairs {
		c, sv := g.Client.Link(p.Client), g.Server.Link(p.Server)
		fmt.Fprintf(w, "%slink %s ⇄ %s\n", indent, pairEnd("client", c), pairEnd("server", sv))
		for _, e := range []struct {
			side string
			l    *fleet.Link
		}{{"client", c}, {"server", sv}} {
			if e.l != nil {
				fmt.Fprintf(w, "%s  %s %s/%s  uid %s gid %s%s%s\n", indent, e.side, dash(e.l.Device), dash(e.l.Port), dash(e.l.UID), dash(e.l.GID), sep, portRatesText(e.l.RNIC))
			}
		}
	}
}

// pairEnd names one end of a link pair: the side's link number and state.
func pairEnd(side string, l *fleet.Link) string {
	if l == nil {
		return side + " -"
	}
	return fmt.Sprintf("%s %s %s", side, l.ID, linkState(*l))
}

// linkState is a link's state by the kernel's name, or, where its host
// exports none (smc_link_state), whether it is up; "-" where that is not
// known.
func linkState(l fleet.Link) string {
	switch {
	case l.State != "":
		return l.State
	case l.Unknown:
		return "-"
	case l.Up:
		return "ACTIVE"
	}
	return "down"
}

// portRatesText writes an RDMA port's rates, "-" for each counter the
// port does not have.
func portRatesText(p *fleet.PortRates) string {
	if p == nil {
		return "RNIC counters -"
	}
	num := func(v *float64, f func(float64) string) string {
		if v == nil {
			return "-"
		}
		return f(*v)
	}
	perSec := func(v float64) string { return fmt.Sprintf("%.0f/s", v) }
	return fmt.Sprintf("tx %s %s pkt  rx %s %s pkt  errors %s  congestion %s",
		num(p.TxBytes, bytesRate), num(p.TxPackets, perSec), num(p.RxBytes, bytesRate), num(p.RxPackets, perSec),
		num(p.Errors, perSec), num(p.Congestion, perSec))
}

func declineRows(s *fleet.Snapshot) []entry[fleet.Decline] {
	out := make([]entry[fleet.Decline], 0, len(s.Declines))
	for _, d := range s.Declines {
		key := d.Decliner + ">" + d.Declined + ":" + d.Reason
		row := entryRow(key, []string{d.Decliner, d.Declined, declineReason(d), dash(d.DeclinedReason),
			fmt.Sprintf("%d/%d", d.DeclinerConns, d.DeclinedConns), fmt.Sprint(d.DeclinerTotal)}, []any{nil, nil, nil, nil, d.DeclinerConns + d.DeclinedConns, d.DeclinerTotal})
		if d.EIDMismatch {
			row.Color = tcell.ColorRed
		}
		out = append(out, entry[fleet.Decline]{d, row})
	}
	return out
}

// declineReason is the decliner's reason, and the EID finding when the
// two hosts share no EID.
func declineReason(d fleet.Decline) string {
	if d.EIDMismatch {
		return d.Reason + "; " + expert.EIDMismatch.Def().Name
	}
	return d.Reason
}

// Fleet is the fleet dashboard: hosts, joined link groups and declines
// from a Prometheus server.
type Fleet struct {
	App     *tui.App
	screens []interface {
		tui.Screen
		update(*fleet.Snapshot)
	}
	// reachable says whether a host's exporter answers; open is the host
	// whose own dashboard enter asked for.
	reachable func(instance string) bool
	open      string
	// last is the snapshot shown: kept, marked stale, while the server
	// cannot be read.
	last fleet.Snapshot
}

// NewFleet builds the fleet dashboard.
func NewFleet() *Fleet {
	f := &Fleet{}
	h, g, d := newHosts(f), newGroups(), newDeclines()
	f.screens = append(f.screens, h, g, d)
	f.App = tui.NewApp("smctop --prometheus", h, g, d)
	f.App.SetDrillHelp(fleetDrillHelp)
	f.App.SetKeyHelp("p", "pause / resume the screens (Prometheus is still read; resuming shows the latest)")
	return f
}

// Update shows a fleet snapshot (on the UI goroutine); one that could not
// be read keeps the last one on the screens, marked stale.
func (f *Fleet) Update(s fleet.Snapshot) {
	s = fleet.Keep(f.last, s)
	f.last = s
	for _, sc := range f.screens {
		sc.update(&s)
	}
	f.App.SetStatus(fleetStatus(s))
	f.App.Refresh()
}

// fleetStatus is the status line: the time, the counts, the problems
// (the server's URL is left to the error, which names it).
func fleetStatus(s fleet.Snapshot) string {
	st := s.Time.Format("15:04:05") + "  " + numfmt.Count(len(s.Hosts), "host")
	if n := len(s.Conflicts); n > 0 {
		c := s.Conflicts[0]
		st += "  [yellow]" + tview.Escape(c.Address) + " claimed by " + tview.Escape(strings.Join(c.Instances, ", "))
		if n > 1 {
			st += fmt.Sprintf(" (+%d more)", n-1)
		}
		st += "[-]"
	}
	switch {
	case s.Error != "" && !s.StaleSince.IsZero():
		st += "  [red]stale, as of " + s.StaleSince.Format("15:04:05") + ": " + tview.Escape(s.Error) + "[-]"
	case s.Error != "":
		st += "  [red]" + tview.Escape(s.Error) + "[-]"
	}
	return st
}

// Exporters is how the fleet view reaches each host's exporter for its
// dashboard (/snapshot.json): the scheme ("http" or "https") and the
// client (TLS, auth; nil: the default).
type Exporters struct {
	Scheme string
	HTTP   *http.Client
}

func (e Exporters) url(instance string) string {
	scheme := e.Scheme
	if scheme == "" {
		scheme = "http"
	}
	return scheme + "://" + instance
}

// RunFleet shows the fleet dashboard, reading c every interval, until the
// user quits or ctx ends. enter on a host whose exporter answers shows
// that host's own dashboard (from its /snapshot.json, reached as ex says);
// q there comes back.
func RunFleet(ctx context.Context, c *fleet.Client, interval time.Duration, ex Exporters) error {
	for {
		f := NewFleet()
		f.reachable = ex.answers
		if err := f.run(ctx, c, interval); err != nil || f.open == "" || ctx.Err() != nil {
			return err
		}
		m := monitor.New(monitor.Options{Remote: ex.url(f.open), RemoteHTTP: ex.HTTP})
		err := Run(ctx, m, Options{Interval: interval, BackOut: "the fleet"})
		m.Close()
		if err != nil {
			return err
		}
	}
}

// answers says whether an instance serves /snapshot.json.
func (e Exporters) answers(instance string) bool {
	c := e.HTTP
	if c == nil {
		c = http.DefaultClient
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, e.url(instance)+"/snapshot.json", nil)
	if err != nil {
		return false
	}
	resp, err := c.Do(req)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

func (f *Fleet) run(ctx context.Context, c *fleet.Client, interval time.Duration) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	f.Update(fleet.Read(ctx, c))
	go func() {
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				f.App.QueueUpdate(f.App.Stop)
				return
			case <-tick.C:
			}
			s := fleet.Read(ctx, c)
			f.App.QueueUpdateDraw(func() {
				if !f.App.Paused() {
					f.Update(s)
				}
			})
		}
	}()
	if err := f.App.UseTerminal(); err != nil {
		return err
	}
	return f.App.Run()
}

// WriteFleetText writes a fleet snapshot as text (--once -o text).
func WriteFleetText(w io.Writer, s fleet.Snapshot) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "== fleet  %s  %s  %s\n", s.Source, s.Time.UTC().Format(time.RFC3339), numfmt.Count(len(s.Hosts), "host"))
	if s.Error != "" {
		fmt.Fprintf(tw, "error: %s\n", s.Error)
	}
	if !s.StaleSince.IsZero() {
		fmt.Fprintf(tw, "stale: the data below is as of %s\n", s.StaleSince.UTC().Format(time.RFC3339))
	}
	for _, c := range s.Conflicts {
		fmt.Fprintf(tw, "warning: address %s is claimed by %s; a peer at it is named by the address\n", c.Address, strings.Join(c.Instances, ", "))
	}
	fmt.Fprintln(tw, "\n== hosts (the worst first)")
	fmt.Fprintln(tw, "INSTANCE\tHOST\tUP\tSMC-R\tSMC-D\tFALLBACK\tFB/s\tHS-ERR/s\tLGRS\tNO-RED\tLINKS-DOWN")
	for _, e := range hostRows(&s) {
		fmt.Fprintln(tw, strings.Join(e.row.Cells, "\t"))
	}
	fmt.Fprintln(tw, "\n== link groups, both halves")
	for _, g := range s.LinkGroups {
		fmt.Fprintln(tw, groupLine(g))
		writePairs(tw, g, "  ", "\t")
	}
	fmt.Fprintln(tw, "\n== declines")
	for _, d := range s.Declines {
		fmt.Fprintf(tw, "%s declined %s\t%s\t(%s sees %s)\tsockets %d/%d\ttotal %d\n", d.Decliner, d.Declined, declineReason(d), d.Declined, d.DeclinedReason, d.DeclinerConns, d.DeclinedConns, d.DeclinerTotal)
	}
	return tw.Flush()
}
