// Package agree holds smctop's reading of a capture to smcdump's: it
// replays the capture's frames once, through a tracker set up as smcdump
// sets it up for its -z views and one set up as smctop's wire source,
// and lists every fact the two tell differently: connections (mode,
// outcome, state, link, link group, bytes), link groups (ID, state, links
// with their numbers and states, history) and findings (each finding on
// each object, and the counts per finding).
//
// It runs in process, without the binaries, so that a mutation generator
// can feed it thousands of damaged captures:
//
//	diffs, err := agree.Bytes("variant-17", pcapBytes)
//
// or, in a test, agree.Agree(t, name, pcapBytes).
package agree

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/smcscope/smcscope/capture"
	"github.com/smcscope/smcscope/expert"
	"github.com/smcscope/smcscope/monitor"
	"github.com/smcscope/smcscope/output/zview"
	"github.com/smcscope/smcscope/track"
	"github.com/smcscope/smcscope/track/rows"
)

// Disagreement is one fact smcdump and smctop tell differently.
type Disagreement struct {
	What    string // the fact: "conn 3 mode", "link group wire-lgr:1 history"
	Smcdump string
	Smctop  string
}

func (d Disagreement) String() string {
	return fmt.Sprintf("%s: smcdump %q, smctop %q", d.What, d.Smcdump, d.Smctop)
}

// views are the -z views smcdump would be asked for: the tracker is set
// up for them (smc,expert checks the ICRC, as smctop's wire source does).
var views = []string{track.ViewConns, track.ViewLinks, track.ViewLGR, track.ViewExpert}

// File compares smcdump's and smctop's readings of the capture at path.
func File(path string) ([]Disagreement, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Bytes(path, data)
}

