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
	var (
		ds appsv1.DaemonSet
		ns corev1.Namespace
		sm monitoringv1.ServiceMonitor
	)
	for i, doc := range bytes.Split(b, []byte("\n---\n")) {
		var meta struct{ Kind, APIVersion string }
		if err := yaml.Unmarshal(doc, &meta); err != nil {
			t.Fatalf("document %d: %v", i, err)
		}
		var obj any
		switch meta.APIVersion + " " + meta.Kind {
		case "v1 Namespace":
			obj = &ns
		case "apps/v1 DaemonSet":
			obj = &ds
		case "v1 Service":
			obj = &corev1.Service{}
		case "monitoring.coreos.com/v1 ServiceMonitor":
			obj = &sm
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
	// What kube-prometheus's node-exporter DaemonSet has and an exporter
	// of the same kind needs (the manifest's comment says why each).
	if strings.HasSuffix(c.Image, ":latest") || !strings.Contains(c.Image, ":") {
		t.Errorf("image %q is not pinned", c.Image)
	}
	if spec.NodeSelector["kubernetes.io/os"] != "linux" || spec.PriorityClassName != "system-node-critical" {
		t.Errorf("nodeSelector %v priorityClassName %q", spec.NodeSelector, spec.PriorityClassName)
	}
	for _, m := range c.VolumeMounts {
		if m.MountPropagation == nil || *m.MountPropagation != corev1.MountPropagationHostToContainer {
			t.Errorf("volume %s: mountPropagation %v, want HostToContainer", m.Name, m.MountPropagation)
		}
	}
	if c.LivenessProbe == nil || c.LivenessProbe.HTTPGet == nil || c.LivenessProbe.HTTPGet.Path == "/metrics" ||
		c.ReadinessProbe == nil || c.ReadinessProbe.HTTPGet.Path == "/metrics" {
		t.Errorf("probes %+v %+v: want a liveness probe, neither on /metrics (a full refresh)", c.LivenessProbe, c.ReadinessProbe)
	}
	if ns.Labels["pod-security.kubernetes.io/enforce"] != "privileged" {
		t.Errorf("namespace labels %v: host namespaces need the privileged pod security level", ns.Labels)
	}
	for _, e := range sm.Spec.Endpoints {
		for _, r := range e.RelabelConfigs {
			if r.TargetLabel == "instance" {
				t.Errorf("the ServiceMonitor rewrites instance (%v): the fleet view drills down to INSTANCE/snapshot.json", r.SourceLabels)
			}
		}
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

// TestContainerImage: deploy/container/Containerfile builds with buildah
// (offline: from scratch, the smctop the tests build), the image runs as
// an unprivileged user, its entry point is smctop's exporter, and its tag
// is the one the DaemonSet runs.
func TestContainerImage(t *testing.T) {
	buildah := testutil.NeedTool(t, "buildah")
	ctx := t.TempDir()
	if err := os.MkdirAll(filepath.Join(ctx, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	bin := testutil.GoBuild(t, "../cmd/smctop", "smctop")
	b, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ctx, "bin", "smctop"), b, 0o755); err != nil {
		t.Fatal(err)
	}
	manifest, err := os.ReadFile("kubernetes/smctop.yaml")
	if err != nil {
		t.Fatal(err)
	}
	image := regexp.MustCompile(`image: (\S+)`).FindSubmatch(manifest)
	if image == nil {
		t.Fatal("no image in the DaemonSet")
	}
	store := t.TempDir()
	common := []string{"--root", filepath.Join(store, "root"), "--runroot", filepath.Join(store, "run"), "--storage-driver", "vfs"}
	build := append(append([]string{}, common...), "bud", "--isolation", "chroot", "-f", "container/Containerfile", "-t", string(image[1]), ctx)
	if out, err := exec.Command(buildah, build...).CombinedOutput(); err != nil {
		t.Fatalf("buildah bud: %v\n%s", err, out)
	}
	out, err := exec.Command(buildah, append(append([]string{}, common...), "inspect", "--type", "image", string(image[1]))...).Output()
	if err != nil {
		t.Fatalf("buildah inspect: %v", err)
	}
	var img struct {
		OCIv1 struct {
			Config struct {
				User       string
				Entrypoint []string
				Cmd        []string
				Labels     map[string]string
			} `json:"config"`
		}
	}
	if err := json.Unmarshal(out, &img); err != nil {
		t.Fatal(err)
	}
	c := img.OCIv1.Config
	if c.User == "" || strings.HasPrefix(c.User, "0") || strings.HasPrefix(c.User, "root") {
		t.Errorf("image user %q: want an unprivileged one", c.User)
	}
	if strings.Join(c.Entrypoint, " ") != "/smctop" || strings.Join(c.Cmd, " ") != "--listen=:9714 --no-tui" {
		t.Errorf("entrypoint %v cmd %v", c.Entrypoint, c.Cmd)
	}
	if c.Labels["org.opencontainers.image.source"] == "" || c.Labels["org.opencontainers.image.version"] == "" {
		t.Errorf("labels %v", c.Labels)
	}
}

// TestREADME: the README stays a newcomer's page (at most 400 lines, the two
// commands a fresh machine needs in it) and every page it links to exists,
// as every page those link to.
func TestREADME(t *testing.T) {
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(b, []byte("\n")); n > 400 {
		t.Errorf("README.md has %d lines, want at most 400 (the rest belongs in docs/)", n)
	}
	for _, want := range []string{"make demo", "make test", "## Install", "## Quick start"} {
		if !bytes.Contains(b, []byte(want)) {
			t.Errorf("README.md lacks %q", want)
		}
	}
	link := regexp.MustCompile(`\]\(([^)#]+)\)`)
	pages := []string{"../README.md"}
	seen := map[string]bool{}
	for len(pages) > 0 {
		p := pages[0]
		pages = pages[1:]
		if seen[p] {
			continue
		}
		seen[p] = true
		text, err := os.ReadFile(p)
		if err != nil {
			t.Errorf("%v", err)
			continue
		}
		for _, m := range link.FindAllSubmatch(text, -1) {
			target := string(m[1])
			if strings.Contains(target, "://") {
				continue
			}
			target = filepath.Join(filepath.Dir(p), target)
			if _, err := os.Stat(target); err != nil {
				t.Errorf("%s links to %s: %v", p, m[1], err)
			} else if strings.HasSuffix(target, ".md") {
				pages = append(pages, target)
			}
		}
	}
}
