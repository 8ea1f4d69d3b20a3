package probe

import (
	"errors"
	"flag"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestParseSizes(t *testing.T) {
	tests := []struct {
		in   string
		want []int
		err  string
	}{
		{in: "64", want: []int{64}},
		{in: "8192,64,1024", want: []int{64, 1024, 8192}},
		{in: "64-65536", want: []int{64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536}},
		{in: "4-4", want: []int{4}},
		{in: "64,64-256,100", want: []int{64, 100, 128, 256}},
		{in: "4", want: []int{4}},
		{in: "3", err: "outside"},
		{in: "0", err: "outside"},
		{in: "-64", err: `"-64" is not a size`},
		{in: "100-200", err: "powers of two"},
		{in: "256-64", err: "powers of two"},
		{in: "64,", err: `"" is not a size`},
		{in: "x", err: `"x" is not a size`},
		{in: "67108865", err: "outside"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseSizes(tt.in)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("ParseSizes(%q) = %v, %v; want error with %q", tt.in, got, err, tt.err)
				}
				return
			}
			if err != nil || !slices.Equal(got, tt.want) {
				t.Fatalf("ParseSizes(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
			}
		})
	}
}

func TestParseArgs(t *testing.T) {
	tests := []struct {
		name  string
		args  string
		check func(t *testing.T, o Options)
		err   string
	}{
		{name: "server defaults", args: "-s", check: func(t *testing.T, o Options) {
			if !o.Server || o.TCPOnly || o.Port != 5000 || o.TCPPort != 5001 || o.Proto != ProtoSMC || o.MaxConns != DefaultMaxConns || o.Listen != netip.IPv4Unspecified() {
				t.Errorf("%+v", o)
			}
		}},
		{name: "server tcp only", args: "-s --tcp -p 7000 --tcp-port 0", check: func(t *testing.T, o Options) {
			if !o.TCPOnly || o.Port != 7000 || o.TCPPort != 0 {
				t.Errorf("%+v", o)
			}
		}},
		{name: "server kernel-chosen port", args: "-s -p 0", check: func(t *testing.T, o Options) {
			if o.Port != 0 || o.TCPPort != 0 {
				t.Errorf("%+v", o)
			}
		}},
		{name: "server proto tcp means tcp only", args: "-s --proto tcp", check: func(t *testing.T, o Options) {
			if !o.TCPOnly {
				t.Errorf("TCPOnly not set")
			}
		}},
		{name: "host first then flags", args: "10.10.0.1:6000 -n 500 -m 64,1024 --require smc", check: func(t *testing.T, o Options) {
			if o.Host != "10.10.0.1" || o.Port != 6000 || o.TCPPort != 6001 || o.Count != 500 || !slices.Equal(o.Sizes, []int{64, 1024}) || o.Require != "smc" {
				t.Errorf("%+v", o)
			}
		}},
		{name: "flags around host", args: "-n 5 server.example -P 4 --compare tcp -o json", check: func(t *testing.T, o Options) {
			if o.Host != "server.example" || o.Port != 5000 || o.Parallel != 4 || !slices.Equal(o.Compare, []Proto{ProtoTCP}) || o.Output != "json" || o.Count != 5 {
				t.Errorf("%+v", o)
			}
		}},
		{name: "ipv6 bracketed", args: "[fd00:10::1]:5000", check: func(t *testing.T, o Options) {
			if o.Host != "fd00:10::1" || o.Port != 5000 {
				t.Errorf("%+v", o)
			}
		}},
		{name: "ipv6 bare", args: "fd00:10::1 -p 7", check: func(t *testing.T, o Options) {
			if o.Host != "fd00:10::1" || o.Port != 7 {
				t.Errorf("%+v", o)
			}
		}},
		{name: "seconds and durations", args: "h -t 2.5 -i 1ms", check: func(t *testing.T, o Options) {
			if o.Duration != 2500*time.Millisecond || o.Interval != time.Millisecond {
				t.Errorf("%+v", o)
			}
		}},
		{name: "compare with tcp proto is a no-op", args: "h --proto tcp --compare tcp", check: func(t *testing.T, o Options) {
			if len(o.Compare) != 0 || o.Proto != ProtoTCP {
				t.Errorf("%+v", o)
			}
		}},
		{name: "three-way compare", args: "h --compare tcp,ipproto,smc,tcp", check: func(t *testing.T, o Options) {
			if !slices.Equal(o.Compare, []Proto{ProtoTCP, ProtoIPPROTO}) {
				t.Errorf("Compare = %v, want [tcp ipproto]", o.Compare)
			}
		}},
		{name: "bad compare", args: "h --compare udp", err: "--compare"},
		{name: "ipproto", args: "h --proto ipproto --check", check: func(t *testing.T, o Options) {
			if o.Proto != ProtoIPPROTO || !o.Check {
				t.Errorf("%+v", o)
			}
		}},
		{name: "no host", args: "-n 5", err: "exactly one HOST"},
		{name: "two hosts", args: "a b", err: "exactly one HOST"},
		{name: "server with host", args: "-s a", err: "no HOST"},
		{name: "tcp flag on client", args: "a --tcp", err: "server flag"},
		{name: "bad proto", args: "a --proto udp", err: "unknown protocol"},
		{name: "bad port", args: "-p 70000 a", err: "not a port"},
		{name: "bad host port", args: "a:x", err: "HOST[:PORT]"},
		{name: "client port 0", args: "a -p 0", err: "not a port"},
		{name: "bad size", args: "a -m 2", err: "-m"},
		{name: "bad duration", args: "a -t -1", err: "-t"},
		{name: "bad require", args: "a --require rdma", err: "--require"},
		{name: "require smc over tcp", args: "a --require smc --proto tcp", err: "never succeed"},
		{name: "bad output", args: "a -o xml", err: "-o"},
		{name: "zero parallel", args: "a -P 0", err: "-P"},
		{name: "unknown flag", args: "a --bogus", err: "bogus"},
		{name: "server zero conns", args: "-s --max-conns 0", err: "max-conns"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, err := ParseArgs(strings.Fields(tt.args))
			if tt.err != "" {
				if !errors.Is(err, ErrUsage) || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want ErrUsage mentioning %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, o)
		})
	}
	if _, err := ParseArgs([]string{"-h"}); !errors.Is(err, flag.ErrHelp) {
		t.Errorf("-h: %v, want flag.ErrHelp", err)
	}
}

