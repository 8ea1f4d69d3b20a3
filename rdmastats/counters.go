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
	"strconv"
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

// MarshalText writes the unit as String does: JSON reads "bytes", and
// nothing for a plain count (omitempty).
func (u Unit) MarshalText() ([]byte, error) { return []byte(u.String()), nil }

// UnmarshalText reads what MarshalText writes.
func (u *Unit) UnmarshalText(b []byte) error {
	for _, x := range []Unit{UnitCount, UnitBytes, UnitPackets, UnitTicks} {
		if x.String() == string(b) {
			*u = x
			return nil
		}
	}
	return fmt.Errorf("unknown counter unit %q", b)
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

// CounterError is a counter file that exists but could not be read or
// parsed (a driver printing "N/A", a file that fails to read). The counter
// is left out, as an unsupported one is, and every other counter and
// device is still read: one bad file must not hide every RNIC. Key.Name
// is empty when the directory itself could not be listed.
type CounterError struct {
	Key
	Err error
}

// Error names the counter as "rxe0/1 hw_counters/rdma_sends: <why>"
// (device-wide counters without the port).
func (e *CounterError) Error() string {
	var b strings.Builder
	b.WriteString(e.Device)
	if e.Port != 0 {
		b.WriteByte('/')
		b.WriteString(strconv.Itoa(e.Port))
	}
	b.WriteByte(' ')
	b.WriteString(e.Source.String())
	if e.Name != "" {
		b.WriteByte('/')
		b.WriteString(e.Name)
	}
	b.WriteString(": ")
	b.WriteString(e.Err.Error())
	return b.String()
}

// Unwrap returns the cause (a *fs.PathError's errno, or the parse error).
func (e *CounterError) Unwrap() error { return e.Err }

// counterDir is the result of reading one counters/ or hw_counters/
// directory. A nil Counters means the directory does not exist, which is
// different from a directory whose every file was unsupported.
type counterDir struct {
	counters Counters
	lifespan time.Duration
}

// readCounters reads every counter file of dir into a map; k names the
// directory (Name empty) and selects the PMA normalisation (words to
// bytes) for SourcePMA. Broken counters go to bad.
func readCounters(dir string, k Key, bad func(*CounterError)) counterDir {
	var c Counters
	found, lifespan := walkCounters(dir, k, func(name string, v uint64) {
		if c == nil {
			c = make(Counters)
		}
		c[name] = v
	}, bad)
	if !found {
		return counterDir{}
	}
	if c == nil {
		c = Counters{} // present but every counter unsupported: not nil
	}
	return counterDir{counters: c, lifespan: lifespan}
}

// walkCounters calls add for every counter file of dir and reports whether
// dir exists. An unsupported counter is left out; a file that exists but
// cannot be read or parsed is left out too and passed to bad, keyed by k
// with its name. Snapshot uses it directly so that a refresh fills one map
// instead of one per port.
func walkCounters(dir string, k Key, add func(name string, v uint64), bad func(*CounterError)) (found bool, lifespan time.Duration) {
	pma := k.Source == SourcePMA
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return false, 0
	}
	if err != nil {
		bad(&CounterError{Key: k, Err: unreadable(err)})
		return false, 0
	}
	var buf [64]byte // a counter is at most 20 digits; "N/A (no PMA)" fits too
	for _, e := range ents {
		if e.IsDir() {
			continue
		}
		name := e.Name()
		b, ok, err := readRaw(filepath.Join(dir, name), buf[:])
		var v uint64
		if err == nil && ok {
			b = bytes.TrimSpace(b)
			if string(b) == notAvailable {
				continue
			}
			v, err = parseDecimal(b)
		}
		if err != nil {
			k.Name = name
			bad(&CounterError{Key: k, Err: unreadable(err)})
			continue
		}
		if !ok {
			continue
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
	return true, lifespan
}

// unreadable shortens an I/O error to its cause: CounterError already
// names the file, and a sysfs path repeated in every message of a status
// line buries the counter's name.
func unreadable(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("unreadable: %w", pe.Err)
	}
	return err
}

// readSmall reads a sysfs attribute of at most len(buf) bytes into buf
// (see readRaw); errors name the file.
func readSmall(path string, buf []byte) (b []byte, ok bool, err error) {
	b, ok, err = readRaw(path, buf)
	if err != nil {
		return nil, false, fmt.Errorf("failed to read file %q: %w", path, err)
	}
	return b, ok, nil
}

// readRaw reads a sysfs attribute of at most len(buf) bytes into buf
// without the per-file buffer and stat of os.ReadFile: a refresh reads
// dozens of counters per port. ok is false for unsupported attributes
// (see unsupported). Errors do not repeat the path beyond what the
// *fs.PathError carries.
func readRaw(path string, buf []byte) (b []byte, ok bool, err error) {
	f, err := os.Open(path)
	if err != nil {
		if unsupported(err) {
			return nil, false, nil
		}
		return nil, false, err
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
			return nil, false, err
		}
		if m == 0 {
			break
		}
	}
	// sysfs returns a whole attribute in one read; a file that fills the
	// buffer is not one of the short attributes read here.
	if n == len(buf) {
		if m, _ := f.Read(buf[:1]); m > 0 {
			return nil, false, fmt.Errorf("longer than %d bytes", len(buf))
		}
	}
	return buf[:n], true, nil
}

// parseDecimal parses an unsigned decimal counter without converting to a
// string first.
func parseDecimal(b []byte) (uint64, error) {
	if len(b) == 0 {
		return 0, errors.New("empty")
	}
	var v uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, fmt.Errorf("unparsable %q", b)
		}
		d := uint64(c - '0')
		if v > (math.MaxUint64-d)/10 {
			return 0, fmt.Errorf("%q overflows 64 bits", b)
		}
		v = v*10 + d
	}
	return v, nil
}
