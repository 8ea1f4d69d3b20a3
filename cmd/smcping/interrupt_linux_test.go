//go:build linux

package main

import (
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestInterruptStalledServer: Ctrl-C stops a client whose -P 3
// connections wait for echoes that never come, pinned to one CPU when
// taskset is there (Go then starts with one P, the case smcping adds Ps
// to). It says it was interrupted and exits 1.
func TestInterruptStalledServer(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	pinged := make(chan struct{}, 3)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				b := make([]byte, 64)
				if _, err := io.ReadFull(c, b); err == nil {
					pinged <- struct{}{} // its client now waits for the echo
				}
				io.Copy(io.Discard, c)
			}()
		}
	}()
	cmd := smcping(ln.Addr().String(), "--proto", "tcp", "-P", "3", "-n", "10")
	if ts, err := exec.LookPath("taskset"); err == nil {
		cmd.Args = append([]string{ts, "-c", firstCPU(t)}, cmd.Args...)
		cmd.Path = ts
	}
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	for range 3 {
		select {
		case <-pinged:
		case err := <-exited:
			t.Fatalf("client exited before its pings: %v\n%s", err, out.String())
		}
	}
	cmd.Process.Signal(os.Interrupt)
	select {
	case err := <-exited:
		if code := exitCode(t, err); code != 1 || !strings.Contains(out.String(), "smcping: interrupted") {
			t.Errorf("exit %d after SIGINT, want 1 and \"interrupted\":\n%s", code, out.String())
		}
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
		t.Fatal("client did not stop on SIGINT")
	}
}

// firstCPU is a CPU this process may run on.
func firstCPU(t *testing.T) string {
	t.Helper()
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		t.Skip(err)
	}
	for i := range 1024 {
		if set.IsSet(i) {
			return strconv.Itoa(i)
		}
	}
	t.Skip("no CPU in the affinity mask")
	return ""
}
