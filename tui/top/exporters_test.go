package top

import (
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/smcscope/smcscope/fleet"
)

// TestExportersOverTLS: the fleet view reaches a host's exporter behind
// TLS and basic auth with the client of --exporter.config.file (https
// because the file sets a CA), and not without it.
func TestExportersOverTLS(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, p, ok := r.BasicAuth(); !ok || u != "prom" || p != "pw" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		if r.URL.Path != "/snapshot.json" {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write([]byte("{}"))
	}))
	defer srv.Close()
	dir := t.TempDir()
	files := map[string]string{
		"ca.pem": string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})),
		"pw":     "pw\n",
	}
	files["http.yml"] = "tls_config:\n  ca_file: " + filepath.Join(dir, "ca.pem") + "\nbasic_auth:\n  username: prom\n  password_file: " + filepath.Join(dir, "pw") + "\n"
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	hc, tls, err := fleet.HTTPClientFile(filepath.Join(dir, "http.yml"))
	if err != nil || !tls {
		t.Fatalf("HTTPClientFile: tls %v, %v", tls, err)
	}
	instance := strings.TrimPrefix(srv.URL, "https://")
	if ex := (Exporters{Scheme: "https", HTTP: hc}); !ex.answers(instance) {
		t.Errorf("%s over TLS with the user: no answer", ex.url(instance))
	}
	if (Exporters{}).answers(instance) {
		t.Errorf("%s answered plain HTTP without credentials", instance)
	}
}
