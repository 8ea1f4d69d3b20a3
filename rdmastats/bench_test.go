package rdmastats

import (
	"testing"
	"time"
)

// BenchmarkSnapshot is one smctop refresh: every counter of the two
// fixture devices (65 files).
func BenchmarkSnapshot(b *testing.B) {
	f := NewFS(fixtureRoot)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := f.Snapshot(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDevices is the full read with GID tables, done once at start
// and when the device list changes.
func BenchmarkDevices(b *testing.B) {
	f := NewFS(fixtureRoot)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := f.Devices(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkRates(b *testing.B) {
	s, err := NewFS(fixtureRoot).Snapshot()
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Rates(s, s, time.Second); err != nil {
			b.Fatal(err)
		}
	}
}
