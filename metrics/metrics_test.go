package metrics

import (
	"encoding/json"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/smcscope/smcscope/expert"
	"github.com/smcscope/smcscope/internal/testutil"
	"github.com/smcscope/smcscope/monitor"
	"github.com/smcscope/smcscope/monitor/monitortest"
)

// fixture replays the lab's multilink recording before the failover and
// the rdmastats sysfs fixture (mlx5 and rxe).
func fixture(t *testing.T) Source { return fixtureOf(t, "multilink-client-before") }

// fixtureOf replays one recording of smcnl/testdata.
func fixtureOf(t *testing.T, rec string) Source {
	t.Helper()
	k, err := monitor.ReplayKernel("../smcnl/testdata/" + rec)
	if err != nil {
		t.Fatal(err)
	}
	clock := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	m := monitor.New(monitor.Options{Kernel: k, SysfsRoot: "../rdmastats/testdata/sys",
		Now: func() time.Time { clock = clock.Add(time.Second); return clock }})
	t.Cleanup(func() { m.Close() })
	l := &Latest{}
	l.Set(m.Refresh(), 1500*time.Microsecond)
	return l
}

func scrape(t *testing.T, src Source) string {
	t.Helper()
	srv := httptest.NewServer(Handler(src, nil))
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("scrape: %d %v\n%s", resp.StatusCode, err, b)
	}
	return string(b)
}

func TestExposition(t *testing.T) {
	out := scrape(t, fixture(t))
	testutil.Golden(t, "multilink-client-before", []byte(smcSeries(out)))
	for _, want := range []string{
		`smc_conn_sockets{mode="SMC-R",source="kernel"} 2`,
		`smc_lgr_redundant{lgr="0x100"} 1`,
		`smc_link_info{device="rxe1",gid="0000:0000:0000:0000:0000:ffff:0a0a:000c",lgr="0x100",link="2",netdev="if3",peer_gid="0000:0000:0000:0000:0000:ffff:0a0a:000b",peer_uid="00000102",port="1",uid="00000102"} 1`,
		`smc_link_state{lgr="0x100",link="2",state="ACTIVE"} 1`,
		`smc_link_state{lgr="0x100",link="2",state="DELETED"} 0`,
		`smc_rnic_port_errors_total{counter="out_of_sequence",device="mlx5_0",health=`,
		`smc_rnic_port_xmit_packets_total{device="mlx5_0",port="1"}`,
		`smc_lgr_max_links{lgr="0x100"} 2`,
		`smc_build_info{goversion=`,
		`process_resident_memory_bytes`,
		`go_goroutines`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("exposition lacks %s", want)
		}
	}
}

// smcSeries keeps the exposition's SMC lines: the process and Go
// collectors' values, and the build's version, change from run to run.
func smcSeries(out string) string {
	var b strings.Builder
	for _, l := range strings.SplitAfter(out, "\n") {
		name := strings.TrimPrefix(strings.TrimPrefix(l, "# HELP "), "# TYPE ")
		if strings.HasPrefix(name, "smc_") && !strings.HasPrefix(name, "smc_build_info") {
			b.WriteString(l)
		}
	}
	return b.String()
}

func TestPromtoolCheckMetrics(t *testing.T) {
	promtool := testutil.NeedTool(t, "promtool")
	out := scrape(t, fixture(t))
	cmd := exec.Command(promtool, "check", "metrics")
	cmd.Stdin = strings.NewReader(out)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("promtool check metrics: %v\n%s", err, b)
	}
}

func TestRules(t *testing.T) {
	promtool := testutil.NeedTool(t, "promtool")
	for _, args := range [][]string{
		{"check", "rules", "../deploy/prometheus/smc-rules.yml"},
		{"test", "rules", "../deploy/prometheus/smc-rules-test.yml"},
		{"check", "rules", "../deploy/prometheus/smc-fleet-rules.yml"},
		{"test", "rules", "../deploy/prometheus/smc-fleet-rules-test.yml"},
	} {
		if b, err := exec.Command(promtool, args...).CombinedOutput(); err != nil {
			t.Errorf("promtool %s: %v\n%s", strings.Join(args, " "), err, b)
		}
	}
}

