package top

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/gdamore/tcell/v2"

	"github.com/smcscope/smcscope/internal/testutil"
	"github.com/smcscope/smcscope/monitor"
)

// TestRestartPausedStatus: a replay paused and then restarted stands
// before its first frame, paused: the status line says so, not only
// "0 frames".
func TestRestartPausedStatus(t *testing.T) {
	w, err := monitor.OpenWire("../../samples/multilink.pcap", "", "", 1)
	if err != nil {
		t.Fatal(err)
	}
	m := monitor.New(monitor.Options{Wire: w})
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	tp := New()
	s := testutil.NewScreen(t, tp.App.Application)
	s.Start(120, 40, func() error { return tp.Run(ctx, m, Options{Interval: 20 * time.Millisecond}) })
	s.Until("×1 ")
	s.Key(tcell.KeyRune, ' ')
	s.Until("paused")
	s.Key(tcell.KeyRune, 'R')
	scr := s.Until("start ×1 paused")
	if st := statusLine(scr); !strings.Contains(st, "0 frames") {
		t.Errorf("status line %q", st)
	}
}
