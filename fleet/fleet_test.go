package fleet

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/smcscope/smcscope/internal/testutil"
	"github.com/smcscope/smcscope/metrics"
	"github.com/smcscope/smcscope/monitor"
)

// exporter serves /metrics of one recorded host, refreshed per scrape as
// smctop --listen --no-tui does.
func exporter(t *testing.T, rec string, addrs ...string) string {
	t.Helper()
	k, err := monitor.ReplayKernel("../smcnl/testdata/" + rec)
	if err != nil {
		t.Fatal(err)
	}
	var as []netip.Addr
	for _, a := range addrs {
		as = append(as, netip.MustParseAddr(a))
	}
	m := monitor.New(monitor.Options{Kernel: k, Addrs: func() []netip.Addr { return as }})
	t.Cleanup(func() { m.Close() })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: metrics.Handler(metrics.Refreshing{M: m}, nil), ReadHeaderTimeout: 5 * time.Second}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String()
}

// prometheus runs the Debian server on loopback scraping targets every
// second and returns its URL once every target was scraped twice.
func prometheus(t *testing.T, targets ...string) string {
	t.Helper()
	var tg []string
	for _, a := range targets {
		tg = append(tg, "'"+a+"'")
	}
	conf := fmt.Sprintf("global:\n  scrape_interval: 1s\nscrape_configs:\n  - job_name: smc\n    static_configs:\n      - targets: [%s]\n", strings.Join(tg, ", "))
	addr, log := testutil.Prometheus(t, t.TempDir(), conf)
	url := "http://" + addr
	c := &Client{URL: url}
	deadline := time.Now().Add(60 * time.Second)
	for {
		r, err := c.Query(context.Background(), `count(count_over_time(smc_build_info[1m]) >= 2)`)
		if err == nil && len(r) == 1 && int(r[0].Value) == len(targets) {
			return url
		}
		if time.Now().After(deadline) {
			t.Fatalf("Prometheus did not scrape every target twice in 60 s (%v %v); its log:\n%s", r, err, log.String())
		}
		time.Sleep(200 * time.Millisecond) // polling the server for an event
	}
}

// TestFleetJoin: a real Prometheus scrapes two exporters replaying the
// lab's recordings of the multilink client (two links) and its server (one
// link left, at the end of the run). smctop's fleet view joins the two
// halves of the link group (the client's link 1 is the server's link 1 by
// their link user IDs and GIDs) and sees the asymmetry.
func TestFleetJoin(t *testing.T) {
	client := exporter(t, "multilink-client-before")
	server := exporter(t, "multilink-server-done")
	url := prometheus(t, client, server)
	s := Read(context.Background(), &Client{URL: url})
	if s.Error != "" {
		t.Fatal(s.Error)
	}
	if len(s.Hosts) != 2 {
		t.Fatalf("%d hosts: %+v", len(s.Hosts), s.Hosts)
	}
	for _, h := range s.Hosts {
		if !h.Up {
			t.Errorf("%s not up", h.Instance)
		}
	}
	var joined *Group
	for i, g := range s.LinkGroups {
		if g.Client != nil && g.Server != nil {
			joined = &s.LinkGroups[i]
		}
	}
	if joined == nil {
		t.Fatalf("no link group joined across hosts: %+v", s.LinkGroups)
	}
	if joined.Client.Instance != client || joined.Server.Instance != server || joined.Client.LGR != "0x100" || joined.Server.LGR != "0x100" {
		t.Errorf("joined %+v / %+v", joined.Client, joined.Server)
	}
	if !joined.Asymmetric || joined.Client.Active() != 2 || joined.Server.Active() != 1 {
		t.Errorf("asymmetry: client %d active links, server %d, asymmetric %v", joined.Client.Active(), joined.Server.Active(), joined.Asymmetric)
	}
}

