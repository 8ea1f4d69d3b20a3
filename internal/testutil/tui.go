package testutil

import (
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/gdamore/tcell/v2"
	"github.com/rivo/tview"
)

// Screen drives a tview application on tcell's simulation screen: keys
// go in, and each call waits for the draw that follows (tview draws after
// every event), never a sleep.
type Screen struct {
	t    testing.TB
	App  *tview.Application
	Sim  tcell.SimulationScreen
	drew chan struct{}
	// draws counts the draws; keyed receives the count when the
	// application's input capture has seen a key, so that Key waits for
	// a draw after its key was handled, not for one an update queued
	// meanwhile made (tview runs updates and keys in no fixed order).
	draws atomic.Int64
	keyed chan int64
}

// NewScreen puts app on a simulation screen; Start runs it.
func NewScreen(t testing.TB, app *tview.Application) *Screen {
	t.Helper()
	sim := tcell.NewSimulationScreen("UTF-8")
	if err := sim.Init(); err != nil {
		t.Fatal(err)
	}
	s := &Screen{t: t, App: app, Sim: sim, drew: make(chan struct{}, 64), keyed: make(chan int64, 64)}
	app.SetScreen(sim)
	app.SetAfterDrawFunc(func(tcell.Screen) {
		s.draws.Add(1)
		select {
		case s.drew <- struct{}{}:
		default:
		}
	})
	capture := app.GetInputCapture()
	app.SetInputCapture(func(ev *tcell.EventKey) *tcell.EventKey {
		n := s.draws.Load()
		if capture != nil {
			ev = capture(ev)
		}
		select {
		case s.keyed <- n:
		default:
		}
		return ev
	})
	return s
}

// Start runs the application (call Run on it in run) and sizes the screen
// once it is up: tview initialises the screen in Run, which resets it.
func (s *Screen) Start(w, h int, run func() error) {
	s.t.Helper()
	done := make(chan error, 1)
	go func() { done <- run() }()
	s.t.Cleanup(func() {
		select {
		case <-done: // stopped by the test (q)
			return
		default:
		}
		// Stopped from the event loop: tview's Stop from another goroutine
		// races with Run still setting the screen up or drawing.
		// QueueUpdate waits until the loop has run the update, which never
		// happens when Run is returning meanwhile (a test that stopped the
		// application itself): so it waits in a goroutine of its own, and
		// the test waits for Run.
		go s.App.QueueUpdate(s.App.Stop)
		<-done
	})
	s.wait()
	s.Sim.SetSize(w, h)
	s.Sync()
}

func (s *Screen) wait() {
	s.t.Helper()
	select {
	case <-s.drew:
	case <-time.After(10 * time.Second):
		s.t.Fatal("no draw within 10 s")
	}
}

// Sync queues a no-op update, waits for its draw and returns the screen.
func (s *Screen) Sync() string {
	s.t.Helper()
	for len(s.drew) > 0 {
		<-s.drew
	}
	s.App.QueueUpdateDraw(func() {})
	s.wait()
	return s.Text()
}

// Key injects one key and waits until it was handled and drawn.
func (s *Screen) Key(k tcell.Key, r rune) {
	s.t.Helper()
	for len(s.keyed) > 0 {
		<-s.keyed
	}
	s.Sim.InjectKey(k, r, tcell.ModNone)
	var before int64
	select {
	case before = <-s.keyed:
	case <-time.After(10 * time.Second):
		s.t.Fatal("key not handled within 10 s")
	}
	deadline := time.After(10 * time.Second)
	for s.draws.Load() <= before {
		select {
		case <-s.drew:
		case <-deadline:
			s.t.Fatal("no draw within 10 s of a key")
		}
	}
}

// Type injects the runes of text.
func (s *Screen) Type(text string) {
	s.t.Helper()
	for _, r := range text {
		s.Key(tcell.KeyRune, r)
	}
}

// untilLimit bounds how long a screen is waited for: only a failure takes
// it. A search over every frame under the race detector, on a machine busy
// with other work, takes tens of seconds.
const untilLimit = 60 * time.Second

// Until syncs until the screen contains want (untilLimit at most).
func (s *Screen) Until(want string) string {
	s.t.Helper()
	deadline := time.Now().Add(untilLimit)
	for {
		scr := s.Sync()
		if strings.Contains(scr, want) {
			return scr
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("screen never showed %q:\n%s", want, scr)
		}
		time.Sleep(20 * time.Millisecond) // polling the screen, not asserting time
	}
}

// Text is the simulation screen's content, one line per row, read on the
// application's goroutine, which is the one that draws.
func (s *Screen) Text() string {
	text := make(chan string, 1)
	s.App.QueueUpdate(func() { text <- ScreenText(s.Sim) })
	return <-text
}

