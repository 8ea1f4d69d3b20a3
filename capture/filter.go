package capture

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os/exec"
	"strconv"
	"strings"

	"golang.org/x/net/bpf"
)

// DefaultFilterExpr is the live capture filter when -f is not given: the
// SMC-relevant traffic: TCP SYNs (the SMC option, RFC 7609 and
// net/smc/af_smc.c), CLC messages (net/smc/smc_clc.c) and RoCE. The SMC option's
// position among TCP options varies, which classic BPF cannot search, so
// every SYN/SYN-ACK passes (the decoder checks the option); CLC is matched
// by the eyecatcher at the start of the TCP payload; RoCEv2 by UDP port
// 4791, RoCEv1 by EtherType 0x8915. IPv6 SYNs and CLC are matched when no
// extension header precedes TCP.
const DefaultFilterExpr = "(tcp[tcpflags] & tcp-syn != 0)" +
	" or (tcp and tcp[((tcp[12]&0xf0)>>2):4] = 0xe2d4c3d9)" +
	" or (tcp and tcp[((tcp[12]&0xf0)>>2):4] = 0xe2d4c3c4)" +
	" or (ip6 and ip6[6] = 6 and ip6[53] & 2 != 0)" +
	" or (ip6 and ip6[6] = 6 and (ip6[(40 + ((ip6[52]&0xf0)>>2)):4] = 0xe2d4c3d9" +
	" or ip6[(40 + ((ip6[52]&0xf0)>>2)):4] = 0xe2d4c3c4))" +
	" or (udp dst port 4791) or (ether proto 0x8915)"

// defaultFilter is DefaultFilterExpr compiled by `tcpdump -y EN10MB -ddd`
// (tcpdump 4.99 / libpcap 1.10); TestDefaultFilterMatchesTcpdump recompiles
// it when tcpdump is installed. There is no BPF compiler in pure Go, and a
// live capture must work on hosts without tcpdump.
var defaultFilter = []bpf.RawInstruction{
	{Op: 40, Jt: 0, Jf: 0, K: 12},
	{Op: 21, Jt: 0, Jf: 21, K: 2048},
	{Op: 48, Jt: 0, Jf: 0, K: 23},
	{Op: 21, Jt: 0, Jf: 13, K: 6},
	{Op: 40, Jt: 0, Jf: 0, K: 20},
	{Op: 69, Jt: 35, Jf: 0, K: 8191},
	{Op: 177, Jt: 0, Jf: 0, K: 14},
	{Op: 80, Jt: 0, Jf: 0, K: 27},
	{Op: 69, Jt: 31, Jf: 0, K: 2},
	{Op: 80, Jt: 0, Jf: 0, K: 26},
	{Op: 84, Jt: 0, Jf: 0, K: 240},
	{Op: 116, Jt: 0, Jf: 0, K: 2},
	{Op: 12, Jt: 0, Jf: 0, K: 0},
	{Op: 7, Jt: 0, Jf: 0, K: 0},
	{Op: 64, Jt: 0, Jf: 0, K: 14},
	{Op: 21, Jt: 24, Jf: 0, K: 3805594585},
	{Op: 21, Jt: 23, Jf: 24, K: 3805594564},
	{Op: 21, Jt: 0, Jf: 23, K: 17},
	{Op: 40, Jt: 0, Jf: 0, K: 20},
	{Op: 69, Jt: 21, Jf: 0, K: 8191},
	{Op: 177, Jt: 0, Jf: 0, K: 14},
	{Op: 72, Jt: 0, Jf: 0, K: 16},
	{Op: 21, Jt: 17, Jf: 18, K: 4791},
	{Op: 21, Jt: 0, Jf: 15, K: 34525},
	{Op: 48, Jt: 0, Jf: 0, K: 20},
	{Op: 21, Jt: 0, Jf: 9, K: 6},
	{Op: 48, Jt: 0, Jf: 0, K: 67},
	{Op: 69, Jt: 12, Jf: 0, K: 2},
	{Op: 48, Jt: 0, Jf: 0, K: 66},
	{Op: 84, Jt: 0, Jf: 0, K: 240},
	{Op: 116, Jt: 0, Jf: 0, K: 2},
	{Op: 7, Jt: 0, Jf: 0, K: 8},
	{Op: 64, Jt: 0, Jf: 0, K: 54},
	{Op: 21, Jt: 6, Jf: 0, K: 3805594585},
	{Op: 21, Jt: 5, Jf: 0, K: 3805594564},
	{Op: 48, Jt: 0, Jf: 0, K: 20},
	{Op: 21, Jt: 0, Jf: 4, K: 17},
	{Op: 40, Jt: 0, Jf: 0, K: 56},
	{Op: 21, Jt: 1, Jf: 2, K: 4791},
	{Op: 21, Jt: 0, Jf: 1, K: 35093},
	{Op: 6, Jt: 0, Jf: 0, K: 262144},
	{Op: 6, Jt: 0, Jf: 0, K: 0},
}

