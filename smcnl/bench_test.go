package smcnl

import (
	"path/filepath"
	"testing"
)

// Parsers on real 6.12 replies. smctop polls these every refresh, so the
// numbers say what a poll of N sockets or link groups costs.

func recordedPayloads(b *testing.B, dir, name string, genl bool) [][]byte {
	b.Helper()
	msgs, err := SplitMessages(mustRead(b, filepath.Join("testdata", dir, name+".bin")))
	if err != nil {
		b.Fatal(err)
	}
	var out [][]byte
	for _, m := range msgs {
		if genl {
			out = append(out, m.Data[4:])
		} else {
			out = append(out, m.Data)
		}
	}
	if len(out) == 0 {
		b.Fatalf("%s/%s: no messages", dir, name)
	}
	return out
}

func BenchmarkParse(b *testing.B) {
	b.Run("Socket/SMCR", func(b *testing.B) {
		p := recordedPayloads(b, "pingpong-client-active", "diag", false)[0]
		b.SetBytes(int64(len(p)))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := ParseSocket(p); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("LinkGroupR", func(b *testing.B) {
		p := recordedPayloads(b, "pingpong-client-active", "links", true)[0]
		b.SetBytes(int64(len(p)))
		b.ReportAllocs()
		for b.Loop() {
			if _, _, err := ParseLinkGroupR(p); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Stats", func(b *testing.B) {
		p := recordedPayloads(b, "pingpong-client-end", "stats", true)[0]
		b.SetBytes(int64(len(p)))
		b.ReportAllocs()
		for b.Loop() {
			if _, _, err := ParseStats(p); err != nil {
				b.Fatal(err)
			}
		}
	})
}
