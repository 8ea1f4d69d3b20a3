package deploy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/smcscope/smcscope/internal/testutil"
)

// strict decodes one manifest into its API type, failing on any field the
// type does not have (a misspelt or misplaced key), as the API server's
// strict field validation does.
func strict(doc []byte, into any) error {
	j, err := yaml.YAMLToJSON(doc)
	if err != nil {
		return err
	}
	d := json.NewDecoder(bytes.NewReader(j))
	d.DisallowUnknownFields()
	return d.Decode(into)
}

// TestKubernetesManifests: every document of deploy/kubernetes decodes
// strictly into the Kubernetes (and prometheus-operator) type its kind
// names, and the DaemonSet runs the exporter as the unit does: host
// network and PID namespace, /sys read-only, tracefs, two capabilities,
// the flags smctop takes.
func TestKubernetesManifests(t *testing.T) {
	b, err := os.ReadFile("kubernetes/smctop.yaml")
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	var ds appsv1.DaemonSet
	for i, doc := range bytes.Split(b, []byte("\n---\n")) {
		var meta struct{ Kind, APIVersion string }
		if err := yaml.Unmarshal(doc, &meta); err != nil {
			t.Fatalf("document %d: %v", i, err)
		}
		var obj any
		switch meta.APIVersion + " " + meta.Kind {
		case "v1 Namespace":
			obj = &corev1.Namespace{}
		case "apps/v1 DaemonSet":
			obj = &ds
		case "v1 Service":
			obj = &corev1.Service{}
		case "monitoring.coreos.com/v1 ServiceMonitor":
			obj = &monitoringv1.ServiceMonitor{}
		default:
			t.Fatalf("document %d: unexpected %s %s", i, meta.APIVersion, meta.Kind)
		}
		if err := strict(doc, obj); err != nil {
			t.Errorf("%s: %v", meta.Kind, err)
		}
		kinds[meta.Kind]++
	}
	if fmt.Sprint(kinds) != "map[DaemonSet:1 Namespace:1 Service:1 ServiceMonitor:1]" {
		t.Errorf("kinds %v", kinds)
	}
	spec := ds.Spec.Template.Spec
	c := spec.Containers[0]
	if !spec.HostNetwork || !spec.HostPID || len(c.SecurityContext.Capabilities.Add) != 2 || *c.SecurityContext.AllowPrivilegeEscalation {
		t.Errorf("pod spec %+v", spec)
	}
	if ds.Spec.Selector.MatchLabels["app.kubernetes.io/name"] != ds.Spec.Template.Labels["app.kubernetes.io/name"] {
		t.Error("the DaemonSet's selector does not select its pods")
	}
	// The flags are smctop's: run it with them and -h.
	bin := testutil.GoBuild(t, "../cmd/smctop", "smctop")
	args := append([]string{}, c.Args...)
	for i, a := range args {
		args[i] = strings.NewReplacer("/host/sys", t.TempDir(), "/host/proc", t.TempDir(), "/host/tracing", "").Replace(a)
	}
	args = append(args, "-h")
	if out, err := exec.Command(bin, args...).CombinedOutput(); err != nil {
		t.Errorf("smctop %v: %v\n%s", args, err, out)
	}
}

// TestSystemdUnit: systemd-analyze verify loads the unit (with ExecStart
// pointing at a built smctop), and the unit's command line is one smctop
// takes.
func TestSystemdUnit(t *testing.T) {
	analyze := testutil.NeedTool(t, "systemd-analyze")
	unit, err := os.ReadFile("systemd/smctop.service")
	if err != nil {
		t.Fatal(err)
	}
	bin := testutil.GoBuild(t, "../cmd/smctop", "smctop")
	dir := t.TempDir()
	p := filepath.Join(dir, "smctop.service")
	if err := os.WriteFile(p, bytes.ReplaceAll(unit, []byte("/usr/local/bin/smctop"), []byte(bin)), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(analyze, "verify", "--man=no", p).CombinedOutput(); err != nil || len(bytes.TrimSpace(out)) > 0 {
		t.Errorf("systemd-analyze verify: %v\n%s", err, out)
	}
	// As hardened as node_exporter's units: systemd's own rating of the
	// unit's exposure (0 best, 10 worst) at most 2.0.
	out, err := exec.Command(analyze, "security", "--offline=true", "--no-pager", p).CombinedOutput()
	if err != nil {
		t.Fatalf("systemd-analyze security: %v\n%s", err, out)
	}
	m := regexp.MustCompile(`Overall exposure level for smctop.service: ([0-9.]+)`).FindSubmatch(out)
	if m == nil {
		t.Fatalf("systemd-analyze security: no exposure level in\n%s", out)
	}
	if level, _ := strconv.ParseFloat(string(m[1]), 64); level > 2.0 {
		t.Errorf("the unit's exposure is %.1f, want at most 2.0:\n%s", level, out)
	}
	for _, l := range strings.Split(string(unit), "\n") {
		if cmd, ok := strings.CutPrefix(l, "ExecStart=/usr/local/bin/smctop "); ok {
			if out, err := exec.Command(bin, append(strings.Fields(cmd), "-h")...).CombinedOutput(); err != nil {
				t.Errorf("smctop %s: %v\n%s", cmd, err, out)
			}
		}
	}
}

// TestGoInstall: go install builds the three commands from a clone, as
// README's Install says.
func TestGoInstall(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the three commands")
	}
	bin := t.TempDir()
	cmd := exec.Command("go", "install", "./cmd/smcdump", "./cmd/smctop", "./cmd/smcping")
	cmd.Dir = ".."
	cmd.Env = append(os.Environ(), "GOBIN="+bin, "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go install: %v\n%s", err, out)
	}
	for _, name := range []string{"smcdump", "smctop", "smcping"} {
		if _, err := os.Stat(filepath.Join(bin, name)); err != nil {
			t.Errorf("go install made no %s: %v", name, err)
		}
	}
}
