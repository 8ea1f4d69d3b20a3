package rdmastats

import (
	"math"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func hw(dev, name string) Key { return Key{Device: dev, Port: 1, Source: SourceHW, Name: name} }

func snap(vals map[Key]uint64) Snapshot { return Snapshot{Values: vals} }

func TestRates(t *testing.T) {
	t.Parallel()
	sends := hw("rxe0", "rdma_sends")
	tests := []struct {
		name       string
		prev, cur  map[Key]uint64
		dt         time.Duration
		want       []Rate
		wantErrMsg bool
	}{
		{
			name: "increase",
			prev: map[Key]uint64{sends: 516},
			cur:  map[Key]uint64{sends: 616},
			dt:   2 * time.Second,
			want: []Rate{{Key: sends, Status: StatusOK, Value: 616, Delta: 100, PerSecond: 50}},
		},
		{
			name: "sub-second interval",
			prev: map[Key]uint64{sends: 0},
			cur:  map[Key]uint64{sends: 3},
			dt:   500 * time.Millisecond,
			want: []Rate{{Key: sends, Status: StatusOK, Value: 3, Delta: 3, PerSecond: 6}},
		},
		{
			name: "zero stays a measured zero",
			prev: map[Key]uint64{sends: 0},
			cur:  map[Key]uint64{sends: 0},
			dt:   time.Second,
			want: []Rate{{Key: sends, Status: StatusOK}},
		},
		{
			name: "missing before is absent, not zero",
			prev: map[Key]uint64{},
			cur:  map[Key]uint64{sends: 516},
			dt:   time.Second,
			want: []Rate{{Key: sends, Status: StatusAbsent, Value: 516}},
		},
		{
			name: "missing after is absent, not zero",
			prev: map[Key]uint64{sends: 516},
			cur:  nil,
			dt:   time.Second,
			want: []Rate{{Key: sends, Status: StatusAbsent, Value: 516}},
		},
		{
			name: "reset counts from zero",
			prev: map[Key]uint64{sends: 1000},
			cur:  map[Key]uint64{sends: 10},
			dt:   time.Second,
			want: []Rate{{Key: sends, Status: StatusReset, Value: 10, Delta: 10, PerSecond: 10}},
		},
		{
			name: "reset from the top gives no giant rate",
			prev: map[Key]uint64{sends: math.MaxUint64},
			cur:  map[Key]uint64{sends: 5},
			dt:   time.Second,
			want: []Rate{{Key: sends, Status: StatusReset, Value: 5, Delta: 5, PerSecond: 5}},
		},
		{
			name: "reset to zero",
			prev: map[Key]uint64{sends: 7},
			cur:  map[Key]uint64{sends: 0},
			dt:   time.Second,
			want: []Rate{{Key: sends, Status: StatusReset}},
		},
		{
			name: "full 64-bit range",
			prev: map[Key]uint64{sends: 0},
			cur:  map[Key]uint64{sends: math.MaxUint64},
			dt:   time.Second,
			want: []Rate{{Key: sends, Status: StatusOK, Value: math.MaxUint64, Delta: math.MaxUint64, PerSecond: float64(math.MaxUint64)}},
		},
		{
			name: "sorted by device, port, source, name",
			prev: map[Key]uint64{
				hw("rxe0", "b"): 1, hw("rxe0", "a"): 1, {"mlx5_0", 1, SourceHW, "z"}: 1,
				{"mlx5_0", 1, SourcePMA, "z"}: 1, {"mlx5_0", 0, SourceHW, "z"}: 1,
			},
			cur: map[Key]uint64{
				hw("rxe0", "b"): 2, hw("rxe0", "a"): 2, {"mlx5_0", 1, SourceHW, "z"}: 2,
				{"mlx5_0", 1, SourcePMA, "z"}: 2, {"mlx5_0", 0, SourceHW, "z"}: 2,
			},
			dt: time.Second,
			want: []Rate{
				{Key: Key{"mlx5_0", 0, SourceHW, "z"}, Value: 2, Delta: 1, PerSecond: 1},
				{Key: Key{"mlx5_0", 1, SourcePMA, "z"}, Value: 2, Delta: 1, PerSecond: 1},
				{Key: Key{"mlx5_0", 1, SourceHW, "z"}, Value: 2, Delta: 1, PerSecond: 1},
				{Key: hw("rxe0", "a"), Value: 2, Delta: 1, PerSecond: 1},
				{Key: hw("rxe0", "b"), Value: 2, Delta: 1, PerSecond: 1},
			},
		},
		{name: "zero interval", prev: map[Key]uint64{sends: 1}, cur: map[Key]uint64{sends: 2}, dt: 0, wantErrMsg: true},
		{name: "negative interval", prev: map[Key]uint64{sends: 1}, cur: map[Key]uint64{sends: 2}, dt: -time.Second, wantErrMsg: true},
		{name: "both empty", dt: time.Second, want: []Rate{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := Rates(snap(tt.prev), snap(tt.cur), tt.dt)
			if tt.wantErrMsg {
				if err == nil {
					t.Fatalf("Rates() = %v, want an error", got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Rates() mismatch (-want +got):\n%s", diff)
			}
			for _, r := range got {
				if r.PerSecond < 0 || math.IsNaN(r.PerSecond) || math.IsInf(r.PerSecond, 0) {
					t.Errorf("%v: PerSecond = %v", r.Key, r.PerSecond)
				}
			}
		})
	}
}

// TestRatesFixture reads the fixture, changes it the way a second refresh
// would, and checks the rates end to end: sysfs words become bytes per
// second, a vanished counter is absent and a restarted one is a reset.
func TestRatesFixture(t *testing.T) {
	t.Parallel()
	root := copyFixture(t)
	f := NewFS(root)
	prev, err := f.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	const mlx, rxe = "class/infiniband/mlx5_0/ports/1/", "class/infiniband/rxe0/ports/1/"
	writeFile(t, root, rxe+"hw_counters/rdma_sends", "616\n")               // +100
	writeFile(t, root, rxe+"hw_counters/completer_retry_err", "4\n")        // +4, a health counter
	writeFile(t, root, mlx+"counters/port_xmit_data", "1320888523\n")       // +1000 words
	writeFile(t, root, mlx+"hw_counters/out_of_sequence", "2\n")            // 12 -> 2: reset
	writeFile(t, root, mlx+"hw_counters/rx_write_requests", "N/A (no PMA)") // now unsupported
	cur, err := f.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	rates, err := Rates(prev, cur, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	byKey := make(map[Key]Rate, len(rates))
	for _, r := range rates {
		byKey[r.Key] = r
	}
	if len(byKey) != len(rates) {
		t.Errorf("Rates() repeated a key: %d rates, %d keys", len(rates), len(byKey))
	}
	// 15 rxe + 21 PMA + 29 mlx5 counters, lifespans excluded.
	if len(rates) != 65 {
		t.Errorf("len(Rates()) = %d, want 65", len(rates))
	}
	tests := []struct {
		key       Key
		status    Status
		value     uint64
		perSecond float64
		unhealthy bool
	}{
		{hw("rxe0", "rdma_sends"), StatusOK, 616, 50, false},
		{hw("rxe0", "rdma_recvs"), StatusOK, 515, 0, false},
		{hw("rxe0", "completer_retry_err"), StatusOK, 4, 2, true},
		{Key{"mlx5_0", 1, SourcePMA, "port_xmit_data"}, StatusOK, 1320888523 * 4, 2000, false},
		{Key{"mlx5_0", 1, SourcePMA, "port_rcv_data"}, StatusOK, 1197312441 * 4, 0, false},
		{hw("mlx5_0", "out_of_sequence"), StatusReset, 2, 1, true},
		{hw("mlx5_0", "rx_write_requests"), StatusAbsent, 1048577, 0, false},
		{hw("mlx5_0", "np_cnp_sent"), StatusOK, 845, 0, false},
	}
	for _, tt := range tests {
		r, ok := byKey[tt.key]
		if !ok {
			t.Errorf("%v: no rate", tt.key)
			continue
		}
		if r.Status != tt.status || r.Value != tt.value || r.PerSecond != tt.perSecond || r.Unhealthy() != tt.unhealthy {
			t.Errorf("%v = %s value %d %.1f/s unhealthy %v; want %s value %d %.1f/s unhealthy %v",
				tt.key, r.Status, r.Value, r.PerSecond, r.Unhealthy(), tt.status, tt.value, tt.perSecond, tt.unhealthy)
		}
	}
	if u := byKey[Key{"mlx5_0", 1, SourcePMA, "port_xmit_data"}].Unit(); u != UnitBytes {
		t.Errorf("port_xmit_data rate unit = %q, want bytes", u)
	}
	if _, ok := byKey[hw("rxe0", "lifespan")]; ok {
		t.Error("lifespan is a setting but came out as a counter rate")
	}
}

func TestSnapshotLifespans(t *testing.T) {
	t.Parallel()
	s, err := NewFS(fixtureRoot).Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	want := map[Key]time.Duration{
		hw("mlx5_0", "lifespan"): 10 * time.Millisecond,
		hw("rxe0", "lifespan"):   12 * time.Millisecond,
	}
	if diff := cmp.Diff(want, s.Lifespans); diff != "" {
		t.Errorf("Lifespans mismatch (-want +got):\n%s", diff)
	}
	if got := s.MaxLifespan(); got != 12*time.Millisecond {
		t.Errorf("MaxLifespan() = %v, want 12ms (rxe0)", got)
	}
	if got := (Snapshot{}).MaxLifespan(); got != 0 {
		t.Errorf("empty MaxLifespan() = %v, want 0", got)
	}
	if s.Time.IsZero() {
		t.Error("Snapshot().Time is zero")
	}
}

// TestSnapshotOfMatchesSnapshot checks that the two ways to build a
// snapshot agree, so callers may use whichever read they already did.
func TestSnapshotOfMatchesSnapshot(t *testing.T) {
	t.Parallel()
	f := NewFS(fixtureRoot)
	direct, err := f.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	devs, err := f.Devices()
	if err != nil {
		t.Fatal(err)
	}
	when := time.Unix(1_700_000_000, 0)
	built := SnapshotOf(devs, when)
	if !built.Time.Equal(when) {
		t.Errorf("SnapshotOf time = %v, want %v", built.Time, when)
	}
	if diff := cmp.Diff(direct.Values, built.Values); diff != "" {
		t.Errorf("SnapshotOf values differ from Snapshot (-Snapshot +SnapshotOf):\n%s", diff)
	}
	if diff := cmp.Diff(direct.Lifespans, built.Lifespans); diff != "" {
		t.Errorf("SnapshotOf lifespans differ (-Snapshot +SnapshotOf):\n%s", diff)
	}
	if v := direct.Values[hw("rxe0", "rdma_sends")]; v != 516 {
		t.Errorf("rdma_sends = %d, want 516 (pingpong.client.log)", v)
	}
}

func TestStatusString(t *testing.T) {
	t.Parallel()
	for s, want := range map[Status]string{StatusOK: "ok", StatusAbsent: "absent", StatusReset: "reset", 9: "status(9)"} {
		if got := s.String(); got != want {
			t.Errorf("Status(%d).String() = %q, want %q", s, got, want)
		}
	}
	for s, want := range map[Source]string{SourcePMA: "counters", SourceHW: "hw_counters", 0: "source(0)"} {
		if got := s.String(); got != want {
			t.Errorf("Source(%d).String() = %q, want %q", s, got, want)
		}
	}
}
