package zview

import (
	"fmt"
	"io"

	"github.com/smcscope/smcscope/capture"
	"github.com/smcscope/smcscope/decode"
	"github.com/smcscope/smcscope/output/follow"
	"github.com/smcscope/smcscope/track"
)

// MaxClosed is how many ended connections smcdump's tracker keeps whole
// for the views (track.Options.MaxClosed); older ones are folded into the
// totals. Open connections stay whole up to track.Options.MaxConns. With
// a few hundred, smcdump's memory is the same on 200 MB as on 2 GB of
// traffic, and a capture of that many connections is still listed whole.
const MaxClosed = 256

// NewTracker returns a tracker set up for the -z specs (see
// track.NewForViews) that writes its views with this package. It is for
// output.Run, which feeds it and writes its views from one goroutine, so
// it takes no lock (track.Options.Unshared).
func NewTracker(specs []string) (Tracker, error) {
	return NewTrackerKeeping(specs, MaxClosed)
}

// NewTrackerKeeping is NewTracker keeping the newest keep ended
// connections whole instead of MaxClosed (smcdump -K), and at least as
// many of all (track.Options.MaxConns): a user who asks to see a few
// thousand connections listed pays for them in memory.
func NewTrackerKeeping(specs []string, keep int) (Tracker, error) {
	if keep < 1 {
		return Tracker{}, fmt.Errorf("keep %d connections: need at least 1", keep)
	}
	opts := track.Options{Unshared: true, MaxClosed: keep, MaxConns: max(keep, track.DefaultMaxConns)}
	follows, err := followViews(specs)
	if err != nil {
		return Tracker{}, err
	}
	if len(follows) > 0 {
		opts.Stream = follows
	}
	t, err := track.NewForViews(opts, specs)
	return Tracker{t, &lastSnapshot{}, follows}, err
}

// followViews makes the smc,follow views among specs.
func followViews(specs []string) (followSinks, error) {
	var fs followSinks
	for _, spec := range specs {
		if name, arg, err := track.ParseView(spec); err == nil && name == track.ViewFollow {
			v, err := follow.Parse(spec, arg)
			if err != nil {
				return nil, fmt.Errorf("%w: %w", track.ErrUnknownView, err)
			}
			fs = append(fs, v)
		}
	}
	return fs, nil
}

// followSinks hands every stream chunk to each smc,follow view.
type followSinks []*follow.View

func (fs followSinks) StreamChunk(ch *track.StreamChunk) {
	for _, v := range fs {
		v.StreamChunk(ch)
	}
}

// view returns the smc,follow view of spec.
func (fs followSinks) view(spec string) *follow.View {
	for _, v := range fs {
		if v.Spec() == spec {
			return v
		}
	}
	return nil
}

// Tracker is a *track.Tracker as smcdump's output package hooks it in
// (output.Tracker): fed every frame, it adds the smc.conn.* fields and
// writes the -z views of one snapshot taken at the end of the pass.
type Tracker struct {
	*track.Tracker
	last    *lastSnapshot
	follows followSinks // the smc,follow views, fed while frames are
}

// FieldDemand is what the frame reader must compute for the views beyond
// the fields printed: what any tracker reads (track.FieldDemand, the ICRC
// verdict, on which smc,expert also counts bad ICRCs).
func (t Tracker) FieldDemand() []decode.FieldID { return track.FieldDemand() }

// FeedTarget is the tracker itself, for a caller that feeds it every frame:
// calling Feed through Tracker's promoted method costs a wrapper call more.
func (t Tracker) FeedTarget() interface{ Feed(f *capture.Frame) } { return t.Tracker }

// lastSnapshot is the snapshot the last views were written from: with
// -T json output asks for each view apart, and a snapshot copies every
// kept connection and link (megabytes) for views that all show the same
// state.
type lastSnapshot struct {
	s      track.Snapshot
	frames int
	ok     bool
}

// WriteViews renders specs from a snapshot of the tracker, the same one as
// the previous call when no frame was fed since.
// The smc,follow views are written from what they gathered during the
// pass; they have no JSON form (their yaml mode is structured).
func (t Tracker) WriteViews(w io.Writer, specs []string, format string) error {
	for _, spec := range specs {
		if v := t.follows.view(spec); v != nil {
			if format == "json" {
				return fmt.Errorf("-z %s: no JSON form; use smc,follow,CONN,yaml without -T json", spec)
			}
			_, err := v.WriteTo(w)
			v.Close()
			if err != nil {
				return err
			}
			continue
		}
		if err := Views(w, t.snapshot(), []string{spec}, format); err != nil {
			return err
		}
	}
	return nil
}

// snapshot is the tracker's snapshot, the same as the previous call's when
// no frame was fed since.
func (t Tracker) snapshot() *track.Snapshot {
	if t.last == nil {
		s := t.Snapshot()
		return &s
	}
	if l := t.last; !l.ok || l.frames != t.Stats().Frames {
		l.s = t.Snapshot()
		l.frames, l.ok = l.s.Stats.Frames, true
	}
	return &t.last.s
}
