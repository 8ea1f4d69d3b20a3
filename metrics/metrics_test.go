package metrics

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/smcscope/smcscope/internal/testutil"
	"github.com/smcscope/smcscope/monitor"
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
	srv := httptest.NewServer(Handler(src))
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
	testutil.Golden(t, "multilink-client-before", []byte(out))
	for _, want := range []string{
		`smc_conn_sockets{mode="SMC-R",source="kernel"} 2`,
		`smc_lgr_redundant{lgr="00000100"} 1`,
		`smc_link_info{device="rxe1",lgr="00000100",link="2",netdev="if3",port="1",state="ACTIVE"} 1`,
		`smc_rnic_out_of_sequence_total{device="mlx5_0",health=`,
		`smc_lgr_max_links{lgr="00000100"} 2`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("exposition lacks %s", want)
		}
	}
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
	} {
		if b, err := exec.Command(promtool, args...).CombinedOutput(); err != nil {
			t.Errorf("promtool %s: %v\n%s", strings.Join(args, " "), err, b)
		}
	}
}

// TestDashboard checks that every Grafana expression names only metrics
// the exporter exposes.
func TestDashboard(t *testing.T) {
	b, err := os.ReadFile("../deploy/grafana/smcscope.json")
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	// The SMC-R recording has no fallbacks; the declining server's has.
	exposed := scrape(t, fixture(t)) + scrape(t, fixtureOf(t, "decline-nordma-server-done"))
	if len(d.Panels) == 0 {
		t.Fatal("dashboard has no panels")
	}
	for _, p := range d.Panels {
		for _, tg := range p.Targets {
			for _, f := range strings.FieldsFunc(tg.Expr, func(r rune) bool {
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

// TestPrometheusScrape runs a real Prometheus server on loopback that
// scrapes the exporter on loopback, and asks it for a series.
func TestPrometheusScrape(t *testing.T) {
	prom := testutil.NeedTool(t, "prometheus")
	src := fixture(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: Handler(src), ReadHeaderTimeout: 5 * time.Second}
	go srv.Serve(ln)
	defer srv.Close()
	promLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	promAddr := promLn.Addr().String()
	promLn.Close()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "prometheus.yml")
	conf := fmt.Sprintf("global:\n  scrape_interval: 1s\nscrape_configs:\n  - job_name: smc\n    static_configs:\n      - targets: ['%s']\n", ln.Addr())
	if err := os.WriteFile(cfg, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var log bytes.Buffer
	cmd := exec.CommandContext(ctx, prom, "--config.file="+cfg, "--web.listen-address="+promAddr,
		"--storage.tsdb.path="+filepath.Join(dir, "data"))
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cancel(); _ = cmd.Wait() }()
	deadline := time.Now().Add(60 * time.Second)
	q := "http://" + promAddr + "/api/v1/query?query=smc_lgr_redundant"
	for {
		resp, err := http.Get(q)
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if strings.Contains(string(b), `"lgr":"00000100"`) {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("Prometheus never returned smc_lgr_redundant (last error %v); its log:\n%s", err, log.String())
		}
		time.Sleep(250 * time.Millisecond) // polling the server, not asserting time
	}
}

// TestConcurrentScrapes: promhttp may collect for several scrapes at once;
// nothing in the collectors may be shared unguarded (go test -race).
func TestConcurrentScrapes(t *testing.T) {
	src := fixture(t)
	srv := httptest.NewServer(Handler(src))
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