// panel is one Grafana panel with its query expressions.
type panel struct {
	Title   string `json:"title"`
	Targets []struct {
		Expr string `json:"expr"`
	} `json:"targets"`
}

// dashboard reads deploy/grafana's dashboard.
func dashboard(t *testing.T) struct{ Panels []panel } {
	t.Helper()
	b, err := os.ReadFile("../deploy/grafana/smcscope.json")
	if err != nil {
		t.Fatal(err)
	}
	var d struct{ Panels []panel }
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	return d
}

// TestDashboard checks that every Grafana expression names only metrics
// the exporter exposes.
func TestDashboard(t *testing.T) {
	d := dashboard(t)
	// The SMC-R recording has no fallbacks; the declining server's has.
	exposed := scrape(t, fixture(t)) + scrape(t, fixtureOf(t, "decline-nordma-server-done"))
	if len(d.Panels) == 0 {
		t.Fatal("dashboard has no panels")
	}
	for _, p := range d.Panels {
		for _, tg := range p.Targets {
			// Recording rules' names (level:metric:operations) are the
			// fleet rules', checked by the real-Prometheus test.
			expr := regexp.MustCompile(`[a-z_]*:[a-z0-9_]+:[a-z0-9_]+`).ReplaceAllString(tg.Expr, "")
			for _, f := range strings.FieldsFunc(expr, func(r rune) bool {
				return !(r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9')
			}) {
				if strings.HasSuffix(f, "_") { // a regular expression's prefix
					f = "# TYPE " + f
				} else {
					f = "# TYPE " + f + " "
				}
				if strings.HasPrefix(f, "# TYPE smc_") && !strings.Contains(exposed, f) {
					t.Errorf("panel %q: %s is not exposed", p.Title, f)
				}
			}
		}
	}
}

// TestConcurrentScrapes: promhttp may collect for several scrapes at once;
// nothing in the collectors may be shared unguarded (go test -race).
func TestConcurrentScrapes(t *testing.T) {
	src := fixture(t)
	srv := httptest.NewServer(Handler(src, nil))
	defer srv.Close()
	done := make(chan error, 8)
	for range 8 {
		go func() {
			resp, err := http.Get(srv.URL)
			if err == nil {
				_, err = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
			done <- err
		}()
	}
	for range 8 {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
}

// TestLabelsNotUTF8: a device name or PNET ID with bytes that are not
// UTF-8 (sysfs and netlink carry bytes) is exported with the bytes
// escaped; the scrape keeps every other series.
func TestLabelsNotUTF8(t *testing.T) {
	s, _ := fixture(t).Snapshot()
	clean := scrape(t, &Latest{s: s})
	bad := s
	bad.Devices = append([]monitor.DeviceRow(nil), s.Devices...)
	bad.Devices[0].Name = "mlx5\xff0"
	bad.LinkGroups = append([]monitor.LinkGroupRow(nil), s.LinkGroups...)
	bad.LinkGroups[0].PNETID = "LAB\xc3NET"
	out := scrape(t, &Latest{s: bad})
	for _, want := range []string{`device="mlx5\\xff0"`, `pnetid="LAB\\xc3NET"`} {
		if !strings.Contains(out, want) {
			t.Errorf("exposition lacks %s", want)
		}
	}
	if a, b := strings.Count(smcSeries(clean), "\n"), strings.Count(smcSeries(out), "\n"); a != b {
		t.Errorf("%d lines with a name not UTF-8, %d without", b, a)
	}
}

// TestScrapeErrorsLogged: a metric that cannot be made (here the same
// series twice) is logged, and the scrape serves the rest.
func TestScrapeErrorsLogged(t *testing.T) {
	s, _ := fixture(t).Snapshot()
	s.Devices = append(s.Devices, s.Devices[0])
	var logged strings.Builder
	srv := httptest.NewServer(Handler(&Latest{s: s}, log.New(&logged, "", 0)))
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(logged.String(), "smc_rnic_port_up") {
		t.Errorf("nothing logged about the duplicate series: %q", logged.String())
	}
	if !strings.Contains(string(b), "smc_lgr_redundant") {
		t.Errorf("the rest of the scrape is missing:\n%s", b)
	}
}

// TestLostLinkSeries: after the failover the lost link keeps its series,
// down: smc_link_up 0 and smc_link_state DELETED, so SMCLinkDown fires.
func TestLostLinkSeries(t *testing.T) {
	sk := &switchKernel{before: replayKernel(t, "multilink-client-before"), after: replayKernel(t, "multilink-client-after")}
	m := monitor.New(monitor.Options{Kernel: sk})
	m.Refresh()
	sk.flipped.Store(true)
	out := scrape(t, refreshing{m: m})
	for _, want := range []string{
		`smc_link_up{lgr="0x100",link="2"} 0`,
		`smc_link_state{lgr="0x100",link="2",state="DELETED"} 1`,
		`smc_lgr_links{lgr="0x100",state="DELETED"} 1`,
		`smc_lgr_redundant{lgr="0x100"} 0`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("exposition lacks %s", want)
		}
	}
}

// TestSnapshotJSON: the exporter serves its snapshot as JSON, what
// smctop --remote and the fleet's drill-down read.
func TestSnapshotJSON(t *testing.T) {
	srv := httptest.NewServer(SnapshotHandler(fixture(t)))
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var s monitor.Snapshot
	if err := json.NewDecoder(resp.Body).Decode(&s); err != nil {
		t.Fatal(err)
	}
	if s.Overview.SMCR != 2 || len(s.LinkGroups) != 1 {
		t.Errorf("snapshot %+v", s.Overview)
	}
}

// TestExpertFindingsTotal: a capture replay exports each finding of its
// frames as smc_expert_findings_total{finding,severity,source}.
func TestExpertFindingsTotal(t *testing.T) {
	checkWireExposition(t, "../samples/multilink.pcap", []string{
		`smc_expert_findings_total{finding="roce.rc.retransmission",severity="warn",source="wire"} 42`,
		`smc_expert_findings_total{finding="smc.failover",severity="warn",source="wire"} 2`,
		`smc_expert_findings_total{finding="smc.handshake.slow",severity="note",source="wire"} 1`,
	}, nil)
}

// TestWireStandsInForKernel: a capture replay's fallbacks, handshakes and
// bytes reach the series the fallback alert and the dashboard read
// (smc_conn_fallbacks_total, smc_conn_handshakes_total,
// smc_conn_bytes_total), as each side's kernel would count them; what the
// wire does not carry has no series.
func TestWireStandsInForKernel(t *testing.T) {
	for _, tc := range []struct {
		file       string
		want, none []string
	}{
		{"decline-nordma.pcap", []string{
			`smc_conn_fallbacks_total{side="client"} 1`, `smc_conn_fallbacks_total{side="server"} 1`,
			`smc_conn_handshakes_total{side="client",tech="smcr"} 0`,
		}, []string{"smc_conn_handshake_errors_total", "smc_conn_buffer_usage_bytes", `tech="smcd",direction`}},
		{"pingpong.pcap", []string{
			`smc_conn_fallbacks_total{side="client"} 0`,
			`smc_conn_handshakes_total{side="client",tech="smcr"} 1`, `smc_conn_handshakes_total{side="server",tech="smcr"} 1`,
			`smc_conn_bytes_total{direction="tx",tech="smcr"} 32000`,
		}, nil},
	} {
		checkWireExposition(t, "../samples/"+tc.file, tc.want, tc.none)
	}
}

// TestANCKCredits: an ANCK link with credits (testdata/anck, cut before
// its group ends) exports each direction's credits and its starved spells;
// an upstream link has none of these series.
func TestANCKCredits(t *testing.T) {
	frames, lt := testutil.ReadFrames(t, "../testdata/anck/credits-starved.pcap")
	p := testutil.WriteFrames(t, "credits-starved-cut.pcap", lt, frames[:3000])
	for _, tc := range []struct {
		file       string
		want, none []string
	}{
		{p, []string{`smc_link_credits_starved_total{dir="S->C",lgr="0x100",link="1"} 1`,
			`smc_link_credits_starved_total{dir="C->S",lgr="0x100",link="1"} 0`, `smc_link_credits{dir="S->C",lgr="0x100",link="1"}`,
			`smc_link_credits_starved_seconds_total{dir="S->C",lgr="0x100",link="1"} 0.25`}, nil},
		{"../samples/multilink.pcap", nil, []string{"smc_link_credits"}},
	} {
		checkWireExposition(t, tc.file, tc.want, tc.none)
	}
}

// checkWireExposition replays file as smctop -r does and checks that the
// exposition has each of want and none of none.
func checkWireExposition(t *testing.T, file string, want, none []string) {
	t.Helper()
	var l Latest
	l.Set(monitortest.Replayed(t, file).Refresh(), time.Millisecond)
	out := scrape(t, &l)
	for _, x := range want {
		if !strings.Contains(out, x) {
			t.Errorf("%s: exposition lacks %s:\n%s", file, x, smcSeries(out))
		}
	}
	for _, x := range none {
		if strings.Contains(out, x) {
			t.Errorf("%s: exposition has %s, which the wire does not carry", file, x)
		}
	}
}

// TestSilentLinkSeries: silent-link.pcap frames 30-210 (before the
// DELETE_LINK that names it, adoptDeleted in track) join a link
// whose peer went silent (its TEST_LINK never acknowledged): the link is
// listed (smc_link_info) and counted as UNKNOWN in its group, with no
// smc_link_up or smc_link_state series (absent, not 0: nothing says
// whether it is up).
func TestSilentLinkSeries(t *testing.T) {
	frames, lt := testutil.ReadFrames(t, "../samples/silent-link.pcap")
	p := testutil.WriteFrames(t, "window.pcap", lt, frames[29:210])
	checkWireExposition(t, p, []string{
		`smc_link_info{device="",gid="",lgr="wire-lgr:2",link="qp-/0x11"`,
		`smc_lgr_links{lgr="wire-lgr:2",state="UNKNOWN"} 1`,
		`smc_lgr_links{lgr="wire-lgr:2",state="ACTIVE"} 0`,
	}, []string{`smc_link_up{lgr="wire-lgr:2"`, `smc_link_state{lgr="wire-lgr:2"`})
}

// scripted is a Source that returns its snapshots one per scrape.
type scripted struct{ snaps []monitor.Snapshot }

func (s *scripted) Snapshot() (monitor.Snapshot, time.Duration) {
	out := s.snaps[0]
	s.snaps = s.snaps[1:]
	return out, 0
}

// TestExpertFindingsNeverFall: a wire finding taken back (the tracker's
// count one lower: a damaged request the responder took) leaves
// smc_expert_findings_total where it was, which Prometheus would read as a
// reset; a replay begun again (fewer frames) begins it again.
func TestExpertFindingsNeverFall(t *testing.T) {
	snap := func(frames int, icrc uint64) monitor.Snapshot {
		return monitor.Snapshot{
			Sources: []monitor.Source{{Name: monitor.SourceWireName, Available: true, Frames: frames}},
			Expert: []monitor.ExpertCount{{ID: monitor.FindingID(expert.BadICRC), Severity: monitor.Severity(expert.Error),
				Source: monitor.FindingSource(expert.FromWire), Count: icrc}},
		}
	}
	src := &scripted{snaps: []monitor.Snapshot{snap(100, 3), snap(200, 2), snap(300, 4), snap(10, 1)}}
	r := Registry(src)
	for i, want := range []float64{3, 3, 4, 1} {
		mfs, err := r.Gather()
		if err != nil {
			t.Fatal(err)
		}
		got := -1.0
		for _, mf := range mfs {
			if mf.GetName() == "smc_expert_findings_total" {
				got = mf.GetMetric()[0].GetCounter().GetValue()
			}
		}
		if got != want {
			t.Errorf("scrape %d: roce.icrc.bad %v, want %v", i+1, got, want)
		}
	}
}
