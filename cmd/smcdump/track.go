package main

import (
	"strings"

	"github.com/smcscope/smcscope/output"
	"github.com/smcscope/smcscope/output/zview"
	"github.com/smcscope/smcscope/track"
)

// newTracker hands output the connection tracker for -z views and
// smc.conn.* fields, keeping the newest keep ended connections whole (-K).
func newTracker(views []string, keep int) (output.Tracker, error) {
	t, err := zview.NewTrackerKeeping(views, keep)
	if err != nil {
		return nil, err
	}
	return t, nil
}

// viewHelp lists the tracker's views for -h.
func viewHelp() string {
	var b strings.Builder
	for _, v := range track.Views() {
		b.WriteString("\n  " + v[0] + ": " + v[1])
	}
	return b.String()
}

// defaultKeep is -K's default: zview's, with which memory stays flat
// however long the capture.
const defaultKeep = zview.MaxClosed
