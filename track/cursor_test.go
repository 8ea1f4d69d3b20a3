package track

import "testing"

func TestCursorSub(t *testing.T) {
	const size = 65536
	tests := []struct {
		name      string
		prev, cur Cursor
		size      uint32
		want      uint64
		wantOK    bool
	}{
		{"same wrap", Cursor{0, 24}, Cursor{0, 88}, size, 64, true},
		{"no movement", Cursor{3, 100}, Cursor{3, 100}, size, 0, true},
		// long.pcap fr 8213: 40 B to the RMBE end + 24 B at offset 0.
		{"one wrap", Cursor{0, 65496}, Cursor{1, 24}, size, 64, true},
		// long.pcap: a 64 KiB bulk send moves prod 4/58520 to 5/58520.
		{"whole rmbe", Cursor{4, 58520}, Cursor{5, 58520}, size, 65536, true},
		{"wrap counter wraps", Cursor{0xFFFF, 65000}, Cursor{0, 100}, size, 636, true},
		{"backwards", Cursor{0, 100}, Cursor{0, 50}, size, 0, false},
		{"backwards across wrap", Cursor{2, 100}, Cursor{1, 50}, size, 0, false},
		{"size unknown same wrap", Cursor{0, 10}, Cursor{0, 30}, 0, 20, true},
		{"size unknown wrap moved", Cursor{0, 10}, Cursor{1, 30}, 0, 0, false},
		{"count beyond size", Cursor{1, 10}, Cursor{2, 5}, 8, 3, true},
	}
	for _, tc := range tests {
		got, ok := tc.cur.Sub(tc.prev, tc.size)
		if got != tc.want || ok != tc.wantOK {
			t.Errorf("%s: %v.Sub(%v, %d) = %d, %v; want %d, %v", tc.name, tc.cur, tc.prev, tc.size, got, ok, tc.want, tc.wantOK)
		}
	}
}

func TestPSNDiff(t *testing.T) {
	tests := []struct {
		a, b uint32
		want int32
	}{
		{0xa6ac2f, 0xa6ac2e, 1},
		{0xa6ac2e, 0xa6ac2f, -1},
		{0x000002, 0xFFFFFE, 4},
		{0xFFFFFE, 0x000002, -4},
		{5, 5, 0},
		{0x800000, 0, -0x800000},
	}
	for _, tc := range tests {
		if got := psnDiff(tc.a, tc.b); got != tc.want {
			t.Errorf("psnDiff(%#x, %#x) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
	if d := seqDiff(1, 0xFFFF); d != 2 {
		t.Errorf("seqDiff(1, 0xffff) = %d, want 2", d)
	}
	if d := seqDiff(210, 211); d != -1 {
		t.Errorf("seqDiff(210, 211) = %d, want -1", d)
	}
}
