package top

import (
	"strings"
	"testing"

	"github.com/gdamore/tcell/v2"

	"github.com/smcscope/smcscope/internal/testutil"
	"github.com/smcscope/smcscope/monitor"
)

// smcdSnapshot replays the lab's 7.3 SMC-D recording (smcnl/testdata/
// smcd-client-active): its sockets with cursors and DMB tokens, its
// statistics, and a SEID.
func smcdSnapshot(t *testing.T) monitor.Snapshot {
	t.Helper()
	return replaySnapshot(t, "smcd-client-active", "../../smcnl/testdata/smcd-client-active/sys")
}

// TestSocketDetailCursors: the detail of an SMC-D socket shows what smcss
// -d and -D show: shutdown, cursors, flags, the unconfirmed bytes and
// since when, the DMB tokens.
func TestSocketDetailCursors(t *testing.T) {
	s := smcdSnapshot(t)
	var row monitor.ConnRow
	for _, c := range s.Conns {
		if c.Key == "inode:607" {
			row = c
		}
	}
	d := connDetail(row, &s)
	for _, want := range []string{"shutdown <->", "state ACTIVE since 12:00:01 (1s ago)", "peer cons 0/2752", "prod 0/2816",
		"fin 0/2752", "flags rx 00:00", "unconfirmed 64 B (standing since 12:00:01 (1s ago))", "unsent 0 B",
		"DMB token 0x", "peer token 0x"} {
		if !strings.Contains(d, want) {
			t.Errorf("detail lacks %q:\n%s", want, d)
		}
	}
	var listener monitor.ConnRow
	for _, c := range s.Conns {
		if c.Key == "inode:459" {
			listener = c
		}
	}
	d = connDetail(listener, &s)
	for _, want := range []string{"*:5002", "0.0.0.0 and [::] alike", "cursors -"} {
		if !strings.Contains(d, want) {
			t.Errorf("listener detail lacks %q:\n%s", want, d)
		}
	}
}

// TestStatsAndSystemScreens drives the dashboard at 80x24 and 200x50 to
// the statistics screen (7) and the system screen (8), by number and by
// name, and checks what they show of the recording.
func TestStatsAndSystemScreens(t *testing.T) {
	for _, size := range [][2]int{{80, 24}, {200, 50}} {
		top := New()
		scr := testutil.NewScreen(t, top.App.Application)
		top.Update(smcdSnapshot(t))
		scr.Start(size[0], size[1], top.App.Run)
		got := scr.Sync()
		// Eight views: on 80 columns the ones not shown go by their
		// short names, and every number stays on the tab line.
		if tabs := strings.SplitN(got, "\n", 2)[0]; !strings.Contains(tabs, "7:st") || !strings.Contains(tabs, "8:sys") || !strings.Contains(tabs, "1:overview") {
			t.Errorf("%dx%d tab line %q", size[0], size[1], tabs)
		}
		scr.Key(tcell.KeyRune, '7')
		got = scr.Sync()
		if top.App.Current().Name() != "statistics" || !strings.Contains(got, "client handshakes v1") || !strings.Contains(got, "SMC-R") {
			t.Errorf("%dx%d statistics:\n%s", size[0], size[1], got)
		}
		scr.Key(tcell.KeyRune, '/')
		scr.Type("payload")
		scr.Key(tcell.KeyEnter, 0)
		got = scr.Sync()
		if !strings.Contains(got, "rx payload sizes") || strings.Contains(got, "cork") {
			t.Errorf("%dx%d statistics filtered to payload:\n%s", size[0], size[1], got)
		}
		if size[0] >= 200 && !strings.Contains(got, "G1024K") {
			t.Errorf("%dx%d: the histogram's buckets are not all shown:\n%s", size[0], size[1], got)
		}
		scr.Key(tcell.KeyEscape, 0)
		scr.Key(tcell.KeyRune, ':')
		scr.Type("ueid")
		scr.Key(tcell.KeyEnter, 0)
		got = scr.Sync()
		if top.App.Current().Name() != "system" || !strings.Contains(got, "SMC-LAB-UEID") || !strings.Contains(got, "SMC version") || !strings.Contains(got, "v2.1") {
			t.Errorf("%dx%d system:\n%s", size[0], size[1], got)
		}
	}
}

