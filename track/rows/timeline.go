package rows

import (
	"time"

	"github.com/smcscope/smcscope/track"
)

// Timeline is the life of one connection.
type Timeline struct {
	Conn   Conn            `json:"conn"`
	Events []TimelineEvent `json:"events"`
	Cut    int             `json:"events_not_kept,omitempty"`
	Note   string          `json:"note,omitempty"`
}

// TimelineEvent is one frame of a timeline.
type TimelineEvent struct {
	Frame int     `json:"frame"`
	Rel   float64 `json:"rel_s"`
	// AtLeast: the capture's clock stepped back after the first event,
	// up to this one (track.Snapshot.SteppedWithin): Rel lacks the time that
	// passed across the step, a lower bound.
	AtLeast bool   `json:"rel_at_least,omitempty"`
	Dir     string `json:"dir"`
	What    string `json:"what"`
	Info    string `json:"info"`
}

// TimelineOf returns the smc,timeline view of connection arg (see
// track.Snapshot.FindConn).
func TimelineOf(s *track.Snapshot, arg string) (Timeline, error) {
	c, err := s.FindConn(arg)
	if err != nil {
		return Timeline{}, err
	}
	tl := Timeline{Conn: connRow(s, c, linksByID(s), missedByGroup(s)), Events: []TimelineEvent{}, Cut: c.TimelineCut}
	if len(c.Timeline) == 0 && c.Frames > 0 {
		tl.Note = "no events recorded: the tracker records a timeline only for connections named before the pass (Options.Timeline / track.OptionsForViews)"
	}
	var t0 time.Time
	first := 0
	if len(c.Timeline) > 0 {
		t0, first = c.Timeline[0].Time, c.Timeline[0].Frame
	}
	stepped := false
	for _, e := range c.Timeline {
		ev := TimelineEvent{Frame: e.Frame, Rel: e.Time.Sub(t0).Seconds(), AtLeast: s.SteppedWithin(first, e.Frame),
			Dir: dirName(e.Dir, c.RolesUnknown), What: e.What, Info: e.Info}
		stepped = stepped || ev.AtLeast
		tl.Events = append(tl.Events, ev)
	}
	if stepped {
		tl.Note = joinNote(tl.Note, "the capture's clock stepped back during this connection (smc.capture.time_backwards): "+
			"a time marked >= lacks the time that passed across the step, it is at least that")
	}
	return tl, nil
}

// joinNote is a and b, each a sentence of a note, "; " between them.
func joinNote(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

func dirName(d track.Dir, unknown bool) string {
	if unknown {
		if d == track.DirC2S {
			return "A->B"
		}
		return "B->A"
	}
	return d.String()
}