// Bytes compares smcdump's and smctop's readings of a capture given as
// the bytes of a pcap or pcapng file. A file that ends early or has a
// damaged record is read up to there, as both tools read it; an error is
// returned only when the file is no capture at all.
func Bytes(name string, data []byte) ([]Disagreement, error) {
	r, err := capture.NewFileReader(name, bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	dump, err := zview.NewTracker(views)
	if err != nil {
		return nil, err
	}
	r.SetFieldDemand(dump.FieldDemand())
	// As monitor.OpenWire makes smctop's.
	top := track.New(track.Options{})
	for {
		f, err := r.Next()
		if err != nil {
			if !errors.Is(err, io.EOF) && f != nil {
				return nil, err
			}
			break
		}
		dump.Feed(f)
		top.Feed(f)
	}
	// Both tools end the capture at the end of the file (smcdump's run,
	// smctop's replay): what was pending then is a finding of both.
	end, _, _ := r.Recorded()
	dump.EndCapture(end)
	top.EndCapture(end)
	a, b := dump.Snapshot(), top.Snapshot()
	return Snapshots(&a, &b), nil
}

// Agree fails t with every disagreement of smcdump and smctop on the
// capture in data (pcap or pcapng bytes).
func Agree(t testing.TB, name string, data []byte) {
	t.Helper()
	diffs, err := Bytes(name, data)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	for _, d := range diffs {
		t.Errorf("%s: %s", name, d)
	}
}

// Snapshots compares dump, a snapshot of a tracker set up as smcdump's,
// with top, one of a tracker set up as smctop's, both fed the same
// frames: dump as smcdump's views show it (package rows), top as smctop
// shows it (monitor.WireSnapshot). Objects one tracker folded into its
// totals and the other kept are not compared.
func Snapshots(dump, top *track.Snapshot) []Disagreement {
	c := comparison{folded: dump.Stats.Evicted > 0 || top.Stats.Evicted > 0 || dump.Folded() || top.Folded()}
	w := monitor.WireSnapshot(top)
	c.conns(rows.ConnRows(dump), w.Conns)
	c.groups(rows.LGRRows(dump), w.LinkGroups)
	c.findings(dump, w)
	return c.out
}

type comparison struct {
	folded bool
	out    []Disagreement
}

func (c *comparison) check(what, dump, top string) {
	if dump != top {
		c.out = append(c.out, Disagreement{What: what, Smcdump: dump, Smctop: top})
	}
}

// modes are smctop's spelling of the rows package's modes.
var modes = [...]monitor.Mode{rows.ModePending: monitor.ModePending, rows.ModeSMCR: monitor.ModeSMCR,
	rows.ModeSMCD: monitor.ModeSMCD, rows.ModeFallback: monitor.ModeFallback, rows.ModeFailed: monitor.ModeFailed}

func (c *comparison) conns(dump []rows.Conn, top []monitor.ConnRow) {
	byKey := make(map[string]*monitor.ConnRow, len(top))
	for i := range top {
		byKey[top[i].Key] = &top[i]
	}
	for i := range dump {
		d := &dump[i]
		key := fmt.Sprintf("wire:%d", d.ID)
		t := byKey[key]
		if t == nil {
			if !c.folded {
				c.check("conn "+key, "listed", "missing")
			}
			continue
		}
		delete(byKey, key)
		what := "conn " + key + " "
		c.check(what+"mode", string(modes[d.Mode]), string(t.Mode))
		c.check(what+"outcome", d.Detail, t.Details().Detail)
		c.check(what+"ended", fmt.Sprint(d.Ended), fmt.Sprint(t.State == monitor.StateClosed))
		c.check(what+"link", rows.LinkName(d.Link), rows.LinkName(t.Link().LinkID))
		c.check(what+"link group", groupKey(d.LGR), t.Link().LGRKey)
		c.check(what+"bytes", fmt.Sprintf("%d/%d", d.Client2Srv.Bytes, d.Srv2Client.Bytes), fmt.Sprintf("%d/%d", t.TxBytes, t.RxBytes))
	}
	if !c.folded {
		for k := range byKey {
			c.check("conn "+k, "missing", "listed")
		}
	}
}

// groupKey is smctop's key of smcdump's link group id ("" for none).
func groupKey(id int) string {
	if id == 0 {
		return ""
	}
	return monitor.WireLGRKey(id)
}

// linkName is smctop's name of a link (monitor.LinkRow.Name) from
// smcdump's row: its kernel number, else its QPs.
func linkName(l *rows.Link) string {
	return track.LinkName(l.LinkID, l.Facts.ClientQPN, l.Facts.ServerQPN)
}

// linkState is the state smctop shows for a link smcdump lists; "" for a
// link smctop does not list (it never was a link for the kernels).
func linkState(l *rows.Link) monitor.LinkState {
	switch {
	case !l.Facts.Existed:
		return ""
	case l.Facts.Silent:
		return monitor.LinkNotKnown
	case l.Facts.State == track.LinkUp, l.Facts.State == track.LinkUnknown:
		return monitor.LinkActive
	case l.Facts.State == track.LinkDeleted && l.Facts.WithGroup:
		return monitor.LinkInactive
	case l.Facts.State == track.LinkDeleted:
		return monitor.LinkDeleted
	}
	return monitor.LinkActivating
}

func (c *comparison) groups(dump []rows.LGR, top []monitor.LinkGroupRow) {
	byKey := make(map[string]*monitor.LinkGroupRow, len(top))
	for i := range top {
		byKey[top[i].Key] = &top[i]
	}
	for i := range dump {
		d := &dump[i]
		key := groupKey(d.ID)
		t := byKey[key]
		if t == nil {
			if !c.folded {
				c.check("link group "+key, "listed", "missing")
			}
			continue
		}
		delete(byKey, key)
		what := "link group " + key + " "
		c.check(what+"id", dashed(d.ClientLGRID), t.ID.String())
		c.check(what+"peer id", dashed(d.ServerLGRID), t.PeerID.String())
		c.check(what+"deleted", fmt.Sprint(d.GroupState == rows.GroupEnded), fmt.Sprint(t.Deleted))
		var dl, tl []string
		for j := range d.LinkRows {
			l := &d.LinkRows[j]
			if st := linkState(l); st != "" {
				dl = append(dl, linkName(l)+":"+string(st))
			}
		}
		for _, l := range t.Links {
			tl = append(tl, l.Name()+":"+string(l.State))
		}
		c.check(what+"links", strings.Join(dl, " "), strings.Join(tl, " "))
		var th []string
		for _, h := range t.History {
			th = append(th, fmt.Sprintf("frame %d: %s", h.Frame, h.Text))
		}
		c.check(what+"history", strings.Join(d.History, "\n"), strings.Join(th, "\n"))
	}
	if !c.folded {
		for k := range byKey {
			c.check("link group "+k, "missing", "listed")
		}
	}
}

func dashed(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// findings compares each finding on each object (smctop logs each as an
// event at its first frame) and the count of each finding.
func (c *comparison) findings(dump *track.Snapshot, top monitor.Snapshot) {
	links := map[int]*track.Link{}
	for i := range dump.Links {
		links[dump.Links[i].ID] = &dump.Links[i]
	}
	var dk, tk []string
	for _, f := range dump.Findings() {
		k := fmt.Sprintf("%s frame %d", f.ID.Def().Name, f.First)
		switch f.Object {
		case expert.ObjectConn:
			k += fmt.Sprintf(" on wire:%d", f.ObjectID)
		case expert.ObjectLink:
			// An event keys a link by its group and number (Event.LGR,
			// Event.Link); a link without a known number by its group.
			if l := links[f.ObjectID]; l != nil && l.LinkID != 0 {
				k += fmt.Sprintf(" on %s link %d", groupKey(l.LGR), l.LinkID)
			} else if l != nil {
				k += " on " + groupKey(l.LGR)
			}
		case expert.ObjectLGR:
			k += " on " + groupKey(f.ObjectID)
		}
		dk = append(dk, k)
	}
	for _, e := range top.Events {
		if e.Kind != monitor.EventExpert {
			continue
		}
		k := fmt.Sprintf("%s frame %d", e.Finding, e.Frame)
		switch {
		case e.Conn != "":
			k += " on " + e.Conn
		case e.LGR != "" && e.Link != 0:
			k += fmt.Sprintf(" on %s link %d", e.LGR, e.Link)
		case e.LGR != "":
			k += " on " + e.LGR
		}
		tk = append(tk, k)
	}
	sort.Strings(dk)
	sort.Strings(tk)
	c.check("findings", strings.Join(dk, "\n"), strings.Join(tk, "\n"))
	counts := map[string]uint64{}
	for _, s := range dump.ExpertView().Severities {
		for _, r := range s.Findings {
			counts[r.ID] += uint64(r.Count)
		}
	}
	for _, e := range top.Expert {
		c.check("count of "+e.ID.String(), fmt.Sprint(counts[e.ID.String()]), fmt.Sprint(e.Count))
		delete(counts, e.ID.String())
	}
	for id, n := range counts {
		c.check("count of "+id, fmt.Sprint(n), "not counted")
	}
}
