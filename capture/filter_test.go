package capture

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/gopacket/gopacket/layers"

	"github.com/smcscope/smcscope/decode"
	"golang.org/x/net/bpf"
)

func TestDefaultFilterMatchesTcpdump(t *testing.T) {
	if _, err := exec.LookPath("tcpdump"); err != nil {
		t.Skip("tcpdump not installed: cannot recompile DefaultFilterExpr")
	}
	prog, err := CompileFilter(DefaultFilterExpr)
	if err != nil {
		t.Fatal(err)
	}
	if len(prog) != len(defaultFilter) {
		t.Fatalf("tcpdump gives %d instructions, embedded table has %d", len(prog), len(defaultFilter))
	}
	for i := range prog {
		if prog[i] != defaultFilter[i] {
			t.Fatalf("instruction %d: tcpdump %+v, embedded %+v", i, prog[i], defaultFilter[i])
		}
	}
}

// TestDefaultFilterOnRealFrames runs the embedded filter in x/net/bpf's VM
// over real captures: every SMC-relevant frame must pass, and plain TCP
// data and ACKs must not.
func TestDefaultFilterOnRealFrames(t *testing.T) {
	var ins []bpf.Instruction
	for _, r := range defaultFilter {
		ins = append(ins, r.Disassemble())
	}
	vm, err := bpf.NewVM(ins)
	if err != nil {
		t.Fatal(err)
	}
	for _, file := range []string{pingpong, declineRDM, fallback, publicRoCE} {
		raw := readRaw(t, file)
		r, err := Open(file)
		if err != nil {
			t.Fatal(err)
		}
		var pass, relevant, plain int
		for i := 0; ; i++ {
			f, err := r.Next()
			if err != nil {
				break
			}
			n, err := vm.Run(raw[i].Data)
			if err != nil {
				t.Fatal(err)
			}
			syn := f.TCP != nil && f.TCP.SYN
			pl := tcpPayload(f)
			_, fr := decode.CLCFrame(pl)
			clcStart := len(pl) >= 4 && fr != decode.CLCNotCLC
			want := syn || clcStart || f.BTH != nil
			if (n > 0) != want {
				t.Errorf("%s frame %d: filter says %v, want %v", file, f.Number, n > 0, want)
			}
			if n > 0 {
				pass++
			}
			if f.SMCRelevant() {
				relevant++
			}
			if f.TCP != nil && !syn && !clcStart {
				plain++
			}
		}
		r.Close()
		if pass < relevant || plain == 0 && file != publicRoCE && file != pingpong {
			t.Errorf("%s: %d passed, %d SMC-relevant, %d plain TCP", file, pass, relevant, plain)
		}
	}
}

func tcpPayload(f *Frame) []byte {
	if f.TCP == nil {
		return nil
	}
	return f.TCP.Payload
}

func TestParseRawBPF(t *testing.T) {
	good := "2,40 0 0 12,6 0 0 262144"
	p, err := ParseRawBPF(good)
	if err != nil || len(p) != 2 || p[1] != (bpf.RawInstruction{Op: 6, K: 262144}) {
		t.Fatalf("%v %v", p, err)
	}
	p2, err := CompileFilter("bpf:" + good)
	if err != nil || len(p2) != 2 {
		t.Fatalf("%v %v", p2, err)
	}
	for _, bad := range []string{"", "x", "3,40 0 0 12", "1,40 0 0", "1,70000 0 0 1", "1,6 0 300 1", "0"} {
		if _, err := ParseRawBPF(bad); err == nil {
			t.Errorf("ParseRawBPF(%q) accepted", bad)
		}
	}
}

func TestCompileFilterError(t *testing.T) {
	if _, err := exec.LookPath("tcpdump"); err != nil {
		t.Skip("tcpdump not installed")
	}
	_, err := CompileFilter("tcp port banana")
	if err == nil || !strings.Contains(err.Error(), `-f "tcp port banana"`) {
		t.Fatalf("error = %v", err)
	}
}