// TestStatRowsAbsent: without the kernel's statistics the statistics
// screen says so, with "-", never zeros; the system screen too.
func TestStatRowsAbsent(t *testing.T) {
	s := &monitor.Snapshot{Sources: []monitor.Source{{Name: monitor.SourceNetlink, Detail: "SMC_GEN_NETLINK not supported"}}}
	rows := statRows(s)
	if len(rows) != 1 || rows[0].value != "-" || !strings.Contains(rows[0].meaning, "not supported") {
		t.Errorf("statistics without the kernel: %+v", rows)
	}
	sys := systemRows(s)
	if len(sys) != 1 || sys[0].value != "-" {
		t.Errorf("system without the kernel: %+v", sys)
	}
}

// TestSystemRowsPNET: the PNET table and the devices' PNET IDs, with who
// set them; no UEID and no SEID in use reads as the decline risk it is.
func TestSystemRowsPNET(t *testing.T) {
	s := &monitor.Snapshot{
		System: &monitor.SystemInfo{Version: 2, Release: 1, UEIDs: []string{},
			PNET: []monitor.PNETRow{{PNETID: "LABNET", Device: "lo", DevPort: 1}, {PNETID: "LABNET", NetDev: "eth1"}}},
		Devices: []monitor.DeviceRow{{Kind: monitor.DeviceDIBS, Name: "lo", SMC: true, SMCKnown: true, PNETID: "LABNET", PNETIDByUser: true},
			{Kind: monitor.DeviceRDMA, Name: "rxe0", Ports: []monitor.PortRow{{Port: 1, PNETID: "NET1"}}}},
	}
	var b strings.Builder
	for _, r := range systemRows(s) {
		b.WriteString(r.what + " | " + r.value + " | " + r.note)
		if r.warn {
			b.WriteString(" | WARN")
		}
		b.WriteString("\n")
	}
	got := b.String()
	for _, want := range []string{
		"UEIDs | none | SMC v2 needs a UEID both ends share (or the SEID): a v2 peer may decline | WARN",
		"PNET LABNET | device lo port 1 | user", "PNET LABNET | netdev eth1 | user",
		"PNET ID of lo | LABNET (user) | DIBS device, used by SMC-D", "PNET ID of rxe0/1 | NET1 (hardware) | RDMA port",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("system rows lack %q:\n%s", want, got)
		}
	}
	// The lab's 7.3 server: lo under a PNET ID no netdev has (shift_ids' LABNOSMCD).
	s.System.PNET = []monitor.PNETRow{{PNETID: "LABNOSMCD", Device: "lo", DevPort: 1}, {PNETID: "LABSELF", NetDev: "lo"}}
	s.Devices[0].PNETID, s.Devices[0].SMC = "LABNOSMCD", false
	got = ""
	for _, r := range systemRows(s) {
		if r.key == "dev-lo" && r.warn {
			got = r.note
		}
	}
	for _, want := range []string{"not used by SMC", "no netdev in the PNET table has this PNET ID: SMC-D cannot use it"} {
		if !strings.Contains(got, want) {
			t.Errorf("system rows lack %q:\n%s", want, got)
		}
	}
}

// TestTextGroupsAligned: with two SMC-R groups and their links, every
// group row of --once's text starts its columns where the header does
// (the links once sat between the rows and broke the second one's).
func TestTextGroupsAligned(t *testing.T) {
	link := func(id uint8) monitor.LinkRow {
		return monitor.LinkRow{ID: id, State: monitor.LinkActive, Active: true, IBDev: "rxe0", IBPort: 1, UID: 0x101,
			GID: "0000:0000:0000:0000:0000:ffff:0a0a:0002", PeerGID: "0000:0000:0000:0000:0000:ffff:0a0a:0001"}
	}
	s := monitor.Snapshot{LinkGroups: []monitor.LinkGroupRow{
		{Key: "lgr:00000100", Source: monitor.SourceKernel, ID: 0x100, Kind: monitor.ModeSMCR, Role: monitor.RoleClient, Type: "SYM", Links: []monitor.LinkRow{link(1), link(2)}},
		{Key: "lgr:00000200", Source: monitor.SourceKernel, ID: 0x200, Kind: monitor.ModeSMCR, Role: monitor.RoleServer, Type: "SINGLE", Links: []monitor.LinkRow{link(1)}},
	}}
	var b strings.Builder
	if err := WriteText(&b, s); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(b.String(), "\n")
	var header string
	var rows []string
	for i, l := range lines {
		if l == "== link groups" {
			header, rows = lines[i+1], lines[i+2:i+4]
		}
	}
	want := strings.Index(header, "SRC")
	for _, r := range rows {
		if got := strings.Index(r, "kernel"); got != want {
			t.Errorf("group row %q: SRC at %d, header's at %d\n%s", r, got, want, b.String())
		}
	}
}
