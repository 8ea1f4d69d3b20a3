package tsharkdiff

import (
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// filterPairs are display filters that mean the same thing in smcdump's
// language and in tshark's, field names aside. Both tools must select the
// same frames, which tests the filter package (operators, sets, ranges,
// prefixes, aliases, multi-valued semantics) and its wiring into smcdump
// against tshark as the oracle.
var filterPairs = []struct {
	file         string
	ours, theirs string
}{
	{"reference/decline-nordma.pcap", "smc.clc.type == 4", "smc.clc_msg == 4"},
	{"reference/decline-nordma.pcap", "smc.clc.decline.reason == 0x03030002", "smc.peer.diag.info == 0x03030002"},
	{"reference/no-ueid.pcap", "smc.clc.type in {1, 4} and tcp.port == 5000", "smc.clc_msg in {1, 4} and tcp.port == 5000"},
	{"reference/pingpong.pcap", "smc.clc.type", "smc.clc_msg"},
	{"reference/pingpong.pcap", "smc.clc.qpn == 0x11 and smc.clc.type == 3", "smc.confirm.client.qp.number == 0x11"},
	{"reference/pingpong.pcap", "roce.bth.opcode in {10, 4}", "infiniband.bth.opcode in {10, 4}"},
	{"reference/pingpong.pcap", "roce.bth.opcode in {10..17}", "infiniband.bth.opcode in {10..17}"},
	{"reference/pingpong.pcap", "roce.bth.psn >= 0xa6ad00 && roce.bth.psn < 0xa6ae00", "infiniband.bth.psn >= 0xa6ad00 && infiniband.bth.psn < 0xa6ae00"},
	{"reference/pingpong.pcap", "roce.reth.len > 0 and roce.reth.len <= 64", "infiniband.reth.dmalen > 0 and infiniband.reth.dmalen <= 64"},
	{"reference/pingpong.pcap", "smc.cdc.seq in {1..10} or smc.cdc.flags.peer_conn_closed == 1", "smc.rmbe.ctrl.seqno in {1..10} or smc.rmbe.ctrl.peer.closed.conn == 1"},
	// tshark names both CDC cursors smc.rmbe.ctrl.peer.prod.curs, so its
	// "!=" (none equal) and ">" (any greater) span both of ours.
	{"reference/pingpong.pcap", "smc.cdc.prod.count != 0 and smc.cdc.cons.count != 0", "smc.rmbe.ctrl.peer.prod.curs != 0"},
	{"reference/pingpong.pcap", "smc.cdc.prod.count > 0x4000 or smc.cdc.cons.count > 0x4000", "smc.rmbe.ctrl.peer.prod.curs > 0x4000"},
	{"reference/pingpong.pcap", "not smc.cdc and roce.bth.opcode == 4", "not smc.rmbe.ctrl.seqno and infiniband.bth.opcode == 4"},
	{"reference/pingpong.pcap", "ip.addr == 10.10.0.2 and not udp.port == 4791", "ip.addr == 10.10.0.2 and not udp.port == 4791"},
	{"reference/pingpong.pcap", "ip.addr != 10.10.0.9", "ip.addr != 10.10.0.9"},
	{"reference/pingpong.pcap", "eth.addr == 52:54:00:0a:00:01 && !ip", "eth.addr == 52:54:00:0a:00:01 && !ip"},
	{"reference/pingpong.pcap", `smc.clc.eid contains "LAB"`, `smc.proposal.eid contains "LAB" || smc.accept.eid contains "LAB" || smc.confirm.eid contains "LAB"`},
	{"reference/pingpong.pcap", `smc.clc.eid matches "lab-ueid *$"`, `smc.proposal.eid matches "lab-ueid *$" || smc.accept.eid matches "lab-ueid *$" || smc.confirm.eid matches "lab-ueid *$"`},
	{"reference/pingpong.pcap", `smc.clc.fce.hostname matches "^\\(NONE\\)"`, `smc.accept.peer.host.name matches "^\\(NONE\\)" || smc.confirm.peer.host.name matches "^\\(NONE\\)"`},
	{"reference/pingpong.pcap", "smc.clc.gid == 10.10.0.1", "smc.accept.server.preferred.gid == ::ffff:10.10.0.1"},
	{"reference/pingpong.pcap", "tcp.smc_option == 1", "tcp.options.experimental.exid == 0xe2d4"},
	{"reference/fallback-nosmc.pcap", "tcp.smc_option == 0", "tcp.flags.syn == 1 and not tcp.options.experimental.exid == 0xe2d4"},
	// Times compare exactly, to the nanosecond, in both tools.
	{"reference/fallback-nosmc.pcap", "frame.time_epoch >= 1795330405.226851 and frame.time_epoch < 1795330405.234123", "frame.time_epoch >= 1795330405.226851 and frame.time_epoch < 1795330405.234123"},
	{"reference/fallback-nosmc.pcap", "frame.time_epoch == 1795330405.230493", "frame.time_epoch == 1795330405.230493"},
	{"reference/fallback-nosmc.pcap", "frame.time_epoch > 1795330405.230493000", "frame.time_epoch > 1795330405.230493000"},
	{"public/linlinw5_rdma_ib_tutorial/rdma_cm.pcap", "roce.deth.srcqp == 1 or roce.aeth.syndrome > 0", "infiniband.deth.srcqp == 1 or infiniband.aeth.syndrome > 0"},
	{"public/linlinw5_rdma_ib_tutorial/rping.pcap", "roce.aeth.type == 0 and roce.aeth.msn in {1, 3, 5}", "infiniband.aeth.syndrome.opcode == 0 and infiniband.aeth.msn in {1, 3, 5}"},
	// Wireshark's names, which smcdump reads as its own (decode.WiresharkName),
	// and its protocol name as a prefix of them.
	{"reference/pingpong.pcap", "infiniband.bth.opcode in {10, 4} and infiniband.bth.destqp > 0", "infiniband.bth.opcode in {10, 4} and infiniband.bth.destqp > 0"},
	{"reference/pingpong.pcap", "infiniband.reth.dmalen > 0 and infiniband.reth.dmalen <= 64", "infiniband.reth.dmalen > 0 and infiniband.reth.dmalen <= 64"},
	{"reference/pingpong.pcap", "infiniband.aeth", "infiniband.aeth"},
	{"public/linlinw5_rdma_ib_tutorial/rping.pcap", "infiniband.aeth.syndrome.opcode == 0 and infiniband.aeth.msn in {1, 3, 5}", "infiniband.aeth.syndrome.opcode == 0 and infiniband.aeth.msn in {1, 3, 5}"},
	{"public/linlinw5_rdma_ib_tutorial/nccl__nccl_node0.pcap", "tcp.flags.reset == 1", "tcp.flags.reset == 1"},
	{"reference/erspan.pcap", "infiniband", "infiniband"},
	{"reference/erspan.pcap", "roce", "infiniband"},
}

func TestFiltersAgainstTshark(t *testing.T) {
	tshark, root, bin := setup(t, "runs tshark and smcdump per filter")
	for _, fp := range filterPairs {
		t.Run(fp.file+"/"+fp.ours, func(t *testing.T) {
			t.Parallel()
			f := filepath.Join(root, "testdata", fp.file)
			theirs := frameSet(t, tshark, "-n", "-r", f, "--disable-protocol", "rpcordma", "-Y", fp.theirs,
				"-T", "fields", "-e", "frame.number")
			ours := frameSet(t, bin, "-r", f, "-a", "-Y", fp.ours, "-T", "fields", "-e", "frame.number")
			if len(theirs) == 0 {
				t.Fatalf("tshark selected no frame with %q: the pair tests nothing", fp.theirs)
			}
			t.Logf("%d frames", len(theirs))
			if !slices.Equal(ours, theirs) {
				t.Errorf("smcdump -Y %q selected %d frames, tshark -Y %q %d; first differences: %v",
					fp.ours, len(ours), fp.theirs, len(theirs), symDiff(ours, theirs, 10))
			}
		})
	}
}

// frameSet runs a tool that prints one frame number per line.
func frameSet(t *testing.T, bin string, args ...string) []int {
	t.Helper()
	out, err := exec.Command(bin, args...).Output()
	if err != nil {
		msg := ""
		if ee, ok := err.(*exec.ExitError); ok {
			msg = string(ee.Stderr)
		}
		t.Fatalf("%s: %v\n%s", filepath.Base(bin), err, msg)
	}
	var ns []int
	for _, l := range strings.Fields(string(out)) {
		n, err := strconv.Atoi(l)
		if err != nil {
			t.Fatalf("%s: not a frame number: %q", filepath.Base(bin), l)
		}
		ns = append(ns, n)
	}
	sort.Ints(ns)
	return ns
}

// symDiff lists up to max frames selected by only one side, signed: +n
// only by smcdump, -n only by tshark.
func symDiff(ours, theirs []int, max int) []string {
	var d []string
	for _, n := range ours {
		if _, in := slices.BinarySearch(theirs, n); !in && len(d) < max {
			d = append(d, "+"+strconv.Itoa(n))
		}
	}
	for _, n := range theirs {
		if _, in := slices.BinarySearch(ours, n); !in && len(d) < max {
			d = append(d, "-"+strconv.Itoa(n))
		}
	}
	return d
}
