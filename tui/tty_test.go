package tui

import (
	"io"
	"strings"
	"testing"
	"time"

	"github.com/gdamore/tcell/v2"
)

// fakeTty is a tcell.Tty whose reads hand over the chunks given, one per
// read, then block until closed.
type fakeTty struct {
	tcell.Tty
	chunks []string
	closed chan struct{}
}

func (f *fakeTty) Read(p []byte) (int, error) {
	if len(f.chunks) == 0 {
		<-f.closed
		return 0, io.EOF
	}
	n := copy(p, f.chunks[0])
	f.chunks = f.chunks[1:]
	return n, nil
}

// TestEscKeyTty: an ESC and `]` in one read are handed to tcell as two
// reads, the `]` escKeyGap after the ESC, however the bytes came; what
// comes without an ESC before `]` is handed over as it came.
func TestEscKeyTty(t *testing.T) {
	for _, c := range []struct {
		reads []string
		want  []string // the reads tcell gets
		waits int      // of them after escKeyGap
	}{
		{[]string{"\x1b]q"}, []string{"\x1b", "]q"}, 1},
		{[]string{"a\x1b]\x1b]b"}, []string{"a\x1b", "]\x1b", "]b"}, 2},
		{[]string{"\x1b", "]q"}, []string{"\x1b", "]q"}, 1},
		{[]string{"]q", "\x1b[A"}, []string{"]q", "\x1b[A"}, 0},
	} {
		waited := 0
		tty := &escKeyTty{Tty: &fakeTty{chunks: c.reads, closed: make(chan struct{})}, sleep: func(d time.Duration) {
			if d >= 60*time.Millisecond { // tcell's escape timer
				waited++
			}
		}}
		var got []string
		buf := make([]byte, 64)
		for range c.want {
			n, err := tty.Read(buf)
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, string(buf[:n]))
		}
		if strings.Join(got, "|") != strings.Join(c.want, "|") || waited != c.waits {
			t.Errorf("reads %q: tcell got %q (%d after the gap), want %q (%d)", c.reads, got, waited, c.want, c.waits)
		}
	}
}
