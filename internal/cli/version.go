package cli

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
)

// Version is what --version prints: the tool, the module version, the VCS
// revision and time the binary was built from, and the Go that built it,
// all from the build info the linker embedded (nothing to keep in step by
// hand). A binary built without a VCS stamp says so instead of inventing a
// revision.
func Version(tool string) string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return fmt.Sprintf("%s (smcscope): no build information (%s %s/%s)\n", tool, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	}
	return versionOf(tool, bi, runtime.GOOS+"/"+runtime.GOARCH)
}

// versionOf formats bi; platform is GOOS/GOARCH.
func versionOf(tool string, bi *debug.BuildInfo, platform string) string {
	settings := map[string]string{}
	for _, s := range bi.Settings {
		settings[s.Key] = s.Value
	}
	version := bi.Main.Version
	if version == "" {
		version = "(devel)"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s (smcscope) %s\n", tool, version)
	if rev := settings["vcs.revision"]; rev != "" {
		fmt.Fprintf(&b, "revision: %s", rev)
		if settings["vcs.modified"] == "true" {
			b.WriteString(" (modified)")
		}
		b.WriteString("\n")
		if t := settings["vcs.time"]; t != "" {
			fmt.Fprintf(&b, "commit time: %s\n", t)
		}
	} else {
		// go build stamps a git clone's revision, not a git worktree's
		// (cmd/go looks for a .git directory) nor with -buildvcs=false.
		b.WriteString("revision: unknown (no VCS stamp in the build)\n")
	}
	fmt.Fprintf(&b, "go: %s %s\n", bi.GoVersion, platform)
	return b.String()
}
