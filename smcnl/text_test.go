package smcnl

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/smcscope/smcscope/internal/testutil"
)

// TestKernelText renders every lab recording of testdata/ through
// the Write* functions: the key=value lines smclab prints and the lab's
// verification greps, locked by golden files.
func TestKernelText(t *testing.T) {
	dirs, err := filepath.Glob("testdata/*-*")
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no recordings: %v", err)
	}
	for _, dir := range dirs {
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			continue
		}
		t.Run(filepath.Base(dir), func(t *testing.T) {
			var out bytes.Buffer
			if ss, err := ReplaySockets(dir); err == nil {
				if err := WriteSockets(&out, ss); err != nil {
					t.Fatal(err)
				}
			}
			c, err := Replay(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if rs, err := c.LinkGroupsR(); err == nil {
				ds, _ := c.LinkGroupsD()
				if err := WriteLinkGroups(&out, rs, ds); err != nil {
					t.Fatal(err)
				}
			}
			if ds, err := c.DevicesR(); err == nil {
				if err := WriteDevices(&out, "smcr", ds); err != nil {
					t.Fatal(err)
				}
			}
			if s, err := c.Stats(); err == nil {
				if err := WriteStats(&out, s); err != nil {
					t.Fatal(err)
				}
			}
			if f, err := c.FallbackStats(); err == nil {
				if err := WriteFallbackStats(&out, f); err != nil {
					t.Fatal(err)
				}
			}
			if s, err := c.SysInfo(); err == nil {
				us, _ := c.UEIDs()
				if err := WriteSysInfo(&out, s, us); err != nil {
					t.Fatal(err)
				}
			}
			if !strings.Contains(out.String(), "sysinfo ver=") {
				t.Errorf("no sysinfo line:\n%s", out.String())
			}
			testutil.Golden(t, "kernel", out.Bytes())
		})
	}
}
