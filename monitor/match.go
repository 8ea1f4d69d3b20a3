package monitor

import (
	"cmp"
	"slices"
)

// keyMerge pairs rows in key order with prev, which is in key order, a
// row at a time: Refresh pairs a refresh's rows with the previous ones
// (by Key, the last row of a repeated key) in a pass it makes anyway
// (carry), without hashing 100,000 keys.
type keyMerge struct {
	prev []ConnRow
	j    int
}

// next returns the index of the last row of prev with key k, -1 for
// none; k must not be below the last key asked.
func (mg *keyMerge) next(k string) int32 {
	for mg.j < len(mg.prev) && mg.prev[mg.j].Key < k {
		mg.j++
	}
	found := int32(-1)
	for e := mg.j; e < len(mg.prev) && mg.prev[e].Key == k; e++ {
		found = int32(e)
	}
	return found
}

// sortConns sorts rows by key, keeping the order of rows with one key.
// Rows are large (over 450 bytes): the sort moves indexes, and then each
// row once; rows already in order (kernelConns sorts its own) are not
// moved at all.
func sortConns(rows []ConnRow) {
	if keysSorted(rows) {
		return
	}
	order := make([]int32, len(rows))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortStableFunc(order, func(a, b int32) int { return cmp.Compare(rows[a].Key, rows[b].Key) })
	permute(rows, order)
}

// permute puts rows[order[i]] at i, following each cycle of the
// permutation with one row held aside; order is used up.
func permute(rows []ConnRow, order []int32) {
	for i := range order {
		if order[i] < 0 || int(order[i]) == i {
			continue
		}
		held := rows[i]
		j := i
		for {
			from := int(order[j])
			order[j] = -1
			if from == i {
				rows[j] = held
				break
			}
			rows[j] = rows[from]
			j = from
		}
	}
}

// keysSorted reports whether rows are in key order (by index: a
// comparison taking rows by value would copy them).
func keysSorted(rows []ConnRow) bool {
	for i := 1; i < len(rows); i++ {
		if rows[i].Key < rows[i-1].Key {
			return false
		}
	}
	return true
}
