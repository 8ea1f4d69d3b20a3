package metrics

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/smcscope/smcscope/internal/testutil"
	"github.com/smcscope/smcscope/internal/testutil/crafted"
	"github.com/smcscope/smcscope/monitor"
	"github.com/smcscope/smcscope/monitor/monitortest"
	"github.com/smcscope/smcscope/smcnl"
)

// host is one exporter a real Prometheus scrapes: a Monitor over recorded
// kernel state and a sysfs tree, refreshed on every scrape as the headless
// exporter does.
type host struct {
	name string
	src  Source
	addr string
}

// copyTree copies a directory tree (a sysfs fixture a test then changes).
func copyTree(t *testing.T, from string) string {
	t.Helper()
	to := t.TempDir()
	if err := os.CopyFS(to, os.DirFS(from)); err != nil {
		t.Fatal(err)
	}
	return to
}

// switchKernel replays one recording, then another once flipped: the
// host before and after its failover.
type switchKernel struct {
	before, after monitor.Kernel
	flipped       atomic.Bool
}

func (k *switchKernel) cur() monitor.Kernel {
	if k.flipped.Load() {
		return k.after
	}
	return k.before
}
func (k *switchKernel) Sockets() ([]smcnl.Socket, error)            { return k.cur().Sockets() }
func (k *switchKernel) LinkGroupsR() ([]smcnl.LinkGroupR, error)    { return k.cur().LinkGroupsR() }
func (k *switchKernel) LinkGroupsD() ([]smcnl.LinkGroupD, error)    { return k.cur().LinkGroupsD() }
func (k *switchKernel) DevicesR() ([]smcnl.Device, error)           { return k.cur().DevicesR() }
func (k *switchKernel) Stats() (smcnl.Stats, error)                 { return k.cur().Stats() }
func (k *switchKernel) FallbackStats() (smcnl.FallbackStats, error) { return k.cur().FallbackStats() }
func (k *switchKernel) HSLimitation() (bool, error)                 { return k.cur().HSLimitation() }
func (k *switchKernel) SysInfo() (smcnl.SysInfo, error)             { return k.cur().SysInfo() }
func (k *switchKernel) DevicesD() ([]smcnl.Device, error)           { return k.cur().DevicesD() }
func (k *switchKernel) UEIDs() ([]string, error)                    { return k.cur().UEIDs() }
func (k *switchKernel) SEID() (smcnl.SEID, error)                   { return k.cur().SEID() }
func (k *switchKernel) PNETIDs() ([]smcnl.PNETEntry, error)         { return k.cur().PNETIDs() }
func (k *switchKernel) Close() error                                { return nil }

// burstKernel is a declining server whose fallbacks and handshake errors
// grow by 10 on every read: a fallback burst.
type burstKernel struct {
	monitor.Kernel
	n atomic.Uint64
}

func (k *burstKernel) FallbackStats() (smcnl.FallbackStats, error) {
	f, err := k.Kernel.FallbackStats()
	n := k.n.Add(10)
	f.ServerTotal += n
	for i := range f.Server {
		f.Server[i].Count += uint16(n)
	}
	return f, err
}

func (k *burstKernel) Stats() (smcnl.Stats, error) {
	s, err := k.Kernel.Stats()
	s.ServerHSErrCount += k.n.Load()
	return s, err
}

// moving bumps error counters of a sysfs tree on every read: several
// error counters on one port (the case a rule over several metric names
// could not evaluate).
type moving struct {
	files []string
	step  int // per bump; 7 when 0
	mu    sync.Mutex
	n     int
}

func (m *moving) bump(t *testing.T) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.n += max(m.step, 7)
	for _, f := range m.files {
		if err := os.WriteFile(f, []byte(strconv.Itoa(100+m.n)+"\n"), 0o644); err != nil {
			t.Error(err)
		}
	}
}

