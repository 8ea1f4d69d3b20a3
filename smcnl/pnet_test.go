package smcnl

import (
	"errors"
	"io"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/mdlayher/genetlink"
	"github.com/mdlayher/genetlink/genltest"
	"github.com/mdlayher/netlink"
	"github.com/mdlayher/netlink/nltest"
	"golang.org/x/sys/unix"
)

var testPNETFamily = genetlink.Family{ID: 0x1e, Version: pnetFamilyVersion, Name: pnetFamilyName}

func testPNETConn(t *testing.T, fn genltest.Func) *PNETConn {
	t.Helper()
	c, err := NewPNETConn(genltest.Dial(genltest.ServeFamily(testPNETFamily, fn)))
	if err != nil {
		t.Fatalf("NewPNETConn: %v", err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// TestAddPNETID checks the request the kernel's smc_pnet_add parses: the
// PNET ID upper-cased, NUL-terminated names, port 1 by default.
func TestAddPNETID(t *testing.T) {
	for _, tt := range []struct {
		in   PNETEntry
		want []netlink.Attribute
	}{
		{PNETEntry{PNETID: "labnet", EthName: "eth0", IBName: "rxe0"},
			[]netlink.Attribute{str(1, "LABNET"), str(2, "eth0"), str(3, "rxe0"), u8(4, 1)}},
		{PNETEntry{PNETID: "LabSelf", EthName: "lo"}, []netlink.Attribute{str(1, "LABSELF"), str(2, "lo")}},
		{PNETEntry{PNETID: "X1", IBName: "rxe1", IBPort: 2}, []netlink.Attribute{str(1, "X1"), str(3, "rxe1"), u8(4, 2)}},
	} {
		var got []netlink.Attribute
		c := testPNETConn(t, genltest.CheckRequest(testPNETFamily.ID, pnetCmdAdd, netlink.Request|netlink.Acknowledge,
			func(g genetlink.Message, _ netlink.Message) ([]genetlink.Message, error) {
				var err error
				got, err = netlink.UnmarshalAttributes(g.Data)
				if err != nil {
					return nil, err
				}
				// An acknowledged request gets no reply message (genltest's io.EOF).
				return nil, io.EOF
			}))
		if err := c.AddPNETID(tt.in); err != nil {
			t.Fatalf("AddPNETID(%+v): %v", tt.in, err)
		}
		if d := cmp.Diff(tt.want, got, cmpopts.IgnoreFields(netlink.Attribute{}, "Length")); d != "" {
			t.Errorf("AddPNETID(%+v) attributes (-want +got):\n%s", tt.in, d)
		}
	}
}

func TestAddPNETIDInvalid(t *testing.T) {
	c := testPNETConn(t, func(genetlink.Message, netlink.Message) ([]genetlink.Message, error) {
		t.Error("an invalid entry reached the kernel")
		return nil, nil
	})
	for _, e := range []PNETEntry{{PNETID: "", EthName: "eth0"}, {PNETID: "A-B", EthName: "eth0"},
		{PNETID: "ABCDEFGHIJKLMNOPQ", EthName: "eth0"}, {PNETID: "OK"}} {
		if err := c.AddPNETID(e); !errors.Is(err, os.ErrInvalid) {
			t.Errorf("AddPNETID(%+v) = %v, want os.ErrInvalid", e, err)
		}
	}
}

// TestPNETErrors maps the kernel's errno values: EEXIST for a device that
// already has a PNET ID, EPERM without CAP_NET_ADMIN.
func TestPNETErrors(t *testing.T) {
	for _, tt := range []struct {
		errno unix.Errno
		want  error
	}{{unix.EEXIST, os.ErrExist}, {unix.EPERM, os.ErrPermission}, {unix.ENODEV, os.ErrNotExist}} {
		c := testPNETConn(t, func(genetlink.Message, netlink.Message) ([]genetlink.Message, error) {
			return nil, genltest.Error(int(tt.errno))
		})
		if err := c.AddPNETID(PNETEntry{PNETID: "N", EthName: "eth0"}); !errors.Is(err, tt.want) {
			t.Errorf("errno %v: %v, want %v", tt.errno, err, tt.want)
		}
	}
}

// TestPNETIDs parses a dump as smc_pnet_dumpinfo writes it: one message
// per device, "n/a" for the name an entry does not have.
func TestPNETIDs(t *testing.T) {
	c := testPNETConn(t, genltest.CheckRequest(testPNETFamily.ID, pnetCmdGet, netlink.Request|netlink.Dump,
		func(genetlink.Message, netlink.Message) ([]genetlink.Message, error) {
			msg := func(attrs ...netlink.Attribute) genetlink.Message {
				return genetlink.Message{Header: genetlink.Header{Command: pnetCmdGet, Version: 1},
					Data: nltest.MustMarshalAttributes(attrs)}
			}
			return []genetlink.Message{
				msg(str(1, "LABNET"), str(2, "eth0"), str(3, "n/a"), u8(4, 255)),
				msg(str(1, "LABNET"), str(2, "n/a"), str(3, "rxe0"), u8(4, 1)),
			}, nil
		}))
	got, err := c.PNETIDs()
	if err != nil {
		t.Fatal(err)
	}
	want := []PNETEntry{{PNETID: "LABNET", EthName: "eth0"}, {PNETID: "LABNET", IBName: "rxe0", IBPort: 1}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("PNETIDs (-want +got):\n%s", d)
	}
}

func TestRemoveAndFlushPNETID(t *testing.T) {
	var cmds []uint8
	var names []string
	c := testPNETConn(t, func(g genetlink.Message, _ netlink.Message) ([]genetlink.Message, error) {
		cmds = append(cmds, g.Header.Command)
		ad, err := netlink.NewAttributeDecoder(g.Data)
		if err != nil {
			return nil, err
		}
		for ad.Next() {
			names = append(names, ad.String())
		}
		if err := ad.Err(); err != nil {
			return nil, err
		}
		return nil, io.EOF
	})
	if err := c.RemovePNETID("labnet"); err != nil {
		t.Fatal(err)
	}
	if err := c.FlushPNETIDs(); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]uint8{pnetCmdDel, pnetCmdFlush}, cmds); d != "" {
		t.Errorf("commands (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"LABNET"}, names); d != "" {
		t.Errorf("names (-want +got):\n%s", d)
	}
}