// TestUsageErrorsOneLine: a bad flag value is one line that names the flag
// and the value as given, with no usage text (that is for -h alone);
// -m -1 used to say `size "": not a number`, -n abc to print 68 lines of
// usage before its error.
func TestUsageErrorsOneLine(t *testing.T) {
	for _, c := range []struct{ args, want string }{
		{"h -n abc", `-n "abc": not a whole number`},
		{"h -n 0", `-n 0: want at least 1`},
		{"h -P -2", `-P -2: want at least 1`},
		{"h -m -1", `-m "-1": "-1" is not a size (a number of bytes from 4 to 67108864, N,M,... or LO-HI)`},
		{"h -m 2", `-m "2": size 2 outside [4, 67108864]`},
		{"h -m 64,x", `-m "64,x": "x" is not a size (a number of bytes from 4 to 67108864, N,M,... or LO-HI)`},
		{"h --warmup x", `--warmup "x": not a whole number`},
		{"h --timeout 0s", `--timeout 0s: want a duration above 0`},
		{"h --timeout soon", `--timeout "soon": not a duration (e.g. 5s, 250ms)`},
		{"-s --max-conns 0", `--max-conns 0: want at least 1`},
		{"-s --max-msg 2", `--max-msg 2: want at least 4`},
		{"-s --idle 0s", `--idle 0s: want a duration above 0`},
		{"-s --request-timeout -1s", `--request-timeout -1s: want a duration above 0`},
		{"-s -p x", `-p "x": not a whole number`},
		{"h --bogus", `unknown flag --bogus; try 'smcping --help'`},
		{"h -n", `flag -n needs a value; try 'smcping --help'`},
	} {
		_, err := ParseArgs(strings.Fields(c.args))
		if err == nil || err.Error() != c.want || !errors.Is(err, ErrUsage) {
			t.Errorf("%s: %v, want %q", c.args, err, c.want)
		}
	}
	if _, err := ParseArgs([]string{"-h"}); !errors.Is(err, flag.ErrHelp) {
		t.Errorf("-h: %v, want flag.ErrHelp", err)
	}
}
