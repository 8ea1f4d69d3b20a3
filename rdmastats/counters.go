package rdmastats

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Counters maps a counter's sysfs file name (port_rcv_data, rdma_sends,
// np_cnp_sent ...) to its value in base units. A counter the driver does
// not provide has no key, so absent and zero stay different, as procfs's
// *uint64 fields keep them. Names are the kernel's, so they match
// `rdma statistic` and node_exporter; only the unit changes (see UnitOf).
type Counters map[string]uint64

// Get returns a counter and whether the driver provides it.
func (c Counters) Get(name string) (uint64, bool) {
	v, ok := c[name]
	return v, ok
}

// Unit is what a counter counts, after normalisation. Exporters use it to
// pick the metric suffix (_bytes_total, _packets_total, _total).
type Unit uint8

// Units of counters.
const (
	UnitCount   Unit = iota // events: errors, requests, messages
	UnitBytes               // data, already multiplied out of 4-byte words
	UnitPackets             // packets on the wire
	UnitTicks               // port_xmit_wait: sampling ticks with data queued but no credit
)

// String returns the unit as a metric suffix word ("" for plain counts).
func (u Unit) String() string {
	switch u {
	case UnitBytes:
		return "bytes"
	case UnitPackets:
		return "packets"
	case UnitTicks:
		return "ticks"
	}
	return ""
}

// wordCounters are the PMA data counters that count 4-byte words
// (IBA PortCounters PortXmitData/PortRcvData "divided by 4",
// drivers/infiniband/core/sysfs.c). The kernel exposes the raw PMA value.
var wordCounters = map[string]bool{
	"port_xmit_data": true,
	"port_rcv_data":  true,
}

// UnitOf returns the unit of a counter as stored in Counters.
func UnitOf(name string) Unit {
	switch {
	case wordCounters[name], strings.HasSuffix(name, "_bytes"):
		return UnitBytes
	case name == "port_xmit_wait":
		return UnitTicks
	case strings.HasSuffix(name, "_packets"), strings.HasSuffix(name, "_pkts"):
		return UnitPackets
	}
	return UnitCount
}

// notAvailable is what the kernel prints for a PMA counter the port's
// management agent does not implement (ib_core sysfs.c show_pma_counter).
const notAvailable = "N/A (no PMA)"

// lifespanFile sits among hw_counters but is a setting, not a counter: the
// driver caches the counters for this many milliseconds, so reading more
// often than that returns the same values.
const lifespanFile = "lifespan"

// counterDir is the result of reading one counters/ or hw_counters/
// directory. A nil Counters means the directory does not exist, which is
// different from a directory whose every file was unsupported.
type counterDir struct {
	counters Counters
	lifespan time.Duration
}

// readCounters reads every counter file of dir into a map. pma selects
// the PMA normalisation (words to bytes).
func readCounters(dir string, pma bool) (counterDir, error) {
	var c Counters
	found, lifespan, err := walkCounters(dir, pma, func(name string, v uint64) {
		if c == nil {
			c = make(Counters)
		}
		c[name] = v
	})
	if err != nil || !found {
		return counterDir{}, err
	}
	if c == nil {
		c = Counters{} // present but every counter unsupported: not nil
	}
	return counterDir{counters: c, lifespan: lifespan}, nil
}

// walkCounters calls add for every counter file of dir and reports whether
// dir exists. An unsupported counter is left out; a file that exists but
// cannot be read or parsed is an error naming the file. Snapshot uses it
// directly so that a refresh fills one map instead of one per port.
func walkCounters(dir string, pma bool, add func(name string, v uint64)) (found bool, lifespan time.Duration, err error) {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return false, 0, nil
	}
	if err != nil {
		return false, 0, fmt.Errorf("listing counters: %w", err)
	}
	var buf [64]byte // a counter is at most 20 digits; "N/A (no PMA)" fits too
	for _, e := range ents {
		if e.IsDir() {
			continue
		}
		name := e.Name()
		path := filepath.Join(dir, name)
		b, ok, err := readSmall(path, buf[:])
		if err != nil {
			return false, 0, err
		}
		b = bytes.TrimSpace(b)
		if !ok || string(b) == notAvailable {
			continue
		}
		v, err := parseDecimal(b)
		if err != nil {
			return false, 0, fmt.Errorf("failed to parse counter %q: %w", path, err)
		}
		if !pma && name == lifespanFile {
			lifespan = time.Duration(v) * time.Millisecond
			continue
		}
		if pma && wordCounters[name] {
			// 4-byte words to bytes, as procfs and node_exporter do.
			// Overflow would need more than 2^62 words (16 EiB).
			v *= 4
		}
		add(name, v)
	}
	return true, lifespan, nil
}

// readSmall reads a sysfs attribute of at most len(buf) bytes into buf
// without the per-file buffer and stat of os.ReadFile: a refresh reads
// dozens of counters per port. ok is false for unsupported attributes
// (see unsupported).
func readSmall(path string, buf []byte) (b []byte, ok bool, err error) {
	f, err := os.Open(path)
	if err != nil {
		if unsupported(err) {
			return nil, false, nil
		}
		return nil, false, fmt.Errorf("failed to read file %q: %w", path, err)
	}
	defer f.Close()
	n := 0
	for n < len(buf) {
		m, err := f.Read(buf[n:])
		n += m
		if err == io.EOF {
			return buf[:n], true, nil
		}
		if err != nil {
			if unsupported(err) {
				return nil, false, nil
			}
			return nil, false, fmt.Errorf("failed to read file %q: %w", path, err)
		}
		if m == 0 {
			break
		}
	}
	// sysfs returns a whole attribute in one read; a file that fills the
	// buffer is not one of the short attributes read here.
	if n == len(buf) {
		if m, _ := f.Read(buf[:1]); m > 0 {
			return nil, false, fmt.Errorf("file %q: longer than %d bytes", path, len(buf))
		}
	}
	return buf[:n], true, nil
}

// parseDecimal parses an unsigned decimal counter without converting to a
// string first.
func parseDecimal(b []byte) (uint64, error) {
	if len(b) == 0 {
		return 0, errors.New("empty counter")
	}
	var v uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, fmt.Errorf("invalid counter %q", b)
		}
		d := uint64(c - '0')
		if v > (math.MaxUint64-d)/10 {
			return 0, fmt.Errorf("counter %q overflows 64 bits", b)
		}
		v = v*10 + d
	}
	return v, nil
}
