package main

import (
	"bytes"
	"errors"
	"testing"
)

func TestRunUsage(t *testing.T) {
	for _, args := range [][]string{
		nil,
		{"nope"},
		{"diag", "-x"},
		{"stats", "-json", "extra"},
		{"wait-lgr-gone"},
		{"wait-lgr-gone", "-1"},
		{"wait-lgr-gone", "-keep", "x", "5"},
		{"wait-lgr-gone", "-keep", "1"},
		{"wait-smctop", "f"},
		{"wait-smctop", "f", "x"},
		{"wait-smctop", "f", "5", "-links"},
		{"wait-smctop", "f", "5", "-links", "-1"},
		{"wait-smctop", "f", "5", "-pid", "0"},
		{"wait-smctop", "f", "5", "-event", "/tracepoint"},
		{"wait-smctop", "f", "5", "-nope", "1"},
		{"record"},
		{"pnet"},
		{"pnet", "add", "N"},
		{"pnet", "add", "N", "eth0", "rxe0", "0"},
		{"pnet", "list", "-x"},
		{"pnet", "del"},
	} {
		var out bytes.Buffer
		err := run(args, &out)
		var ue usageError
		if !errors.As(err, &ue) {
			t.Errorf("run(%q) = %v, want a usage error", args, err)
		}
	}
}
