package cli

import (
	"flag"
	"os"
	"path/filepath"
)

// CheckDeployed runs Check and CheckCompletion over the completion files
// of p's command in dir (deploy/completions: NAME.bash, _NAME, NAME.fish),
// for the commands' tests.
func CheckDeployed(dir string, p Page, fs *flag.FlagSet) []error {
	errs := []error{Check(p, fs)}
	for shell, file := range map[string]string{"bash": p.Name + ".bash", "zsh": "_" + p.Name, "fish": p.Name + ".fish"} {
		b, err := os.ReadFile(filepath.Join(dir, file))
		if err != nil {
			errs = append(errs, err)
			continue
		}
		errs = append(errs, CheckCompletion(shell, string(b), p, fs))
	}
	return errs
}
