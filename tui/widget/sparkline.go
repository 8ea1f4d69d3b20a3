// Package widget holds the tview widgets smcscope's screens share.
package widget

// sparkChars are the eight block heights of a sparkline.
var sparkChars = []rune("▁▂▃▄▅▆▇█")

// Sparkline draws the last width values as block characters scaled to
// their maximum; an all-zero series is a flat baseline.
func Sparkline(vals []float64, width int) string {
	if width <= 0 {
		return ""
	}
	if len(vals) > width {
		vals = vals[len(vals)-width:]
	}
	hi := 0.0
	for _, v := range vals {
		hi = max(hi, v)
	}
	out := make([]rune, len(vals))
	for i, v := range vals {
		n := 0
		if hi > 0 && v > 0 {
			n = int(v / hi * float64(len(sparkChars)-1))
			n = max(n, 1)
		}
		out[i] = sparkChars[n]
	}
	return string(out)
}
