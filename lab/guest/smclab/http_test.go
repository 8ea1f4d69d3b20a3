package main

import (
	"bytes"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"
)

// TestHTTPServeGet: http-serve -once answers http-get's GET /smc with
// httpBody and ends (over TCP here; the lab runs both over AF_SMC).
func TestHTTPServeGet(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	var srvOut bytes.Buffer
	done := make(chan error, 1)
	go func() {
		done <- run([]string{"http-serve", "-tcp", "-once", "-wait", "30s", "-port", fmt.Sprint(port)}, &srvOut)
	}()
	var out bytes.Buffer
	deadline := time.Now().Add(20 * time.Second)
	for {
		out.Reset()
		err = run([]string{"http-get", "-tcp", fmt.Sprintf("127.0.0.1:%d", port), "/smc"}, &out)
		if err == nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond) // the server is binding: retried until the deadline
	}
	if err != nil {
		t.Fatalf("http-get: %v", err)
	}
	if want := fmt.Sprintf("http-get: 200 OK %q", httpBody); strings.TrimSpace(out.String()) != want {
		t.Errorf("http-get wrote %q, want %q", out.String(), want)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("http-serve: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("http-serve -once did not end after its response")
	}
}
