package rdmastats

import (
	"fmt"
	"slices"
	"time"
)

// Status says how far a Rate can be trusted.
type Status uint8

// Rate statuses.
const (
	// StatusOK: the counter is in both snapshots and did not go backwards.
	StatusOK Status = iota
	// StatusAbsent: the counter is missing from one snapshot (a device
	// added or removed, a driver that stopped exporting it). There is no
	// rate, which is not the same as a rate of zero.
	StatusAbsent
	// StatusReset: the counter went backwards. Counters restart from zero
	// when a device is re-created (rdma link delete/add, driver reload) or
	// cleared (perfquery -R), so the current value is what was counted
	// since the reset, a lower bound of the true increase. A reset
	// followed by more counting than before within one interval looks
	// like StatusOK; compare Device lists across refreshes to catch
	// re-created devices.
	StatusReset
)

// String returns "ok", "absent" or "reset".
func (s Status) String() string {
	switch s {
	case StatusOK:
		return "ok"
	case StatusAbsent:
		return "absent"
	case StatusReset:
		return "reset"
	}
	return fmt.Sprintf("status(%d)", uint8(s))
}

// Rate is the change of one counter between two snapshots.
type Rate struct {
	Key
	Status Status
	// Value is the counter in the later snapshot; with StatusAbsent it is
	// the value of whichever snapshot has the counter.
	Value uint64
	// Delta is the increase over the interval: cur-prev, or cur after a
	// reset, 0 when absent.
	Delta uint64
	// PerSecond is Delta over the interval in the counter's Unit per
	// second; 0 when absent.
	PerSecond float64
}

// Unit returns the unit of the counter, and of PerSecond per second.
func (r Rate) Unit() Unit { return UnitOf(r.Name) }

// Health returns the health class of the counter.
func (r Rate) Health() Health { return Classify(r.Name) }

// Unhealthy reports whether a health counter moved in the interval: the
// rows a dashboard should highlight.
func (r Rate) Unhealthy() bool {
	return r.Status != StatusAbsent && r.Delta > 0 && r.Health() != HealthNone
}

// Rates compares two snapshots taken dt apart (usually
// cur.Time.Sub(prev.Time)) and returns one Rate per counter present in
// either, sorted by device, port, source and name. dt must be positive.
func Rates(prev, cur Snapshot, dt time.Duration) ([]Rate, error) {
	if dt <= 0 {
		return nil, fmt.Errorf("rates over a non-positive interval %v", dt)
	}
	secs := dt.Seconds()
	out := make([]Rate, 0, len(cur.Values))
	for k, c := range cur.Values {
		p, ok := prev.Values[k]
		r := Rate{Key: k, Value: c}
		switch {
		case !ok:
			r.Status = StatusAbsent
		case c < p:
			r.Status = StatusReset
			r.Delta = c
		default:
			r.Delta = c - p
		}
		if r.Status != StatusAbsent {
			r.PerSecond = float64(r.Delta) / secs
		}
		out = append(out, r)
	}
	for k, p := range prev.Values {
		if _, ok := cur.Values[k]; !ok {
			out = append(out, Rate{Key: k, Status: StatusAbsent, Value: p})
		}
	}
	slices.SortFunc(out, func(a, b Rate) int { return compareKeys(a.Key, b.Key) })
	return out, nil
}
