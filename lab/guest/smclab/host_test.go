package main

import (
	"bytes"
	"encoding/json"
	"net/netip"
	"os"
	"path/filepath"
	"testing"

	"github.com/smcscope/smcscope/monitor"
)

// TestRecordHost: the host file a recording carries is monitor's
// HostFile, in its HostInfo form: this machine's name and its
// non-loopback addresses, each one an IP address.
func TestRecordHost(t *testing.T) {
	dir := t.TempDir()
	var out bytes.Buffer
	if err := recordHost(dir, &out); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, monitor.HostFile))
	if err != nil {
		t.Fatal(err)
	}
	var h monitor.HostInfo
	if err := json.Unmarshal(b, &h); err != nil {
		t.Fatal(err)
	}
	if name, _ := os.Hostname(); h.Name != name {
		t.Errorf("name %q, want %q", h.Name, name)
	}
	for _, a := range h.Addresses {
		if ip, err := netip.ParseAddr(a); err != nil || ip.IsLoopback() {
			t.Errorf("address %q", a)
		}
	}
}
