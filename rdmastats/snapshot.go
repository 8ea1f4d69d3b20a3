package rdmastats

import (
	"cmp"
	"strconv"
	"time"
)

// Source is the sysfs directory a counter comes from.
type Source uint8

// Counter sources.
const (
	SourcePMA Source = iota + 1 // ports/<n>/counters: IB PMA PortCounters(Extended)
	SourceHW                    // hw_counters: driver specific (mlx5, rxe ...)
)

// String returns the directory name.
func (s Source) String() string {
	switch s {
	case SourcePMA:
		return "counters"
	case SourceHW:
		return "hw_counters"
	}
	return "source(" + strconv.Itoa(int(s)) + ")"
}

// Key names one counter of one port. Port 0 holds device-wide
// hw_counters (<dev>/hw_counters); RDMA ports are numbered from 1.
type Key struct {
	Device string
	Port   int
	Source Source
	Name   string
}

func compareKeys(a, b Key) int {
	return cmp.Or(
		cmp.Compare(a.Device, b.Device),
		cmp.Compare(a.Port, b.Port),
		cmp.Compare(a.Source, b.Source),
		cmp.Compare(a.Name, b.Name),
	)
}

// Snapshot is every counter of every device at one moment, in the units of
// Counters (PMA data in bytes). A counter the driver does not provide has
// no key.
type Snapshot struct {
	Time   time.Time // when reading started
	Values map[Key]uint64
	// Lifespans holds each hw_counters lifespan, keyed by device and port
	// (Source SourceHW, Name "lifespan"). A refresh faster than the
	// longest one shows stale values.
	Lifespans map[Key]time.Duration
	// Errors are the counters that exist but could not be read or
	// parsed; each is missing from Values.
	Errors []*CounterError
}

// MaxLifespan returns the longest hw_counters lifespan in the snapshot, 0
// when no driver reported one. A refresh interval shorter than this sees
// cached values, so rates alternate between zero and double.
func (s Snapshot) MaxLifespan() time.Duration {
	var longest time.Duration
	for _, l := range s.Lifespans {
		longest = max(longest, l)
	}
	return longest
}

// Snapshot reads the counters of every device, and nothing else, which
// makes it the call to repeat on a refresh timer. It gives ErrNoDevices
// when there is no device.
func (f FS) Snapshot() (Snapshot, error) {
	names, err := f.DeviceNames()
	if err != nil {
		return Snapshot{}, err
	}
	s := Snapshot{
		Time:      time.Now(),
		Values:    make(map[Key]uint64, 64*len(names)),
		Lifespans: make(map[Key]time.Duration),
	}
	bad := func(e *CounterError) { s.Errors = append(s.Errors, e) }
	read := func(dir string, k Key) {
		found, life := walkCounters(dir, k, func(name string, v uint64) {
			k.Name = name
			s.Values[k] = v
		}, bad)
		if found && k.Source == SourceHW && life > 0 {
			k.Name = lifespanFile
			s.Lifespans[k] = life
		}
	}
	for _, dev := range names {
		read(f.path(classDir, dev, "hw_counters"), Key{Device: dev, Source: SourceHW})
		ports, err := f.portNumbers(dev)
		if err != nil {
			return Snapshot{}, err
		}
		for _, pn := range ports {
			ps := strconv.Itoa(pn)
			read(f.path(classDir, dev, "ports", ps, "counters"), Key{dev, pn, SourcePMA, ""})
			read(f.path(classDir, dev, "ports", ps, "hw_counters"), Key{dev, pn, SourceHW, ""})
		}
	}
	return s, nil
}

// SnapshotOf builds a Snapshot from devices already read with Devices, so
// a caller that shows device details does not read the counters twice.
func SnapshotOf(devs []Device, t time.Time) Snapshot {
	s := Snapshot{Time: t, Values: make(map[Key]uint64), Lifespans: make(map[Key]time.Duration)}
	add := func(k Key, c Counters, life time.Duration) {
		for name, v := range c {
			k.Name = name
			s.Values[k] = v
		}
		if life > 0 {
			k.Name = lifespanFile
			s.Lifespans[k] = life
		}
	}
	for _, d := range devs {
		add(Key{Device: d.Name, Source: SourceHW}, d.HWCounters, d.HWLifespan)
		for _, p := range d.Ports {
			add(Key{d.Name, p.Port, SourcePMA, ""}, p.Counters, 0)
			add(Key{d.Name, p.Port, SourceHW, ""}, p.HWCounters, p.HWLifespan)
		}
	}
	return s
}
