package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
)

// Group is a titled list of flags in -h, in the order given: "Input",
// {"r", "i", "f"}. Each tool groups its flags as its users look for them.
type Group struct {
	Title string
	Flags []string
}

// helpFlags are the flags Parse answers itself, listed in every -h, man
// page and completion.
func helpFlags() []flagDoc {
	return []flagDoc{
		{name: "help", usage: "print this help and exit", boolean: true},
		{name: "version", usage: "print the version and build information and exit", boolean: true},
	}
}

// Done is what a main does with Parse's error: nothing when it is nil
// (exit is false); else it prints the help or the version to stdout (exit
// status 0: asking for help is not an error) or the error to stderr as one
// line after the tool's name (status 2).
func Done(err error, p Page, fs *flag.FlagSet, stdout, stderr io.Writer) (code int, exit bool) {
	switch {
	case err == nil:
		return 0, false
	case errors.Is(err, flag.ErrHelp):
		Help(stdout, p, fs)
		return 0, true
	case errors.Is(err, ErrVersion):
		_, _ = io.WriteString(stdout, Version(p.Name))
		return 0, true
	}
	fmt.Fprintf(stderr, "%s: %v\n", p.Name, err)
	return 2, true
}

// Help writes the -h text of p's command: the usage lines, the summary,
// the flags by group, p's notes and where the manual is. It is the same
// layout for every tool; the words are fs's own.
func Help(w io.Writer, p Page, fs *flag.FlagSet) {
	var b strings.Builder
	for i, s := range p.Synopsis {
		lead := "Usage: "
		if i > 0 {
			lead = "   or: "
		}
		lead += p.Name + " "
		b.WriteString(lead + fill(synopsisWords(s), len(lead), 79)[len(lead):] + "\n")
	}
	if p.Summary != "" {
		b.WriteString(strings.ToUpper(p.Summary[:1]) + p.Summary[1:] + ".\n")
	}
	byName := map[string]flagDoc{}
	for _, d := range flagDocs(fs) {
		byName[d.name] = d
	}
	grouped := map[string]bool{}
	for _, g := range p.Groups {
		fmt.Fprintf(&b, "\n%s:\n", g.Title)
		for _, name := range g.Flags {
			if d, ok := byName[name]; ok {
				writeFlag(&b, d)
				grouped[name] = true
			}
		}
	}
	var rest []flagDoc
	for _, d := range flagDocs(fs) {
		if !grouped[d.name] {
			rest = append(rest, d)
		}
	}
	if len(rest) > 0 {
		title := "Flags"
		if len(p.Groups) > 0 {
			title = "Other flags"
		}
		fmt.Fprintf(&b, "\n%s:\n", title)
		for _, d := range rest {
			writeFlag(&b, d)
		}
	}
	b.WriteString("\nHelp:\n")
	for _, d := range helpFlags() {
		writeFlag(&b, d)
	}
	for _, n := range p.Notes {
		b.WriteString("\n" + wrap(n, 0, 79) + "\n")
	}
	fmt.Fprintf(&b, "\nOne-letter flags group, as with getopt: -ab is -a -b, -c2 is -c 2.\nThe manual: man %s.\n", p.Name)
	_, _ = io.WriteString(w, b.String())
}

// helpColumn is where a flag's description starts in -h.
const helpColumn = 24

// writeFlag writes one flag of -h: "  -r FILE", its description wrapped
// from helpColumn, and its default where it has one.
func writeFlag(b *strings.Builder, d flagDoc) {
	spelled := "  " + dash(d.name)
	if d.name == "help" {
		spelled = "  -h, --help"
	}
	if !d.boolean {
		spelled += " " + d.arg
	}
	usage := d.usage
	if def := shownDefault(d); def != "" {
		usage += " (default " + def + ")"
	}
	if len(spelled) > helpColumn-2 {
		b.WriteString(spelled + "\n" + wrap(usage, helpColumn, 79) + "\n")
		return
	}
	text := wrap(usage, helpColumn, 79)
	b.WriteString(spelled + text[len(spelled):] + "\n")
}

// shownDefault is the default a flag's help and man page mention: none
// for a boolean or an empty or zero value, or when the usage says its own.
func shownDefault(d flagDoc) string {
	if d.boolean || d.def == "" || d.def == "0" || d.def == "[]" || strings.Contains(d.usage, "(default ") {
		return ""
	}
	return d.def
}

// synopsisWords splits a usage line into the words a line may break
// between: an optional part ([-T text|json [-e FIELD]...]) stays whole.
func synopsisWords(s string) []string {
	var words []string
	depth, start := 0, -1
	for i, r := range s + " " {
		switch {
		case r == '[':
			depth++
		case r == ']' && depth > 0:
			depth--
		}
		switch {
		case r == ' ' && depth == 0 && start >= 0:
			words, start = append(words, s[start:i]), -1
		case r != ' ' && start < 0:
			start = i
		}
	}
	return words
}

// fill puts words on lines of at most width columns (a longer word has a
// line of its own), each indented by indent spaces.
func fill(words []string, indent, width int) string {
	pad := strings.Repeat(" ", indent)
	line, lines := pad, []string(nil)
	for _, w := range words {
		if len(line) > indent && len(line)+1+len(w) > width {
			lines, line = append(lines, line), pad
		}
		if len(line) > indent {
			line += " "
		}
		line += w
	}
	return strings.Join(append(lines, line), "\n")
}

// wrap fills text into lines of at most width columns, each indented by
// indent spaces (a word longer than a line has a line of its own).
// Newlines in text start new lines; a line that starts with spaces (a list
// in a flag's usage) keeps them and hangs its continuation two further.
func wrap(text string, indent, width int) string {
	var lines []string
	for _, para := range strings.Split(text, "\n") {
		lead := len(para) - len(strings.TrimLeft(para, " "))
		first := strings.Repeat(" ", indent+lead)
		next := first
		if lead > 0 {
			next += "  "
		}
		line, empty := first, true
		for _, w := range strings.Fields(para) {
			if !empty && len(line)+1+len(w) > width {
				lines = append(lines, line)
				line, empty = next, true
			}
			if !empty {
				line += " "
			}
			line, empty = line+w, false
		}
		lines = append(lines, line)
	}
	return strings.Join(lines, "\n")
}

// Check reports what p says about flags fs does not define (a group or a
// completion list naming a flag that is gone) and, when p has groups,
// each flag no group lists: a flag added without its place in -h.
func Check(p Page, fs *flag.FlagSet) error {
	var errs []error
	seen := map[string]bool{}
	for _, g := range p.Groups {
		for _, name := range g.Flags {
			if fs.Lookup(name) == nil {
				errs = append(errs, fmt.Errorf("group %q lists %s, which %s does not define", g.Title, dash(name), p.Name))
			}
			if seen[name] {
				errs = append(errs, fmt.Errorf("%s is in two groups", dash(name)))
			}
			seen[name] = true
		}
	}
	for name := range p.Values {
		if fs.Lookup(name) == nil {
			errs = append(errs, fmt.Errorf("completion words for %s, which %s does not define", dash(name), p.Name))
		}
	}
	if len(p.Groups) > 0 {
		fs.VisitAll(func(f *flag.Flag) {
			if !seen[f.Name] {
				errs = append(errs, fmt.Errorf("%s is in no group of %s -h", dash(f.Name), p.Name))
			}
		})
	}
	return errors.Join(errs...)
}
