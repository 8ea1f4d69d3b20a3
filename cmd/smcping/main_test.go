package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestMain lets the tests run this binary as smcping itself.
func TestMain(m *testing.M) {
	if os.Getenv("SMCPING_TEST_MAIN") == "1" {
		os.Args = append([]string{"smcping"}, os.Args[1:]...)
		main()
		return
	}
	os.Exit(m.Run())
}

func smcping(args ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "SMCPING_TEST_MAIN=1")
	return cmd
}

func exitCode(t *testing.T, err error) int {
	t.Helper()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		return ee.ExitCode()
	}
	t.Fatal(err)
	return -1
}

func TestExitCodes(t *testing.T) {
	tests := []struct {
		args []string
		code int
		say  string
	}{
		{args: []string{"-h"}, code: 0, say: "Usage: smcping -s "},
		{args: []string{"--version"}, code: 0, say: "smcping (smcscope) "},
		{args: []string{"host", "--bogus"}, code: 2, say: "smcping: unknown flag --bogus; try 'smcping --help'\n"},
		{args: []string{"host", "-n"}, code: 2, say: "smcping: flag -n needs a value; try 'smcping --help'\n"},
		// The value attached, as getopt takes it: -n1 is -n 1.
		{args: []string{"127.0.0.1:1", "--proto", "tcp", "-n1"}, code: 1, say: "connection refused"},
		{args: []string{"-m", "1", "host"}, code: 2, say: "smcping: -m \"1\": size 1 outside [4, 67108864]\n"},
		{args: []string{"-m", "-1", "host"}, code: 2, say: "smcping: -m \"-1\": \"-1\" is not a size"},
		{args: []string{"-n", "abc", "host"}, code: 2, say: "smcping: -n \"abc\": not a whole number\n"},
		// Rejected before connecting (port 1 would refuse the connection).
		{args: []string{"127.0.0.1:1", "--proto", "tcp", "--log", "/nonexistent/dir/x.csv"}, code: 2,
			say: "smcping: --log \"/nonexistent/dir/x.csv\": open /nonexistent/dir/x.csv: no such file or directory\n"},
		{args: []string{}, code: 2, say: "exactly one HOST"},
		{args: []string{"127.0.0.1:1", "--proto", "tcp", "-n", "1"}, code: 1, say: "connection refused"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			out, err := smcping(tt.args...).CombinedOutput()
			if got := exitCode(t, err); got != tt.code || !strings.Contains(string(out), tt.say) {
				t.Errorf("exit %d, want %d; output %q should contain %q", got, tt.code, out, tt.say)
			}
			if tt.code == 2 && strings.Count(string(out), "\n") != 1 {
				t.Errorf("a usage error is one line, got %q", out)
			}
			if tt.code == 0 {
				// Help and version asked for go to stdout.
				if stdout, err := smcping(tt.args...).Output(); err != nil || !strings.Contains(string(stdout), tt.say) {
					t.Errorf("stdout %q (%v) lacks %q", stdout, err, tt.say)
				}
			}
		})
	}
}

// TestServerAndClient runs smcping -s --tcp and a client against it as
// two processes, as the lab does (over loopback TCP: this kernel may lack SMC).
func TestServerAndClient(t *testing.T) {
	srv := smcping("-s", "--tcp", "--listen", "127.0.0.1", "-p", "0", "--tcp-port", "0")
	stderr, err := srv.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		srv.Process.Signal(os.Interrupt)
		if code := exitCode(t, srv.Wait()); code != 0 {
			t.Errorf("server exit %d after SIGINT, want 0", code)
		}
	}()
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if _, a, ok := strings.Cut(sc.Text(), "msg=listening proto=\"tcp (not SMC-capable)\" addr="); ok {
				addr <- strings.Fields(a)[0]
			}
		}
	}()
	var a string
	select {
	case a = <-addr:
	case <-time.After(10 * time.Second):
		t.Fatal("server did not say where it listens")
	}
	a = strings.Replace(a, "0.0.0.0", "127.0.0.1", 1)
	out, err := smcping(a, "--proto", "tcp", "-n", "20", "-m", "64,512", "--warmup", "2").CombinedOutput()
	if code := exitCode(t, err); code != 0 || !strings.Contains(string(out), "RTT/2 (one-way estimate") {
		t.Errorf("client exit %d:\n%s", code, out)
	}
	out, err = smcping(a, "--proto", "tcp", "--check").CombinedOutput()
	if code := exitCode(t, err); code != 0 || !strings.HasPrefix(string(out), "OK TCP") {
		t.Errorf("--check exit %d: %s", code, out)
	}
	// --check -o json is one JSON object (it printed the text line).
	out, err = smcping(a, "--proto", "tcp", "--check", "-o", "json").Output()
	var v struct {
		Verdict string `json:"verdict"`
		Conn    struct {
			Mode string `json:"mode"`
		} `json:"connection"`
		Pings int `json:"pings"`
	}
	if code := exitCode(t, err); code != 0 || json.Unmarshal(out, &v) != nil || v.Verdict != "OK" || v.Conn.Mode != "TCP" || v.Pings != 10 {
		t.Errorf("--check -o json exit %d: %s", code, out)
	}
}
