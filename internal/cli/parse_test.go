package cli

import (
	"errors"
	"flag"
	"slices"
	"strings"
	"testing"
	"time"
)

// tsharkFlags is a flag set shaped like smcdump's: one-letter booleans and
// value flags, and long ones.
func tsharkFlags() *flag.FlagSet {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	fs.Bool("n", false, "no name resolution")
	fs.Bool("q", false, "quiet")
	fs.Bool("V", false, "verbose")
	fs.String("r", "", "read `FILE`")
	fs.Int("c", 0, "`N` frames")
	fs.String("z", "", "`VIEW`")
	fs.String("Y", "", "`EXPR`")
	fs.Bool("once", false, "one snapshot")
	fs.Func("e", "`OPTION`", func(s string) error {
		if !strings.Contains(s, "=") {
			return errors.New("-e: want A=B")
		}
		return nil
	})
	fs.Duration("interval", time.Second, "`D`")
	return fs
}

// TestExpand: tshark's grouped short options become the flag package's
// syntax; long flags, values that look like flags, negative numbers and
// "--" keep their meaning.
func TestExpand(t *testing.T) {
	for _, tt := range []struct {
		args, want string
	}{
		{"-nr f.pcap", "-n -r=f.pcap"},
		{"-c2", "-c=2"},
		{"-c 2", "-c 2"},
		{"-qz smc,conns", "-q -z=smc,conns"},
		{"-nqVc5", "-n -q -V -c=5"},
		{"-nc=5", "-n -c=5"},
		{"-nV=false", "-n -V=false"},
		{"-r -odd.pcap", "-r -odd.pcap"},
		{"-nr -odd.pcap", "-n -r=-odd.pcap"},
		{"-c -1", "-c -1"},
		{"-c-1", "-c=-1"},
		{"-Y -x", "-Y -x"},
		{"--once --interval 2s", "--once --interval 2s"},
		{"-once -interval=2s", "-once -interval=2s"},
		{"-r - -n", "-r - -n"},
		{"host -n -5 - x", "-n -- host -5 - x"},
		{"-n -- -q -r", "-n -- -q -r"},
		{"-r f --", "-r f"},
	} {
		got, err := Expand(tsharkFlags(), strings.Fields(tt.args))
		if err != nil || strings.Join(got, " ") != tt.want {
			t.Errorf("Expand(%s) = %q, %v; want %q", tt.args, got, err, tt.want)
		}
	}
}

// TestExpandErrors: help, version and every unknown flag are told apart;
// an unknown letter is named within its group.
func TestExpandErrors(t *testing.T) {
	for _, tt := range []struct {
		args string
		want error
		msg  string
	}{
		{"-h", flag.ErrHelp, ""},
		{"-n --help", flag.ErrHelp, ""},
		{"-help", flag.ErrHelp, ""},
		{"--version", ErrVersion, ""},
		{"-r --help", nil, ""}, // --help is the file's name
		{"-Q", nil, "unknown flag -Q; try 'demo --help'"},
		{"-nQ", nil, "unknown flag -Q (in -nQ); try 'demo --help'"},
		{"--onse", nil, "unknown flag --onse; try 'demo --help'"},
		{"--n", nil, ""}, // a one-letter flag with two dashes is still the flag
		{"-nr", nil, "flag -r needs a value (in -nr); try 'demo --help'"},
		{"-r", nil, "flag -r needs a value; try 'demo --help'"},
		{"---x", nil, "bad flag syntax ---x; try 'demo --help'"},
	} {
		_, err := Expand(tsharkFlags(), strings.Fields(tt.args))
		switch {
		case tt.want != nil && !errors.Is(err, tt.want):
			t.Errorf("Expand(%s) = %v, want %v", tt.args, err, tt.want)
		case tt.want == nil && tt.msg == "" && err != nil:
			t.Errorf("Expand(%s) = %v, want no error", tt.args, err)
		case tt.msg != "":
			var ue *UsageError
			if !errors.As(err, &ue) || err.Error() != tt.msg {
				t.Errorf("Expand(%s) = %v, want the usage error %q", tt.args, err, tt.msg)
			}
		}
	}
}

// TestParse: the values land in the flags, positional words stay in
// order, and a bad value is a one-line usage error.
func TestParse(t *testing.T) {
	fs := tsharkFlags()
	if err := Parse(fs, strings.Fields("x -nr f.pcap -c2 y -- -z")); err != nil {
		t.Fatal(err)
	}
	if got := fs.Lookup("r").Value.String() + " " + fs.Lookup("c").Value.String() + " " + fs.Lookup("n").Value.String(); got != "f.pcap 2 true" {
		t.Errorf("-r -c -n = %s, want f.pcap 2 true", got)
	}
	if !slices.Equal(fs.Args(), []string{"x", "y", "-z"}) {
		t.Errorf("positional %q, want x y -z", fs.Args())
	}
	for _, tt := range []struct{ args, want string }{
		{"--interval soon", `--interval "soon": not a duration (e.g. 2s, 500ms); try 'demo --help'`},
		{"-nc x", `-c "x": not a whole number; try 'demo --help'`},
		{"-c 99999999999999999999", `-c "99999999999999999999": out of range; try 'demo --help'`},
		{"-n=maybe", `invalid boolean value "maybe" for -n: parse error; try 'demo --help'`},
		{"-e x", `-e: want A=B; try 'demo --help'`},
	} {
		fs := tsharkFlags()
		err := Parse(fs, strings.Fields(tt.args))
		var ue *UsageError
		if !errors.As(err, &ue) || err.Error() != tt.want {
			t.Errorf("Parse(%s) = %v, want %q", tt.args, err, tt.want)
		}
		if _, ok := fs.Lookup("c").Value.(*checkedValue); ok {
			t.Errorf("Parse(%s) left its error catcher on -c", tt.args)
		}
	}
}