// maxBPFInstructions is the kernel limit (BPF_MAXINSNS).
const maxBPFInstructions = 4096

// DefaultFilter returns the compiled default live filter.
func DefaultFilter() []bpf.RawInstruction { return append([]bpf.RawInstruction(nil), defaultFilter...) }

// packetOutgoing is PACKET_OUTGOING (include/uapi/linux/if_packet.h): the
// pkt_type of a frame the host sends, as a packet socket sees it.
const packetOutgoing = 4

// SkipOutgoing returns prog behind three instructions that drop every frame
// the host sends (skb->pkt_type PACKET_OUTGOING, read with the SKF_AD_PKTTYPE
// ancillary load). A packet socket on the loopback sees each frame twice:
// once leaving (dev_queue_xmit_nit, PACKET_OUTGOING) and once arriving
// (PACKET_HOST); libpcap drops the first copy on loopback devices, and so
// does a live capture on lo here. prog's jumps are relative, so it runs
// unchanged after the prefix.
func SkipOutgoing(prog []bpf.RawInstruction) ([]bpf.RawInstruction, error) {
	if len(prog)+3 > maxBPFInstructions {
		return nil, fmt.Errorf("bpf: %d instructions and 3 to skip outgoing frames exceed the kernel's %d", len(prog), maxBPFInstructions)
	}
	pre, err := bpf.Assemble([]bpf.Instruction{
		bpf.LoadExtension{Num: bpf.ExtType},
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: packetOutgoing, SkipTrue: 0, SkipFalse: 1},
		bpf.RetConstant{Val: 0},
	})
	if err != nil {
		return nil, err
	}
	return append(pre, prog...), nil
}

// CompileFilter turns a -f argument into BPF for an Ethernet interface.
// "bpf:" followed by raw instructions in tcpdump -ddd form (a count, then
// "code jt jf k" per instruction; lines or commas separate them) is taken
// as is. Anything else is a pcap-filter expression compiled by running
// tcpdump -ddd, the only compiler at hand without cgo.
func CompileFilter(expr string) ([]bpf.RawInstruction, error) {
	if raw, ok := strings.CutPrefix(expr, "bpf:"); ok {
		return ParseRawBPF(raw)
	}
	path, err := exec.LookPath("tcpdump")
	if err != nil {
		return nil, fmt.Errorf("-f %q needs tcpdump to compile the expression (install tcpdump, or pass raw BPF as -f 'bpf:N,code jt jf k,...')", expr)
	}
	var stderr bytes.Buffer
	cmd := exec.Command(path, "-y", "EN10MB", "-ddd", expr)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = err.Error()
		}
		return nil, fmt.Errorf("-f %q: %s", expr, msg)
	}
	return ParseRawBPF(string(out))
}

// ParseRawBPF reads tcpdump -ddd output: the instruction count, then one
// "code jt jf k" line (or comma-separated item) per instruction.
func ParseRawBPF(s string) ([]bpf.RawInstruction, error) {
	s = strings.ReplaceAll(s, ",", "\n")
	sc := bufio.NewScanner(strings.NewReader(s))
	var (
		prog []bpf.RawInstruction
		n    = -1
	)
	for line := 1; sc.Scan(); line++ {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		if n < 0 {
			if len(f) != 1 {
				return nil, fmt.Errorf("bpf: item %d: want the instruction count first", line)
			}
			c, err := strconv.Atoi(f[0])
			if err != nil || c <= 0 || c > maxBPFInstructions {
				return nil, fmt.Errorf("bpf: item %d: bad instruction count %q", line, f[0])
			}
			n = c
			continue
		}
		if len(f) != 4 {
			return nil, fmt.Errorf("bpf: item %d: want \"code jt jf k\", got %q", line, sc.Text())
		}
		var v [4]uint64
		for i, x := range f {
			u, err := strconv.ParseUint(x, 0, 32)
			if err != nil || (i == 0 && u > 0xffff) || ((i == 1 || i == 2) && u > 0xff) {
				return nil, fmt.Errorf("bpf: item %d: bad number %q", line, x)
			}
			v[i] = u
		}
		prog = append(prog, bpf.RawInstruction{Op: uint16(v[0]), Jt: uint8(v[1]), Jf: uint8(v[2]), K: uint32(v[3])})
	}
	switch {
	case n < 0:
		return nil, errors.New("bpf: empty program")
	case len(prog) != n:
		return nil, fmt.Errorf("bpf: count says %d instructions, got %d", n, len(prog))
	}
	return prog, nil
}
