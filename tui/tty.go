package tui

import (
	"bytes"
	"fmt"
	"time"

	"github.com/gdamore/tcell/v2"
)

// UseTerminal puts the shell on the terminal (/dev/tty), read through
// escKeyTty; call it before Run (tests put a simulation screen there
// instead, and tview makes a plain one when nothing is set).
func (s *Shell) UseTerminal() error {
	tty, err := tcell.NewDevTty()
	if err != nil {
		return fmt.Errorf("%w: %v", ErrNoTerminal, err)
	}
	scr, err := tcell.NewTerminfoScreenFromTty(&escKeyTty{Tty: tty, sleep: time.Sleep})
	if err != nil {
		return fmt.Errorf("%w: %v", ErrNoTerminal, err)
	}
	s.SetScreen(scr) // initialises it
	// tview turns the mouse on only on a screen it makes itself.
	scr.EnableMouse()
	return nil
}

// escKeyTty hands tcell the Esc key pressed right before `]` (both in one
// read, as a slow link or a fast typist bring them) as a key of its own.
// tcell reads ESC `]` as the start of an operating system command and
// swallows every byte after it until a string terminator, q and Ctrl-C
// included (tcell v2.13's input.go, inpStateOsc), leaving the dashboard
// deaf; no terminal sends us one (we never query the clipboard). So the
// read ends after the ESC, and the `]` comes once tcell's escape timer
// (50 ms) has made the ESC a key.
type escKeyTty struct {
	tcell.Tty
	rest   []byte // bytes read after an ESC `]`'s ESC, handed over next
	escEnd bool   // the last read ended with an ESC
	sleep  func(time.Duration)
}

// escKeyGap is how long the `]` after an ESC waits: past tcell's escape
// timer (it fires at 60 ms and takes an ESC older than 50 ms for the key).
const escKeyGap = 80 * time.Millisecond

// Read implements tcell.Tty.
func (t *escKeyTty) Read(p []byte) (int, error) {
	var n int
	var err error
	if len(t.rest) > 0 {
		t.sleep(escKeyGap)
		n = copy(p, t.rest)
		t.rest = t.rest[n:]
	} else {
		n, err = t.Tty.Read(p)
		if n > 0 && t.escEnd && p[0] == ']' {
			t.sleep(escKeyGap)
		}
	}
	if i := bytes.Index(p[:n], []byte("\x1b]")); i >= 0 {
		t.rest = append(bytes.Clone(p[i+1:n]), t.rest...)
		n = i + 1
	}
	t.escEnd = n > 0 && p[n-1] == '\x1b'
	return n, err
}
