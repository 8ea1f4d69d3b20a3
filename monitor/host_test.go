package monitor

import (
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// copyRecording copies a recording of smcnl/testdata into a temporary
// directory, to add files to.
func copyRecording(t *testing.T, name string) string {
	t.Helper()
	src := filepath.Join("../smcnl/testdata", name)
	dir := t.TempDir()
	es, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range es {
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestRecordedHost: a recording's host.json names the host and its
// addresses in a replay as the live exporter would; Options.HostName and
// Addrs (smctop --host-name, --host-address) replace them; a broken
// host.json is an error of the replay naming the file.
func TestRecordedHost(t *testing.T) {
	dir := copyRecording(t, "decline-nordma-server-done")
	host := func(o Options) HostInfo {
		k, err := ReplayKernel(dir)
		if err != nil {
			t.Fatal(err)
		}
		o.Kernel = k
		m := New(o)
		defer m.Close()
		return m.Refresh().Host
	}
	if h := host(Options{}); len(h.Addresses) != 0 {
		t.Errorf("without host.json: %+v (the recording's sockets listen on 0.0.0.0)", h)
	}
	if err := os.WriteFile(filepath.Join(dir, HostFile), []byte(`{"name":"lab-server","addresses":["10.10.0.1","fe80::1","127.0.0.1"]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	h := host(Options{})
	if h.Name != "lab-server" || !slices.Equal(h.Addresses, []string{"10.10.0.1", "fe80::1"}) {
		t.Errorf("with host.json: %+v", h)
	}
	h = host(Options{HostName: "other", Addrs: func() []netip.Addr { return []netip.Addr{netip.MustParseAddr("192.0.2.1")} }})
	if h.Name != "other" || !slices.Equal(h.Addresses, []string{"192.0.2.1"}) {
		t.Errorf("with flags: %+v", h)
	}
	if err := os.WriteFile(filepath.Join(dir, HostFile), []byte(`{"addresses":["10.10.0.x"]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReplayKernel(dir); err == nil || !strings.Contains(err.Error(), HostFile) {
		t.Errorf("a bad host.json: %v", err)
	}
}
