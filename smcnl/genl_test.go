package smcnl

import (
	"bytes"
	"errors"
	"io"
	"os"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mdlayher/genetlink"
	"github.com/mdlayher/genetlink/genltest"
	"github.com/mdlayher/netlink"
	"github.com/mdlayher/netlink/nltest"
	"golang.org/x/sys/unix"
)

// testFamily is what nlctrl would answer; the ID is arbitrary, as on a
// real kernel (it depends on module load order).
var testFamily = genetlink.Family{ID: 0x1d, Version: familyVersion, Name: familyName}

// testConn returns a Conn whose kernel is fn, behind a family lookup.
func testConn(t *testing.T, fn genltest.Func) *Conn {
	t.Helper()
	c, err := NewConn(genltest.Dial(genltest.ServeFamily(testFamily, fn)))
	if err != nil {
		t.Fatalf("NewConn: %v", err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// reply wraps attrs as one reply message of cmd.
func reply(cmd uint8, attrs []netlink.Attribute) genetlink.Message {
	return genetlink.Message{
		Header: genetlink.Header{Command: cmd, Version: familyVersion},
		Data:   nltest.MustMarshalAttributes(attrs),
	}
}

// nest builds a top-level nested attribute the way the kernel does
// (nla_nest_start_noflag: no NLA_F_NESTED bit).
func nest(typ uint16, attrs ...netlink.Attribute) netlink.Attribute {
	return netlink.Attribute{Type: typ, Data: nltest.MustMarshalAttributes(attrs)}
}

func u8(typ uint16, v uint8) netlink.Attribute { return netlink.Attribute{Type: typ, Data: []byte{v}} }
func u16(typ uint16, v uint16) netlink.Attribute {
	return netlink.Attribute{Type: typ, Data: nativeBytes(uint64(v), 2)}
}
func u32(typ uint16, v uint32) netlink.Attribute {
	return netlink.Attribute{Type: typ, Data: nativeBytes(uint64(v), 4)}
}
func u64(typ uint16, v uint64) netlink.Attribute {
	return netlink.Attribute{Type: typ, Data: nativeBytes(v, 8)}
}

// str is nla_put_string: the bytes plus a NUL.
func str(typ uint16, s string) netlink.Attribute {
	return netlink.Attribute{Type: typ, Data: append([]byte(s), 0)}
}

// pad is the zero-length attribute nla_put_u64_64bit inserts for alignment.
func pad(typ uint16) netlink.Attribute { return netlink.Attribute{Type: typ} }

func nativeBytes(v uint64, n int) []byte {
	b := make([]byte, 8)
	ne := nativeOrder()
	ne.PutUint64(b, v)
	if isLittle() {
		return b[:n]
	}
	return b[8-n:]
}

// eid32 is how the kernel keeps an EID: 32 blank-padded bytes.
func eid32(s string) string { return s + string(bytes.Repeat([]byte{' '}, maxEIDLen-len(s))) }

// errnoConn answers every SMC_GEN_NETLINK request with an NLMSG_ERROR of
// errno, as the kernel does. genltest.Error cannot be used for dumps: it
// echoes the request's flags, and NLM_F_DUMP includes the bit that means
// "extended ack TLVs follow" in an error message.
func errnoConn(t *testing.T, errno int) *Conn {
	t.Helper()
	nc := nltest.Dial(func(reqs []netlink.Message) ([]netlink.Message, error) {
		req := reqs[0]
		if req.Header.Type == unix.GENL_ID_CTRL {
			b, err := (&genetlink.Message{
				Header: genetlink.Header{Command: unix.CTRL_CMD_NEWFAMILY, Version: 1},
				Data: nltest.MustMarshalAttributes([]netlink.Attribute{
					u16(unix.CTRL_ATTR_FAMILY_ID, testFamily.ID),
					str(unix.CTRL_ATTR_FAMILY_NAME, testFamily.Name),
					u32(unix.CTRL_ATTR_VERSION, uint32(testFamily.Version)),
				}),
			}).MarshalBinary()
			if err != nil {
				return nil, err
			}
			return []netlink.Message{{Header: netlink.Header{Sequence: req.Header.Sequence, PID: req.Header.PID}, Data: b}}, nil
		}
		msgs, err := nltest.Error(errno, reqs)
		msgs[0].Header.Flags = 0
		return msgs, err
	})
	c, err := NewConn(genetlink.NewConn(nc))
	if err != nil {
		t.Fatalf("NewConn: %v", err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func TestAddUEID(t *testing.T) {
	var got []byte
	c := testConn(t, genltest.CheckRequest(testFamily.ID, cmdAddUEID, netlink.Request|netlink.Acknowledge,
		func(greq genetlink.Message, _ netlink.Message) ([]genetlink.Message, error) {
			attrs, err := netlink.UnmarshalAttributes(greq.Data)
			if err != nil {
				t.Fatalf("request attributes: %v", err)
			}
			if len(attrs) != 1 || attrs[0].Type != eidTableEntry {
				t.Fatalf("request attributes = %+v, want one SMC_NLA_EID_TABLE_ENTRY", attrs)
			}
			got = attrs[0].Data
			// An acknowledged request gets no reply message (genltest's io.EOF).
			return nil, io.EOF
		}))
	// The lab passes the name in lower case sometimes; the kernel only takes upper case.
	if err := c.AddUEID("smc-lab-ueid"); err != nil {
		t.Fatalf("AddUEID: %v", err)
	}
	want := append([]byte(eid32("SMC-LAB-UEID")), 0)
	if len(got) != 33 {
		t.Fatalf("attribute length %d, want 33 (kernel answers EINVAL otherwise)", len(got))
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("attribute = %q, want %q", got, want)
	}
}

func TestRemoveAndFlushUEID(t *testing.T) {
	var cmds []uint8
	c := testConn(t, func(greq genetlink.Message, nreq netlink.Message) ([]genetlink.Message, error) {
		cmds = append(cmds, greq.Header.Command)
		if nreq.Header.Flags&netlink.Dump != 0 {
			t.Errorf("command %d sent as a dump", greq.Header.Command)
		}
		if greq.Header.Command == cmdRemoveUEID {
			attrs, err := netlink.UnmarshalAttributes(greq.Data)
			if err != nil || len(attrs) != 1 || len(attrs[0].Data) != ueidAttrLen {
				t.Errorf("REMOVE_UEID attributes = %+v, %v; want one of 33 bytes", attrs, err)
			}
		}
		return nil, io.EOF
	})
	if err := c.RemoveUEID("SMC-LAB-UEID"); err != nil {
		t.Fatalf("RemoveUEID: %v", err)
	}
	if err := c.FlushUEIDs(); err != nil {
		t.Fatalf("FlushUEIDs: %v", err)
	}
	if diff := cmp.Diff([]uint8{cmdRemoveUEID, cmdFlushUEID}, cmds); diff != "" {
		t.Fatalf("commands (-want +got):\n%s", diff)
	}
}

func TestAddUEIDInvalid(t *testing.T) {
	c := testConn(t, func(genetlink.Message, netlink.Message) ([]genetlink.Message, error) {
		t.Fatal("an invalid UEID reached the kernel")
		return nil, nil
	})
	for _, name := range []string{"", "HAS SPACE", "UNDER_SCORE", "A23456789012345678901234567890123", "ÄÖ"} {
		if err := c.AddUEID(name); !errors.Is(err, os.ErrInvalid) {
			t.Errorf("AddUEID(%q) = %v, want os.ErrInvalid", name, err)
		}
	}
}

func TestUEIDs(t *testing.T) {
	c := testConn(t, genltest.CheckRequest(testFamily.ID, cmdDumpUEID, netlink.Request|netlink.Dump,
		func(genetlink.Message, netlink.Message) ([]genetlink.Message, error) {
			// smc_nl_ueid_dumpinfo: one message per entry, the stored
			// 32 blank-padded bytes as a string.
			return []genetlink.Message{
				reply(cmdDumpUEID, []netlink.Attribute{str(eidTableEntry, eid32("SMC-LAB-UEID"))}),
				reply(cmdDumpUEID, []netlink.Attribute{str(eidTableEntry, eid32("A.B-2"))}),
			}, nil
		}))
	got, err := c.UEIDs()
	if err != nil {
		t.Fatalf("UEIDs: %v", err)
	}
	if diff := cmp.Diff([]string{"SMC-LAB-UEID", "A.B-2"}, got); diff != "" {
		t.Fatalf("UEIDs (-want +got):\n%s", diff)
	}
}

func TestErrors(t *testing.T) {
	tests := []struct {
		name  string
		errno int
		call  func(*Conn) error
		want  error
	}{
		{"add EPERM", int(syscall.EPERM), func(c *Conn) error { return c.AddUEID("X") }, os.ErrPermission},
		{"add EACCES", int(syscall.EACCES), func(c *Conn) error { return c.AddUEID("X") }, os.ErrPermission},
		{"add EEXIST", int(syscall.EEXIST), func(c *Conn) error { return c.AddUEID("X") }, os.ErrExist},
		{"remove ENOENT", int(syscall.ENOENT), func(c *Conn) error { return c.RemoveUEID("X") }, os.ErrNotExist},
		{"stats EOPNOTSUPP", int(syscall.EOPNOTSUPP), func(c *Conn) error { _, err := c.Stats(); return err }, ErrNotSupported},
		{"lgr ENODEV", int(syscall.ENODEV), func(c *Conn) error { _, err := c.LinkGroupsR(); return err }, os.ErrNotExist},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.call(errnoConn(t, tt.errno))
			if !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want errors.Is %v", err, tt.want)
			}
			if !errors.Is(err, syscall.Errno(tt.errno)) {
				t.Fatalf("err = %v lost the errno %d", err, tt.errno)
			}
		})
	}
}

func TestUnsupportedCommandNames(t *testing.T) {
	_, err := errnoConn(t, int(syscall.EOPNOTSUPP)).FallbackStats()
	var ue *UnsupportedError
	if !errors.As(err, &ue) {
		t.Fatalf("err = %v, want *UnsupportedError", err)
	}
	if got, want := ue.Error(), "SMC_NETLINK_GET_FBACK_STATS not supported (requires >= 5.14)"; got != want {
		t.Fatalf("Error() = %q, want %q", got, want)
	}
}

func TestNoFamily(t *testing.T) {
	// nlctrl answers ENOENT for a family that is not registered (smc not loaded).
	_, err := NewConn(genltest.Dial(func(genetlink.Message, netlink.Message) ([]genetlink.Message, error) {
		return nil, genltest.Error(int(syscall.ENOENT))
	}))
	if !errors.Is(err, ErrNotSupported) {
		t.Fatalf("err = %v, want ErrNotSupported", err)
	}
	if got, want := err.Error(), "SMC_GEN_NETLINK not supported (requires >= 5.11)"; got != want {
		t.Fatalf("Error() = %q, want %q", got, want)
	}
}
