package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// ErrVersion is returned by Parse for --version: the caller prints
// Version to stdout and exits 0.
var ErrVersion = errors.New("version requested")

// UsageError is a command line the flag set does not take: an unknown
// flag, a flag without its value, a value its flag cannot read. Its text
// is one line that says where the help is, as GNU tools do; the tool
// prints it after its name and exits 2.
type UsageError struct {
	Tool string // the flag set's name: "smcdump"
	Msg  string // "unknown flag -Q"
}

func (e *UsageError) Error() string {
	return fmt.Sprintf("%s; try '%s --help'", e.Msg, e.Tool)
}

// Parse reads args (os.Args[1:]) into fs the way the three tools all do:
// Expand first, so tshark's grouped short options work, then the flag
// package. The positional arguments are fs.Args() afterwards. It returns
// flag.ErrHelp for -h/--help and ErrVersion for --version (unless fs
// defines those names), or a *UsageError for anything fs does not take.
// It prints nothing: the caller (Done) writes help to stdout and an error
// to stderr as one line after the tool's name.
func Parse(fs *flag.FlagSet, args []string) error {
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	goArgs, err := Expand(fs, args)
	if err != nil {
		return err
	}
	// The flag package says "invalid value ... parse error"; the value's
	// own error, caught on its way, says which flag and what it wants.
	var bad *UsageError
	fs.VisitAll(func(f *flag.Flag) {
		if isBool(f) {
			return
		}
		orig, name := f.Value, f.Name
		f.Value = &checkedValue{Value: orig, failed: func(s string, err error) {
			if bad == nil {
				bad = &UsageError{Tool: fs.Name(), Msg: valueProblem(orig, name, s, err)}
			}
		}}
	})
	err = fs.Parse(goArgs)
	fs.VisitAll(func(f *flag.Flag) {
		if c, ok := f.Value.(*checkedValue); ok {
			f.Value = c.Value
		}
	})
	switch {
	case bad != nil:
		return bad
	case err != nil:
		return &UsageError{Tool: fs.Name(), Msg: err.Error()}
	}
	return nil
}

// checkedValue passes a failed Set to failed.
type checkedValue struct {
	flag.Value
	failed func(s string, err error)
}

func (c *checkedValue) Set(s string) error {
	err := c.Value.Set(s)
	if err != nil {
		c.failed(s, err)
	}
	return err
}

// valueProblem says what was wrong with s for flag name, from the type v
// holds. A value of the tool's own type (flag.Func) says it in its error,
// which names the flag, as smcdump's -E does.
func valueProblem(v flag.Value, name, s string, err error) string {
	g, ok := v.(flag.Getter)
	if !ok {
		return err.Error()
	}
	problem := err.Error()
	switch g.Get().(type) {
	case int, int64:
		problem = "not a whole number"
		if _, err := strconv.ParseInt(s, 0, 64); errors.Is(err, strconv.ErrRange) {
			problem = "out of range"
		}
	case uint, uint64:
		problem = "not a whole number ≥ 0"
		if _, err := strconv.ParseUint(s, 0, 64); errors.Is(err, strconv.ErrRange) {
			problem = "out of range"
		}
	case float64:
		problem = "not a number"
	case time.Duration:
		problem = "not a duration (e.g. 2s, 500ms)"
	}
	return fmt.Sprintf("%s %q: %s", dash(name), s, problem)
}

// Expand rewrites a command line into the flag package's syntax, from
// fs's own definitions, so that what it accepts cannot drift from the
// flags:
//
//   - A word naming a flag of fs (-r, --count, -once, -c=2) is kept, and
//     so is the value that follows a flag that takes one, whatever it
//     looks like: -r -odd.pcap, -c -1, -Y -x.
//   - Otherwise a word of one dash whose first letter is a one-letter flag
//     is a group, as getopt reads one (tshark's -nr f.pcap, -c2, -qz
//     smc,conns): the letters of boolean flags each set their flag, and
//     the first letter that takes a value takes the rest of the word (an
//     '=' before it is dropped: -c=2 and -nc=2 alike) or, when nothing is
//     left, the next word.
//   - Words that are not flags (a HOST, "-" for stdin, a negative number)
//     are moved after a "--", in their order, with everything after the
//     caller's own "--", so they may come between flags and a positional
//     word is never read as a flag.
//   - -h, -help and --help give flag.ErrHelp, -version and --version give
//     ErrVersion, where fs does not define them; any other unknown flag,
//     and a flag without its value, give a *UsageError naming it.
//
// Long flags are never split: --once is a flag, --onse an error.
func Expand(fs *flag.FlagSet, args []string) ([]string, error) {
	var flags, pos []string
	usage := func(format string, a ...any) error {
		return &UsageError{Tool: fs.Name(), Msg: fmt.Sprintf(format, a...)}
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			pos = append(pos, args[i+1:]...)
			break
		}
		if len(a) < 2 || a[0] != '-' || isNumber(a) && fs.Lookup(a[1:]) == nil {
			pos = append(pos, a)
			continue
		}
		dashes := 1
		if a[1] == '-' {
			dashes = 2
		}
		body := a[dashes:]
		name, _, hasValue := strings.Cut(body, "=")
		if name == "" || name[0] == '-' {
			return nil, usage("bad flag syntax %s", a)
		}
		if f := fs.Lookup(name); f != nil {
			flags = append(flags, a)
			if !hasValue && !isBool(f) {
				if i+1 == len(args) {
					return nil, usage("flag %s needs a value", a)
				}
				i++
				flags = append(flags, args[i])
			}
			continue
		}
		switch name {
		case "h", "help":
			return nil, flag.ErrHelp
		case "version":
			return nil, ErrVersion
		}
		first, _ := utf8.DecodeRuneInString(body)
		if dashes == 2 || fs.Lookup(string(first)) == nil {
			return nil, usage("unknown flag %s", a)
		}
		for j := 0; j < len(body); {
			r, n := utf8.DecodeRuneInString(body[j:])
			letter := string(r)
			f := fs.Lookup(letter)
			if f == nil {
				return nil, usage("unknown flag -%s (in %s)", letter, a)
			}
			j += n
			if isBool(f) {
				if strings.HasPrefix(body[j:], "=") {
					// -na=false: the last letter's explicit value.
					flags = append(flags, "-"+letter+body[j:])
					break
				}
				flags = append(flags, "-"+letter)
				continue
			}
			value, explicit := strings.CutPrefix(body[j:], "=")
			if value == "" && !explicit {
				if i+1 == len(args) {
					return nil, usage("flag -%s needs a value (in %s)", letter, a)
				}
				i++
				value = args[i]
			}
			// One word, so that a value starting with '-' stays a value.
			flags = append(flags, "-"+letter+"="+value)
			break
		}
	}
	if len(pos) > 0 {
		flags = append(append(flags, "--"), pos...)
	}
	return flags, nil
}

// isBool says whether f is set by its name alone (-n), as the flag
// package decides it.
func isBool(f *flag.Flag) bool {
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// isNumber says whether a word is a negative number (-1, -0.5), which is
// an argument, not a flag; -nan and -inf are letters.
func isNumber(s string) bool {
	if len(s) < 2 || (s[1] < '0' || s[1] > '9') && s[1] != '.' {
		return false
	}
	_, err := strconv.ParseFloat(s, 64)
	return err == nil
}