// TestFleetDecline: the declining server (no RoCE device; addresses as its
// interfaces would give them) and its client, each replayed by an
// exporter: the fleet view says the server declined the client, with the
// server's reason (NOSMCRDEV, and its own count of it) and what the client
// sees (PEERDECL). The lab runs its scenarios on the same addresses, so
// this pair has a Prometheus of its own.
func TestFleetDecline(t *testing.T) {
	dclient := exporter(t, "decline-nordma-client-active")
	dserver := exporter(t, "decline-nordma-server-done", "10.10.0.1")
	s := Read(context.Background(), &Client{URL: prometheus(t, dclient, dserver)})
	if s.Error != "" {
		t.Fatal(s.Error)
	}
	if len(s.Declines) != 1 {
		t.Fatalf("declines %+v", s.Declines)
	}
	d := s.Declines[0]
	if d.Decliner != dserver || d.Declined != dclient || d.Reason != "NOSMCRDEV" || d.DeclinedReason != "PEERDECL" || d.DeclinedConns != 1 || d.DeclinerTotal != 1 {
		t.Errorf("decline %+v", d)
	}
}

// TestFleetDown: a Prometheus that does not answer is a snapshot that says
// so, within the client's timeout; a target that stops answering is a host
// that is down, the worst first.
func TestFleetDown(t *testing.T) {
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }))
	defer slow.Close()
	start := time.Now()
	s := Read(context.Background(), &Client{URL: slow.URL, Timeout: 200 * time.Millisecond})
	if s.Error == "" || time.Since(start) > 5*time.Second {
		t.Errorf("an unanswering server: error %q after %v", s.Error, time.Since(start))
	}
	s = build(Snapshot{}, map[string][]Sample{
		qExporters: {{Labels: map[string]string{"instance": "a:9714"}, Value: 1}, {Labels: map[string]string{"instance": "b:9714"}, Value: 0}},
	})
	if len(s.Hosts) != 2 || s.Hosts[0].Instance != "b:9714" || s.Hosts[0].Up {
		t.Errorf("hosts %+v: the down one first", s.Hosts)
	}
}

// BenchmarkRefresh1000 is one refresh of the fleet view over 1,000 hosts,
// each with two link groups of two links and a few fallbacks, from
// recorded answers of a Prometheus API (an httptest server): the queries,
// the decoding and the joins.
func BenchmarkRefresh1000(b *testing.B) {
	answers := fleetAnswers(1000)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(answers[r.URL.Query().Get("query")])
	}))
	defer srv.Close()
	c := &Client{URL: srv.URL}
	b.ResetTimer()
	for range b.N {
		s := Read(context.Background(), c)
		if s.Error != "" || len(s.Hosts) != 1000 || len(s.LinkGroups) != 1000 {
			b.Fatalf("%s: %d hosts, %d groups", s.Error, len(s.Hosts), len(s.LinkGroups))
		}
	}
}