// refreshing refreshes m on every scrape, after hook.
type refreshing struct {
	m    *monitor.Monitor
	hook func()
}

func (r refreshing) Snapshot() (monitor.Snapshot, time.Duration) {
	if r.hook != nil {
		r.hook()
	}
	start := time.Now()
	s := r.m.Refresh()
	return s, time.Since(start)
}

func replayKernel(t *testing.T, rec string) monitor.Kernel {
	t.Helper()
	k, err := monitor.ReplayKernel("../smcnl/testdata/" + rec)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// serve runs an exporter on loopback for the test's life.
func serve(t *testing.T, src Source) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: Handler(src, nil), ReadHeaderTimeout: 5 * time.Second}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String()
}

// promQuery asks the server's HTTP API and decodes its answer's data.
func promQuery(addr, path string, q url.Values, into any) error {
	resp, err := http.Get("http://" + addr + path + "?" + q.Encode())
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	var env struct {
		Status string          `json:"status"`
		Error  string          `json:"error"`
		Data   json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(b, &env); err != nil {
		return fmt.Errorf("%s: %w: %s", path, err, b)
	}
	if env.Status != "success" {
		return fmt.Errorf("%s %v: HTTP %d %s: %s", path, q, resp.StatusCode, env.Status, env.Error)
	}
	return json.Unmarshal(env.Data, into)
}

// instant runs an instant query and returns its result vector.
func instant(addr, query string) ([]json.RawMessage, error) {
	var data struct {
		Result []json.RawMessage `json:"result"`
	}
	err := promQuery(addr, "/api/v1/query", url.Values{"query": {query}}, &data)
	return data.Result, err
}

type promRule struct {
	Name      string `json:"name"`
	Health    string `json:"health"`
	LastError string `json:"lastError"`
	Type      string `json:"type"`
}

type promAlert struct {
	Labels map[string]string `json:"labels"`
	State  string            `json:"state"`
}

// TestPrometheusAlertsAndDashboard runs the real Prometheus server (the
// Debian package) on loopback over seven exporters shaped like real hosts:
// one that loses a link in a failover while several error counters of one
// port move, one whose SMC port goes down, one with a fallback burst and
// handshake errors, a healthy one (two links, counters still), one with
// a counter file that reads "N/A", one whose port's CNPs and ECN marks
// rise by thousands a second (congestion, no error), and smctop -r of a
// capture with bad ICRCs. It loads deploy/prometheus's rules
// and asserts every rule evaluates (health ok), each alert fires on the
// host made to trigger it and on no other, and every Grafana panel's
// expression answers without error and with data.
//
// The rules are loaded as shipped except their `for:` durations, set to 0s:
// the test waits for the expressions to hold, not for minutes to pass.
func TestPrometheusAlertsAndDashboard(t *testing.T) {
	testutil.NeedTool(t, "prometheus") // skip before the exporters start
	sys := "../rdmastats/testdata/sys"
	ib := "class/infiniband"

	// failover: the lab's multilink client, before and after eth1 went down.
	fsys := copyTree(t, sys)
	mv := &moving{files: []string{
		filepath.Join(fsys, ib, "mlx5_0/ports/1/hw_counters/out_of_sequence"),
		filepath.Join(fsys, ib, "mlx5_0/ports/1/hw_counters/packet_seq_err"),
	}}
	sk := &switchKernel{before: replayKernel(t, "multilink-client-before"), after: replayKernel(t, "multilink-client-after")}
	failover := monitor.New(monitor.Options{Kernel: sk, SysfsRoot: fsys})
	// portdown: the same client whose rxe0 port (SMC's) reads DOWN.
	dsys := copyTree(t, sys)
	if err := os.WriteFile(filepath.Join(dsys, ib, "rxe0/ports/1/state"), []byte("1: DOWN\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	portdown := monitor.New(monitor.Options{Kernel: replayKernel(t, "multilink-client-before"), SysfsRoot: dsys})
	burst := monitor.New(monitor.Options{Kernel: &burstKernel{Kernel: replayKernel(t, "decline-nordma-server-done")}})
	healthy := monitor.New(monitor.Options{Kernel: replayKernel(t, "multilink-client-before"), SysfsRoot: sys})
	// broken: one counter file reads "N/A"; every other series stays.
	bsys := copyTree(t, sys)
	if err := os.WriteFile(filepath.Join(bsys, ib, "rxe0/ports/1/hw_counters/rdma_sends"), []byte("N/A\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	broken := monitor.New(monitor.Options{Kernel: replayKernel(t, "multilink-client-before"), SysfsRoot: bsys})
	// congested: DCQCN holding a port back, its CNPs and ECN marks rising
	// by thousands a second (scraped every second); no other counter moves.
	csys := copyTree(t, sys)
	cnp := &moving{step: 5000, files: []string{
		filepath.Join(csys, ib, "mlx5_0/ports/1/hw_counters/np_cnp_sent"),
		filepath.Join(csys, ib, "mlx5_0/ports/1/hw_counters/np_ecn_marked_roce_packets"),
	}}
	congested := monitor.New(monitor.Options{Kernel: replayKernel(t, "multilink-client-before"), SysfsRoot: csys})
	// wire: smctop -r of a capture with bad ICRCs, read only when the
	// failover host's link goes down, so its error findings go from 0 to
	// their count while Prometheus watches.
	w, err := monitor.OpenWire(crafted.ExpertVector(t, "bad-icrc").Build(t), "", "", 0)
	if err != nil {
		t.Fatal(err)
	}
	wire := monitor.New(monitor.Options{Wire: w})
	// late: a capture that starts after its link group was set up and
	// stops before its end (the lab's pingpong, frames 1500 to 3000): one
	// link seen, whether the group has another not known, so no
	// smc_lgr_redundant and no alert.
	frames, lt := testutil.ReadFrames(t, "../testdata/reference/pingpong.pcap")
	late := monitortest.Replayed(t, testutil.WriteFrames(t, "late.pcap", lt, frames[1499:3000]))
	// silent: a capture that joins a link whose peer went silent
	// (silent-link.pcap frames 30-210, before the DELETE_LINK that names the
	// link: its TEST_LINK never acknowledged):
	// whether the link is up is not known, so no smc_link_up, no
	// SMCLinkDown, and the fleet's record has it at -1.
	frames, lt = testutil.ReadFrames(t, "../samples/silent-link.pcap")
	silent := monitortest.Replayed(t, testutil.WriteFrames(t, "silent.pcap", lt, frames[29:210]))
	for _, m := range []*monitor.Monitor{failover, portdown, burst, healthy, broken, wire, congested} {
		t.Cleanup(func() { m.Close() })
	}
	hosts := []host{
		{name: "failover", src: refreshing{m: failover, hook: func() { mv.bump(t) }}},
		{name: "portdown", src: refreshing{m: portdown}},
		{name: "burst", src: refreshing{m: burst}},
		{name: "healthy", src: refreshing{m: healthy}},
		{name: "broken", src: refreshing{m: broken}},
		{name: "wire", src: refreshing{m: wire}},
		{name: "congested", src: refreshing{m: congested, hook: func() { cnp.bump(t) }}},
		{name: "late", src: refreshing{m: late}},
		{name: "silent", src: refreshing{m: silent}},
	}
	var targets []string
	byAddr, addrs := map[string]string{}, map[string]string{}
	addrOf := func(name string) string { return addrs[name] }
	for i := range hosts {
		hosts[i].addr = serve(t, hosts[i].src)
		byAddr[hosts[i].addr] = hosts[i].name
		addrs[hosts[i].name] = hosts[i].addr
		targets = append(targets, fmt.Sprintf("      - targets: ['%s']\n        labels: {host: %s}\n", hosts[i].addr, hosts[i].name))
	}

	dir := t.TempDir()
	rules, err := os.ReadFile("../deploy/prometheus/smc-rules.yml")
	if err != nil {
		t.Fatal(err)
	}
	rules = regexp.MustCompile(`(?m)^(\s+for:) \S+$`).ReplaceAll(rules, []byte("$1 0s"))
	if err := os.WriteFile(filepath.Join(dir, "smc-rules.yml"), rules, 0o644); err != nil {
		t.Fatal(err)
	}
	// The fleet's recording rules, evaluated every second here (30 s as
	// shipped): the dashboard's fleet row reads them.
	fleetRules, err := os.ReadFile("../deploy/prometheus/smc-fleet-rules.yml")
	if err != nil {
		t.Fatal(err)
	}
	fleetRules = regexp.MustCompile(`(?m)^(\s+interval:) \S+$`).ReplaceAll(fleetRules, []byte("$1 1s"))
	if err := os.WriteFile(filepath.Join(dir, "smc-fleet-rules.yml"), fleetRules, 0o644); err != nil {
		t.Fatal(err)
	}
	conf := "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\nrule_files: [smc-rules.yml, smc-fleet-rules.yml]\nscrape_configs:\n  - job_name: smc\n    static_configs:\n" + strings.Join(targets, "")
	addr, plog := testutil.Prometheus(t, dir, conf)

	// wait polls cond until it holds or the deadline passes; the server
	// scrapes and evaluates every second, so this is waiting for events.
	wait := func(what string, d time.Duration, cond func() (bool, string)) {
		t.Helper()
		deadline := time.Now().Add(d)
		for {
			ok, state := cond()
			if ok {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: not within %v; last state: %s\nPrometheus log:\n%s", what, d, state, plog.String())
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	rulesOK := func() (bool, string) {
		var data struct {
			Groups []struct {
				Rules []promRule `json:"rules"`
			} `json:"groups"`
		}
		if err := promQuery(addr, "/api/v1/rules", nil, &data); err != nil {
			return false, err.Error()
		}
		var bad []string
		n := 0
		for _, g := range data.Groups {
			for _, r := range g.Rules {
				n++
				if r.Health != "ok" {
					bad = append(bad, fmt.Sprintf("%s: %s %s", r.Name, r.Health, r.LastError))
				}
			}
		}
		return n > 0 && len(bad) == 0, fmt.Sprintf("%d rules, not ok: %v", n, bad)
	}
	up := func() (bool, string) {
		res, err := instant(addr, `count by (instance) (count_over_time(smc_exporter_snapshot_duration_seconds[1m]) >= 3)`)
		return err == nil && len(res) == len(hosts), fmt.Sprintf("%d hosts: %s %v", len(res), res, err)
	}
	wait("every host scraped three times", 60*time.Second, up)
	wait("every rule evaluated with health ok", 30*time.Second, rulesOK)
	sk.flipped.Store(true) // eth1 goes down on the failover host
	if err := w.Run(context.Background()); err != nil {
		t.Fatal(err)
	}

	type want struct{ alert, host, extra string }
	wants := []want{
		{"SMCLinkDown", "failover", `link=2`},
		{"SMCLinkGroupWithoutRedundancy", "failover", `lgr=0x100`},
		{"RoCEErrorCountersMoving", "failover", `device=mlx5_0`},
		{"RoCECongestion", "congested", `device=mlx5_0`},
		{"RNICPortDown", "portdown", `device=rxe0`},
		{"SMCFallbackRate", "burst", ``},
		{"SMCHandshakeErrors", "burst", ``},
		{"SMCExpertErrorFindings", "wire", `finding=roce.icrc.bad`},
	}
	var firing map[string]bool
	alerts := func() (bool, string) {
		var data struct {
			Alerts []promAlert `json:"alerts"`
		}
		if err := promQuery(addr, "/api/v1/alerts", nil, &data); err != nil {
			return false, err.Error()
		}
		firing = map[string]bool{}
		var all []string
		for _, a := range data.Alerts {
			if a.State != "firing" {
				continue
			}
			var ls []string
			for k, v := range a.Labels {
				ls = append(ls, k+"="+v)
			}
			all = append(all, a.Labels["alertname"]+"{"+strings.Join(ls, ",")+"}")
			// Rules that aggregate by instance keep no other target label.
			h := byAddr[a.Labels["instance"]]
			firing[a.Labels["alertname"]+"/"+h] = true
			for _, w := range wants {
				if a.Labels["alertname"] == w.alert && h == w.host && (w.extra == "" || strings.Contains(","+strings.Join(ls, ",")+",", ","+w.extra+",")) {
					firing[w.alert+"/"+w.host+"/match"] = true
				}
			}
		}
		for _, w := range wants {
			if !firing[w.alert+"/"+w.host+"/match"] {
				return false, "firing: " + strings.Join(all, " ")
			}
		}
		return true, ""
	}
	wait("every alert firing on the host made to trigger it", 60*time.Second, alerts)
	for _, w := range wants {
		for _, h := range hosts {
			if h.name != w.host && firing[w.alert+"/"+h.name] {
				t.Errorf("%s fires on %s too", w.alert, h.name)
			}
		}
	}
	if ok, state := rulesOK(); !ok {
		t.Errorf("after the alerts: %s", state)
	}
	// The late capture's group: in the fleet's record, its redundancy
	// not known (-1); none of its series says 0.
	wait("the late capture's group in the fleet record", 30*time.Second, func() (bool, string) {
		res, err := instant(addr, fmt.Sprintf(`instance_lgr:smc_lgr_connections:with_role_redundant{instance=%q}`, addrOf("late")))
		return err == nil && len(res) == 1 && strings.Contains(string(res[0]), `"redundant":"-1"`), fmt.Sprintf("%s %v", res, err)
	})
	if res, err := instant(addr, `smc_lgr_redundant{host="late"}`); err != nil || len(res) != 0 {
		t.Errorf("late capture: smc_lgr_redundant %v %v, want no series", res, err)
	}
	// The silent link: in the fleet's record at -1 with no state; no
	// up or state series of its own.
	wait("the silent link in the fleet record", 30*time.Second, func() (bool, string) {
		res, err := instant(addr, fmt.Sprintf(`instance_lgr_link:smc_link_up:with_info_state{instance=%q,link="qp-/0x11"}`, addrOf("silent")))
		return err == nil && len(res) == 1 && strings.Contains(string(res[0]), `"-1"`) && !strings.Contains(string(res[0]), `"state"`), fmt.Sprintf("%s %v", res, err)
	})
	for _, q := range []string{`smc_link_up{host="silent",link="qp-/0x11"}`, `smc_link_state{host="silent",link="qp-/0x11"}`} {
		if res, err := instant(addr, q); err != nil || len(res) != 0 {
			t.Errorf("silent link: %s %v %v, want no series", q, res, err)
		}
	}
	for _, q := range []string{`smc_rnic_port_up{host="broken"}`, `smc_rnic_port_smc_links{host="broken"}`, `smc_rnic_rdma_recvs_total{host="broken"}`} {
		if res, err := instant(addr, q); err != nil || len(res) == 0 {
			t.Errorf("host with a broken counter file: %s: %v %v", q, res, err)
		}
	}

	// The dashboard: every panel's expression through the query API.
	for _, p := range dashboard(t).Panels {
		for _, tg := range p.Targets {
			expr := strings.ReplaceAll(tg.Expr, "$instance", ".*")
			res, err := instant(addr, expr)
			if err != nil {
				t.Errorf("panel %q: %v", p.Title, err)
				continue
			}
			if len(res) == 0 {
				t.Errorf("panel %q: %s has no data over the fixtures", p.Title, expr)
			}
		}
	}
}
