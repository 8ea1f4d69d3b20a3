//go:build linux

package smcnl

import (
	"errors"
	"os"
	"testing"
)

// These tests talk to the running kernel. They skip, with the reason, where
// SMC is missing (this development host) and run in the lab guests.

func TestLiveSockets(t *testing.T) {
	ss, err := Sockets()
	if errors.Is(err, ErrNotSupported) {
		t.Skipf("needs CONFIG_SMC_DIAG: %v", err)
	}
	if err != nil {
		t.Fatalf("Sockets: %v", err)
	}
	for _, s := range ss {
		if s.Mode == ModeSMCR && s.State == StateActive && s.LGR == nil {
			t.Errorf("active SMC-R socket without LGRINFO: %+v", s)
		}
	}
}

func TestLiveGenl(t *testing.T) {
	c, err := Dial()
	if errors.Is(err, ErrNotSupported) {
		t.Skipf("needs CONFIG_SMC with SMC_GEN_NETLINK (5.11+): %v", err)
	}
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	defer c.Close()
	si, err := c.SysInfo()
	if err != nil {
		t.Fatalf("SysInfo: %v", err)
	}
	if si.Version < 1 {
		t.Errorf("SysInfo.Version = %d", si.Version)
	}
	if _, err := c.LinkGroupsR(); err != nil {
		t.Errorf("LinkGroupsR: %v", err)
	}
	if _, err := c.Stats(); err != nil && !errors.Is(err, ErrNotSupported) {
		t.Errorf("Stats: %v", err)
	}
	if _, err := c.UEIDs(); err != nil && !errors.Is(err, ErrNotSupported) {
		t.Errorf("UEIDs: %v", err)
	}
}

func TestLiveAddUEID(t *testing.T) {
	if os.Getenv("SMCNL_LIVE_UEID") == "" {
		t.Skip("changes the kernel's UEID table; set SMCNL_LIVE_UEID=1 in a lab guest to run")
	}
	c, err := Dial()
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	defer c.Close()
	const name = "SMCNL-TEST-UEID"
	if err := c.AddUEID(name); err != nil {
		t.Fatalf("AddUEID: %v", err)
	}
	defer func() { _ = c.RemoveUEID(name) }()
	us, err := c.UEIDs()
	if err != nil {
		t.Fatalf("UEIDs: %v", err)
	}
	for _, u := range us {
		if u == name {
			return
		}
	}
	t.Fatalf("UEIDs() = %q, lacks %q", us, name)
}