// fleetAnswers builds the API's answers for n hosts in pairs: host 2i is
// the client and 2i+1 the server of two link groups.
func fleetAnswers(n int) map[string][]byte {
	series := map[string][]string{}
	add := func(q, value string, labels ...string) {
		var kv []string
		for i := 0; i < len(labels); i += 2 {
			kv = append(kv, fmt.Sprintf("%q:%q", labels[i], labels[i+1]))
		}
		series[q] = append(series[q], fmt.Sprintf(`{"metric":{%s},"value":[1795336493.9,%q]}`, strings.Join(kv, ","), value))
	}
	for h := range n {
		inst := fmt.Sprintf("host%04d:9714", h)
		ip := fmt.Sprintf("10.%d.%d.1", h/256, h%256)
		peer := h ^ 1
		add(qExporters, "1", "instance", inst)
		add(qHost, "1", "instance", inst, "hostname", fmt.Sprintf("host%04d", h), "addresses", ip)
		for _, m := range []string{"SMC-R", "SMC-D", "fallback", "pending"} {
			add(qSockets, "3", "instance", inst, "mode", m)
		}
		add(qFallRate, "0.5", "instance", inst)
		add(qHSRate, "0", "instance", inst)
		role := map[bool]string{true: "client", false: "server"}[h%2 == 0]
		for g := range 2 {
			lgr := fmt.Sprintf("0x%x", 0x100*(g+1))
			add(qLGR, "1", "instance", inst, "lgr", lgr, "role", role, "kind", "SMC-R")
			add(qLGRConns, "4", "instance", inst, "lgr", lgr)
			add(qRedundant, "1", "instance", inst, "lgr", lgr)
			for l := 1; l <= 2; l++ {
				uid := func(host int) string { return fmt.Sprintf("%06x%02x", host*4+g, l) }
				gid := func(host int) string { return fmt.Sprintf("::ffff:10.%d.%d.%d", host/256, host%256, l) }
				link := fmt.Sprint(l)
				add(qLinks, "1", "instance", inst, "lgr", lgr, "link", link, "uid", uid(h), "peer_uid", uid(peer), "gid", gid(h), "peer_gid", gid(peer), "device", "mlx5_0", "port", "1")
				add(qLinkUp, "1", "instance", inst, "lgr", lgr, "link", link)
				add(qLinkState, "1", "instance", inst, "lgr", lgr, "link", link, "state", "ACTIVE")
			}
		}
		add(qFallbacks, "2", "instance", inst, "reason", "PEERDECL", "peer_diagnosis", "NOSMCRDEV", "peer", fmt.Sprintf("10.%d.%d.1", peer/256, peer%256))
		add(qReasons, "7", "instance", inst, "reason", "NOSMCRDEV")
	}
	out := map[string][]byte{}
	for _, q := range []string{qExporters, qHost, qSockets, qFallRate, qHSRate, qSourceOff, qLGR, qLGRConns, qRedundant, qLinks, qLinkUp, qLinkState, qFallbacks, qReasons} {
		out[q] = []byte(`{"status":"success","data":{"resultType":"vector","result":[` + strings.Join(series[q], ",") + `]}}`)
	}
	return out
}

// TestSmctopPrometheus: smctop --prometheus --once prints the same fleet,
// as JSON and as text.
func TestSmctopPrometheus(t *testing.T) {
	client := exporter(t, "multilink-client-before")
	server := exporter(t, "multilink-server-done")
	url := prometheus(t, client, server)
	bin := testutil.GoBuild(t, "../cmd/smctop", "smctop")
	out, err := exec.Command(bin, "--prometheus", url, "--once", "-o", "json").Output()
	if err != nil {
		t.Fatalf("smctop --prometheus: %v", err)
	}
	var s Snapshot
	if err := json.Unmarshal(out, &s); err != nil {
		t.Fatal(err)
	}
	if len(s.Hosts) != 2 || len(s.LinkGroups) != 1 || s.LinkGroups[0].Client == nil || s.LinkGroups[0].Server == nil {
		t.Errorf("fleet %+v", s)
	}
	text, err := exec.Command(bin, "--prometheus", url, "--once").Output()
	if err != nil || !strings.Contains(string(text), "asymmetric: 2 active links / 1") {
		t.Errorf("text: %v\n%s", err, text)
	}
	if out, err := exec.Command(bin, "--prometheus", "127.0.0.1:9090", "--once").CombinedOutput(); err == nil || !strings.Contains(string(out), "want the server's URL") {
		t.Errorf("a URL without scheme: %v %s", err, out)
	}
}

// l makes a sample's labels from key, value pairs.
func l(kv ...string) map[string]string {
	m := map[string]string{}
	for i := 0; i < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return m
}

// TestDeclineAmbiguousAddress: an address two hosts claim names no host:
// the decliner is shown by its address rather than guessed.
func TestDeclineAmbiguousAddress(t *testing.T) {
	s := build(Snapshot{}, map[string][]Sample{
		qHost:      {{Labels: l("instance", "a", "addresses", "10.0.0.1")}, {Labels: l("instance", "b", "addresses", "10.0.0.1")}, {Labels: l("instance", "c", "addresses", "10.0.0.2")}},
		qFallbacks: {{Labels: l("instance", "c", "reason", "PEERDECL", "peer_diagnosis", "NOSMCRDEV", "peer", "10.0.0.1"), Value: 1}},
	})
	if len(s.Declines) != 1 || s.Declines[0].Decliner != "10.0.0.1 (claimed by several hosts)" || s.Declines[0].Declined != "c" {
		t.Errorf("declines %+v", s.Declines)
	}
}

