package metrics

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/smcscope/smcscope/fleet"
	"github.com/smcscope/smcscope/internal/testutil"
)

// serveTLS runs the exporter over the fixture with a web config of TLS
// and one basic-auth user (prom, password "s3cret" stored as bcrypt, as
// node_exporter's users write it); it returns the base URL and the TLS
// files.
func serveTLS(t *testing.T, o ServeOptions) (string, testutil.TLSFiles) {
	t.Helper()
	files := testutil.NewTLSFiles(t)
	cfg := testutil.WebConfig(t, files, "prom", "s3cret")
	if err := CheckWebConfig(cfg); err != nil {
		t.Fatal(err)
	}
	o.WebConfigFile = cfg
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, ln, fixture(t), o) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return "https://" + ln.Addr().String(), files
}

func get(t *testing.T, c *http.Client, url, user, pass string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if user != "" {
		req.SetBasicAuth(user, pass)
	}
	resp, err := c.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestServeTLSAndAuth: with --web.config.file every endpoint is served
// over TLS only and to the configured user only (exporter-toolkit, as
// node_exporter), and --web.disable-snapshot takes /snapshot.json away.
func TestServeTLSAndAuth(t *testing.T) {
	base, files := serveTLS(t, ServeOptions{})
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: files.Pool}}}
	for _, path := range []string{"/metrics", "/snapshot.json", "/"} {
		if code, body := get(t, c, base+path, "prom", "s3cret"); code != http.StatusOK {
			t.Errorf("%s with the user: HTTP %d %.100s", path, code, body)
		}
		if code, _ := get(t, c, base+path, "", ""); code != http.StatusUnauthorized {
			t.Errorf("%s without credentials: HTTP %d, want 401", path, code)
		}
		if code, _ := get(t, c, base+path, "prom", "wrong"); code != http.StatusUnauthorized {
			t.Errorf("%s with a wrong password: HTTP %d, want 401", path, code)
		}
	}
	if code, body := get(t, c, base+"/metrics", "prom", "s3cret"); !strings.Contains(body, "smc_build_info") {
		t.Errorf("/metrics: HTTP %d without smc_build_info", code)
	}
	// Plain HTTP to the TLS port gets no metrics.
	if code, body := get(t, http.DefaultClient, "http"+strings.TrimPrefix(base, "https")+"/metrics", "prom", "s3cret"); code == http.StatusOK {
		t.Errorf("plain HTTP served: %.100s", body)
	}
	// A client that does not trust the CA is refused by its own TLS.
	if code, body := get(t, http.DefaultClient, base+"/metrics", "prom", "s3cret"); code != 0 || !strings.Contains(body, "certificate") {
		t.Errorf("untrusted CA: HTTP %d %.100s", code, body)
	}

	base, files = serveTLS(t, ServeOptions{NoSnapshot: true})
	c = &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: files.Pool}}}
	if code, _ := get(t, c, base+"/snapshot.json", "prom", "s3cret"); code != http.StatusNotFound {
		t.Errorf("/snapshot.json disabled: HTTP %d, want 404", code)
	}
	if code, _ := get(t, c, base+"/metrics", "prom", "s3cret"); code != http.StatusOK {
		t.Errorf("/metrics with the snapshot off: HTTP %d", code)
	}
}

// TestClientConfig: smctop's client (fleet.HTTPClient, for --prometheus
// and --remote) reaches that exporter from a Prometheus http_config file
// (the CA, basic auth with a password file), or from credentials in the
// URL, which it then never shows.
func TestClientConfig(t *testing.T) {
	base, files := serveTLS(t, ServeOptions{})
	dir := t.TempDir()
	pw := filepath.Join(dir, "pw")
	if err := os.WriteFile(pw, []byte("s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	withAuth := filepath.Join(dir, "http.yml")
	caOnly := filepath.Join(dir, "ca.yml")
	for p, y := range map[string]string{
		withAuth: fmt.Sprintf("tls_config:\n  ca_file: %s\nbasic_auth:\n  username: prom\n  password_file: %s\n", files.CA, pw),
		caOnly:   fmt.Sprintf("tls_config:\n  ca_file: %s\n", files.CA),
	} {
		if err := os.WriteFile(p, []byte(y), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		url, file string
		want      int
	}{
		{base, withAuth, http.StatusOK},
		{strings.Replace(base, "https://", "https://prom:s3cret@", 1), caOnly, http.StatusOK},
		{base, caOnly, http.StatusUnauthorized},
	} {
		hc, shown, err := fleet.HTTPClient(tc.url, tc.file)
		if err != nil {
			t.Fatal(err)
		}
		if shown != base {
			t.Errorf("%s is shown as %s, want %s", tc.url, shown, base)
		}
		if code, body := get(t, hc, shown+"/snapshot.json", "", ""); code != tc.want {
			t.Errorf("%s with %s: HTTP %d %.100s, want %d", tc.url, filepath.Base(tc.file), code, body, tc.want)
		}
	}
	if _, _, err := fleet.HTTPClient(base, filepath.Join(dir, "missing.yml")); err == nil || !strings.Contains(err.Error(), "--http.config.file") {
		t.Errorf("a missing config file: %v", err)
	}
}

// TestWebConfigExample: the shipped example web config is one the
// exporter takes (with the test's certificates in place of its paths).
func TestWebConfigExample(t *testing.T) {
	b, err := os.ReadFile("../deploy/prometheus/web-config.example.yml")
	if err != nil {
		t.Fatal(err)
	}
	files := testutil.NewTLSFiles(t)
	y := strings.NewReplacer("/etc/smcscope/tls/smctop.crt", files.Cert, "/etc/smcscope/tls/smctop.key", files.Key).Replace(string(b))
	p := filepath.Join(t.TempDir(), "web.yml")
	if err := os.WriteFile(p, []byte(y), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := CheckWebConfig(p); err != nil {
		t.Fatal(err)
	}
}