// ScreenText returns a simulation screen's content, one line per row.
func ScreenText(sim tcell.SimulationScreen) string {
	cells, w, h := sim.GetContents()
	var b strings.Builder
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			if c := cells[y*w+x]; len(c.Runes) > 0 {
				b.WriteRune(c.Runes[0])
			} else {
				b.WriteByte(' ')
			}
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// Tmux runs a real program in a private tmux server for the test.
type Tmux struct {
	t    testing.TB
	tmux string
	sock string
	// Config is the program's XDG_CONFIG_HOME, a directory of the test:
	// what it keeps there (smcdump -I's filter history) stays out of the
	// user's, and a second program given it (NewTmuxConfig) finds it.
	Config string
}

// NewTmux starts args in a w x h tmux pane (skips without tmux).
func NewTmux(t testing.TB, w, h int, args ...string) *Tmux {
	t.Helper()
	return NewTmuxIn(t, "", w, h, args...)
}

// NewTmuxIn is NewTmux with the program started in directory dir ("" for
// the test's own), for tests that pass short relative paths.
func NewTmuxIn(t testing.TB, dir string, w, h int, args ...string) *Tmux {
	t.Helper()
	return newTmux(t, dir, filepath.Join(t.TempDir(), "config"), w, h, args...)
}

// NewTmuxConfig is NewTmux with XDG_CONFIG_HOME config: that of a program
// run before (Tmux.Config), to see what it kept.
func NewTmuxConfig(t testing.TB, config string, w, h int, args ...string) *Tmux {
	t.Helper()
	return newTmux(t, "", config, w, h, args...)
}

func newTmux(t testing.TB, dir, config string, w, h int, args ...string) *Tmux {
	t.Helper()
	x := &Tmux{t: t, tmux: NeedTool(t, "tmux"), sock: filepath.Join(t.TempDir(), "tmux.sock"), Config: config}
	opts := []string{"new-session", "-d", "-x", strconv.Itoa(w), "-y", strconv.Itoa(h), "-e", "XDG_CONFIG_HOME=" + config}
	if dir != "" {
		opts = append(opts, "-c", dir)
	}
	x.Run(append(opts, args...)...)
	t.Cleanup(func() { _ = exec.Command(x.tmux, "-S", x.sock, "kill-server").Run() })
	return x
}

// Run runs a tmux command on the test's server.
func (x *Tmux) Run(args ...string) string {
	x.t.Helper()
	out, err := exec.Command(x.tmux, append([]string{"-S", x.sock}, args...)...).CombinedOutput()
	if err != nil {
		x.t.Fatalf("tmux %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// Keys sends keys to the pane (tmux send-keys names: Enter, Escape, ...).
func (x *Tmux) Keys(keys ...string) { x.Run(append([]string{"send-keys"}, keys...)...) }

// WaitFor polls the pane until it shows want (20 s at most).
func (x *Tmux) WaitFor(want string) string {
	x.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		scr := x.Run("capture-pane", "-p")
		if strings.Contains(scr, want) {
			return scr
		}
		if time.Now().After(deadline) {
			x.t.Fatalf("pane never showed %q:\n%s", want, scr)
		}
		time.Sleep(100 * time.Millisecond) // polling the pane
	}
}

// Display expands a tmux format for the pane: #{pane_pid},
// #{alternate_on}, #{mouse_any_flag} ...
func (x *Tmux) Display(format string) string {
	x.t.Helper()
	return strings.TrimSpace(x.Run("display-message", "-p", format))
}

// WaitDisplay polls the format until it expands to want (20 s at most).
func (x *Tmux) WaitDisplay(format, want string) {
	x.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		got := x.Display(format)
		if got == want {
			return
		}
		if time.Now().After(deadline) {
			x.t.Fatalf("tmux %s is %q, never %q", format, got, want)
		}
		time.Sleep(100 * time.Millisecond) // polling the pane
	}
}

// ExitStatus waits until the pane's program has been reaped and returns
// how it ended: its exit status, or "signal N" when a signal killed it.
// tmux marks a pane dead when its terminal closes, which may come before
// the exit status is known (#{pane_dead_status} then reads ""), and tmux
// 3.3a sometimes misses the SIGCHLD of a program that exits at once: the
// program stays a zombie, its status never read (1 run in 8 of smcdump
// -I after SIGHUP). Sending the server SIGCHLD again makes it reap.
func (x *Tmux) ExitStatus() string {
	x.t.Helper()
	server, _ := strconv.Atoi(strings.TrimSpace(x.Display("#{pid}")))
	deadline := time.Now().Add(20 * time.Second)
	for {
		if server > 0 {
			_ = syscall.Kill(server, syscall.SIGCHLD)
		}
		got := x.Display("#{pane_dead_status}|#{pane_dead_signal}")
		status, sig, _ := strings.Cut(got, "|")
		switch {
		case status != "":
			return status
		case sig != "":
			return "signal " + sig
		case time.Now().After(deadline):
			x.t.Fatalf("tmux: the pane's program never reaped (%q)", got)
		}
		time.Sleep(100 * time.Millisecond) // polling the pane
	}
}

// GoBuild builds a package of the module into the test's temp dir.
func GoBuild(t testing.TB, pkg, name string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), name)
	if out, err := exec.Command("go", "build", "-o", bin, pkg).CombinedOutput(); err != nil {
		t.Fatalf("build %s: %v\n%s", pkg, err, out)
	}
	return bin
}