// TestDeclineEIDMismatch: a decline between two hosts that share no EID
// is marked (smc.fleet.eid_mismatch); sharing a UEID, or a host whose EIDs
// are unknown (no smc_system_info: an older exporter), is not.
func TestDeclineEIDMismatch(t *testing.T) {
	for _, tt := range []struct {
		name     string
		ueids    []Sample
		system   []Sample
		mismatch bool
	}{
		{"disjoint", []Sample{{Labels: l("instance", "a", "ueid", "SMC-LAB-UEID")}}, []Sample{{Labels: l("instance", "a")}, {Labels: l("instance", "b")}}, true},
		{"shared", []Sample{{Labels: l("instance", "a", "ueid", "X")}, {Labels: l("instance", "b", "ueid", "X")}}, []Sample{{Labels: l("instance", "a")}, {Labels: l("instance", "b")}}, false},
		{"unknown", []Sample{{Labels: l("instance", "a", "ueid", "X")}}, []Sample{{Labels: l("instance", "a")}}, false},
	} {
		s := build(Snapshot{}, map[string][]Sample{
			qHost:      {{Labels: l("instance", "a", "addresses", "10.0.0.1")}, {Labels: l("instance", "b", "addresses", "10.0.0.2")}},
			qFallbacks: {{Labels: l("instance", "b", "reason", "PEERDECL", "peer_diagnosis", "NOSMCDEV", "peer", "10.0.0.1"), Value: 1}},
			qUEID:      tt.ueids,
			qSystem:    tt.system,
		})
		if len(s.Declines) != 1 || s.Declines[0].EIDMismatch != tt.mismatch || s.Declines[0].Decliner != "a" {
			t.Errorf("%s: declines %+v", tt.name, s.Declines)
		}
	}
}

// TestFleetNeverUp: a target of the exporters' job that has never answered
// (a port nobody listens on) is a host shown DOWN beside the one that
// answers: the fleet lists every configured target of the job, not only
// those that once exported smc_build_info.
func TestFleetNeverUp(t *testing.T) {
	up := exporter(t, "multilink-client-before", "10.10.0.2")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := ln.Addr().String()
	ln.Close() // nothing listens there any more
	conf := fmt.Sprintf("global:\n  scrape_interval: 1s\nscrape_configs:\n  - job_name: smc\n    static_configs:\n      - targets: ['%s', '%s']\n", up, dead)
	addr, plog := testutil.Prometheus(t, t.TempDir(), conf)
	c := &Client{URL: "http://" + addr}
	deadline := time.Now().Add(60 * time.Second)
	for {
		// Both targets scraped at least once, the live one twice.
		r1, err1 := c.Query(context.Background(), `count(count_over_time(up[1m]) >= 1)`)
		r2, err2 := c.Query(context.Background(), `count(count_over_time(smc_build_info[1m]) >= 2)`)
		if err1 == nil && err2 == nil && len(r1) == 1 && r1[0].Value == 2 && len(r2) == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("Prometheus did not scrape both targets in 60 s; its log:\n%s", plog.String())
		}
		time.Sleep(200 * time.Millisecond) // polling the server for an event
	}
	s := Read(context.Background(), c)
	if s.Error != "" {
		t.Fatal(s.Error)
	}
	got := map[string]bool{}
	for _, h := range s.Hosts {
		got[h.Instance] = h.Up
	}
	if len(got) != 2 || !got[up] || got[dead] {
		t.Errorf("hosts %v: want %s up and %s shown down", got, up, dead)
	}
	if _, ok := got[dead]; !ok {
		t.Errorf("the never-up target %s is not listed", dead)
	}
}
