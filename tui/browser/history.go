package browser

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// HistoryFile is where smcdump -I keeps the filters applied, so that ↑ in
// the filter bar finds them after a restart: smcscope/filter-history in
// the user's configuration directory ($XDG_CONFIG_HOME, else ~/.config).
// It is "" when there is no such directory.
func HistoryFile() string {
	dir, err := os.UserConfigDir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "smcscope", "filter-history")
}

// loadHistory reads a history file, one filter a line, oldest first; a
// missing file is an empty history.
func loadHistory(path string) ([]string, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var h []string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); l != "" {
			h = append(h, l)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return h[max(0, len(h)-maxHistory):], nil
}

// saveHistory writes h to path (saveFile).
func saveHistory(path string, h []string) error {
	return saveFile(path, ".filter-history-*", strings.Join(h, "\n")+"\n")
}

// saveFile writes text to path through a file renamed over it, so that
// two browsers saving at once leave one whole file, not a mix; pattern
// names the temporary file.
func saveFile(path, pattern, text string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), pattern)
	if err != nil {
		return err
	}
	_, err = tmp.WriteString(text)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}
