package rdmastats

import (
	"bufio"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRxeFixtureMatchesLinux checks the hand-built rxe0 tree against the
// dump of a real rxe0 (testdata/rxe0-linux-6.12.txt, made by
// capture-rxe.sh): every real readable file is in the fixture with the
// same content, and the fixture has nothing the real device lacks. The
// only allowed differences are the hw_counters values, which come from
// the end of a ping-pong instead of a fresh device (see testdata/README.md).
func TestRxeFixtureMatchesLinux(t *testing.T) {
	t.Parallel()
	dump, err := os.Open("testdata/rxe0-linux-6.12.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer dump.Close()
	real := make(map[string]string) // readable files only
	sc := bufio.NewScanner(dump)
	for sc.Scan() {
		line, ok := strings.CutPrefix(sc.Text(), "F ./")
		if !ok {
			continue
		}
		path, val, ok := strings.Cut(line, " :: ")
		if !ok {
			t.Fatalf("malformed dump line %q", sc.Text())
		}
		if strings.HasPrefix(path, "power/") || strings.HasPrefix(val, "cat: ") {
			continue // not modelled, or unreadable (EINVAL on unused GID entries)
		}
		real[path] = strings.TrimSuffix(val, "|")
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(real) < 30 {
		t.Fatalf("dump has %d readable files, want the whole device", len(real))
	}
	root := filepath.Join(fixtureRoot, "class/infiniband/rxe0")
	seen := 0
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		want, ok := real[filepath.ToSlash(rel)]
		switch {
		case !ok:
			t.Errorf("fixture has %s, the real rxe0 does not", rel)
		case strings.HasPrefix(rel, "ports/1/hw_counters/") && rel != "ports/1/hw_counters/lifespan":
			// ping-pong values, see README
		case strings.TrimSuffix(string(b), "\n") != want:
			t.Errorf("fixture %s = %q, real rxe0 has %q", rel, b, want)
		}
		seen++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if seen != len(real) {
		t.Errorf("fixture has %d of the %d readable files of the real rxe0", seen, len(real))
	}
}
