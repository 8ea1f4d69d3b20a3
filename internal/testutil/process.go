package testutil

import (
	"bytes"
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// RunNoTTY runs bin the way a service or `setsid CMD </dev/null` does: in a
// new session, so there is no controlling terminal, with stdin from
// /dev/null. It returns what the program wrote and its exit status.
func RunNoTTY(t testing.TB, bin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	var o, e bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = nil, &o, &e // nil stdin is /dev/null
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	return o.String(), e.String(), cmd.ProcessState.ExitCode()
}

// Prometheus starts the Debian prometheus server (the test is skipped
// without it) on a free loopback port with config as its prometheus.yml in
// dir, where the rule files config names must already be, and stops it when
// the test ends. It returns the server's address and its log; the caller
// waits for what it needs (targets scraped, rules evaluated) by querying.
// args are more of the server's flags (--web.config.file).
func Prometheus(t testing.TB, dir, config string, args ...string) (addr string, log *bytes.Buffer) {
	t.Helper()
	bin := NeedTool(t, "prometheus")
	cfg := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(cfg, []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr = ln.Addr().String()
	ln.Close()
	ctx, cancel := context.WithCancel(context.Background())
	log = &bytes.Buffer{}
	cmd := exec.CommandContext(ctx, bin, append([]string{"--config.file=" + cfg, "--web.listen-address=" + addr,
		"--storage.tsdb.path=" + filepath.Join(dir, "data")}, args...)...)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); _ = cmd.Wait() })
	return addr, log
}

// StoppedBySIGTERM waits up to 20 s for done, the Wait of program who,
// sent SIGTERM while it waited on its input, and checks that it exited
// with status 143 and said so in one line of stderr.
func StoppedBySIGTERM(t testing.TB, done <-chan error, who string, stderr *bytes.Buffer) {
	t.Helper()
	var err error
	select {
	case err = <-done:
	case <-time.After(20 * time.Second):
		t.Fatalf("SIGTERM did not end %s waiting on the FIFO's writer", who)
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 143 {
		t.Errorf("%s: exit %v, want status 143", who, err)
	}
	if got := strings.TrimSpace(stderr.String()); !strings.Contains(got, "stopped by SIGTERM before the capture's end") || strings.Contains(got, "\n") {
		t.Errorf("%s: stderr %q, want one line saying it stopped", who, got)
	}
}