func TestOpenLiveErrors(t *testing.T) {
	_, err := OpenLive("nosuchif0", "", 0)
	if err == nil || !strings.Contains(err.Error(), `no interface "nosuchif0"`) {
		t.Fatalf("error = %v", err)
	}
	e := &LiveError{Iface: "eth0", Err: ErrNoPermission}
	if !strings.HasPrefix(e.Error(), "capturing on eth0 needs CAP_NET_RAW (run as root, or setcap") {
		t.Errorf("message = %q", e.Error())
	}
	if os.Geteuid() == 0 {
		t.Skip("running as root: the missing-CAP_NET_RAW path cannot be exercised here")
	}
	_, err = OpenLive("lo", "", 0)
	if !errors.Is(err, ErrNoPermission) {
		t.Fatalf("OpenLive(lo) without CAP_NET_RAW: %v", err)
	}
}

func TestWriterRoundTrip(t *testing.T) {
	raw := readRaw(t, declineRDM)
	r, err := Open(declineRDM)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	w, err := NewWriter(&buf, layers.LinkTypeEthernet)
	if err != nil {
		t.Fatal(err)
	}
	for {
		f, err := r.Next()
		if err != nil {
			break
		}
		// A live AF_PACKET source reports the kernel ifindex (eth0 = 2 in the lab).
		f.CI.InterfaceIndex = 2
		if err := w.WriteFrame(f); err != nil {
			t.Fatal(err)
		}
	}
	if n, ok := r.Dropped(); ok || n != 0 {
		t.Errorf("a file reader claims to count kernel drops (%d, %v)", n, ok)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(buf.Bytes(), []byte{0x0a, 0x0d, 0x0d, 0x0a}) {
		t.Fatal("not pcapng")
	}
	r2, err := NewFileReader("w", bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; ; i++ {
		f, err := r2.Next()
		if err != nil {
			if i != len(raw) {
				t.Fatalf("read back %d frames, want %d (%v)", i, len(raw), err)
			}
			break
		}
		if !bytes.Equal(f.Data, raw[i].Data) || !f.CI.Timestamp.Equal(raw[i].CI.Timestamp) {
			t.Fatalf("frame %d differs after the round trip", i+1)
		}
	}
}

// TestWriterShortOriginal: a frame whose record said an original length
// below its captured length (read as captured, flagged) is written with
// its captured length as the original one, which pcapgo's writer and
// every reader take, instead of failing the write (smcdump -a -w of a
// damaged file, its repair).
func TestWriterShortOriginal(t *testing.T) {
	r, err := Open(declineRDM)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	f, err := r.Next()
	if err != nil {
		t.Fatal(err)
	}
	f.CI.Length = f.CI.CaptureLength - 16
	var buf bytes.Buffer
	w, err := NewWriter(&buf, layers.LinkTypeEthernet)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WriteFrame(f); err != nil {
		t.Fatalf("write of a frame with a short original length: %v", err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	r2, err := NewFileReader("w", bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	g, err := r2.Next()
	if err != nil {
		t.Fatal(err)
	}
	if g.CI.Length != g.CI.CaptureLength || g.RecordErr != nil || !bytes.Equal(g.Data, f.Data) {
		t.Fatalf("read back: lengths %d/%d, record error %v", g.CI.CaptureLength, g.CI.Length, g.RecordErr)
	}
}

// TestSkipOutgoing: the prefix reads skb->pkt_type, returns 0 for
// PACKET_OUTGOING and otherwise falls through to the program, unchanged.
func TestSkipOutgoing(t *testing.T) {
	prog := DefaultFilter()
	got, err := SkipOutgoing(prog)
	if err != nil {
		t.Fatal(err)
	}
	insns, ok := bpf.Disassemble(got[:3])
	want := []bpf.Instruction{
		bpf.LoadExtension{Num: bpf.ExtType},
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: 4, SkipTrue: 0, SkipFalse: 1},
		bpf.RetConstant{Val: 0},
	}
	if !ok || fmt.Sprint(insns) != fmt.Sprint(want) {
		t.Errorf("prefix %v, want %v", insns, want)
	}
	if fmt.Sprint(got[3:]) != fmt.Sprint(prog) {
		t.Error("the program after the prefix changed")
	}
	if _, err := SkipOutgoing(make([]bpf.RawInstruction, maxBPFInstructions-2)); err == nil {
		t.Error("no error for a program the prefix pushes over the kernel's limit")
	}
}
