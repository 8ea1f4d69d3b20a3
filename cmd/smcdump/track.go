package main

import (
	"io"
	"strings"

	"github.com/smcscope/smcscope/output"
	"github.com/smcscope/smcscope/track"
)

// tracker adapts track.Tracker to output.Tracker.
type tracker struct{ *track.Tracker }

func newTracker(views []string) (output.Tracker, error) {
	for _, v := range views {
		if _, _, err := track.ParseView(v); err != nil {
			return nil, err
		}
	}
	return tracker{track.New(track.OptionsForViews(track.Options{}, views))}, nil
}

func (t tracker) WriteViews(w io.Writer, views []string, format string) error {
	for _, v := range views {
		name, arg, err := track.ParseView(v)
		if err != nil {
			return err
		}
		if err := t.WriteView(w, name, arg, format); err != nil {
			return err
		}
	}
	return nil
}

// viewHelp lists the tracker's views for -h.
func viewHelp() string {
	var b strings.Builder
	for _, v := range track.Views() {
		b.WriteString("\n  " + v[0] + ": " + v[1])
	}
	return b.String()
}
