package zview

import (
	"encoding/json"
	"io"

	"github.com/smcscope/smcscope/track"
	"github.com/smcscope/smcscope/track/rows"
)

// writeJSON writes a view as compact JSON, the bytes json.Marshal gives
// for it, with the rows of its lists encoded one at a time: a view of
// thousands of connections is never held encoded whole (with indentation
// that was three copies of it, the largest allocations of an smcdump run).
// TestJSONStreamsLikeMarshal holds the two encodings equal.
func writeJSON(w io.Writer, v any) error {
	j := &jsonWriter{w: w}
	switch v := v.(type) {
	case rows.ConnsView:
		j.raw(`{"conns":`)
		jsonList(j, v.Conns)
		j.raw(`,"stats":`)
		j.value(v.Stats)
		if v.Totals != nil {
			j.raw(`,"totals":`)
			j.value(v.Totals)
		}
		j.raw("}")
	case []rows.Link:
		jsonList(j, v)
	case []rows.LGR:
		jsonList(j, v)
	case rows.DeclineView:
		j.raw(`{"fallbacks":`)
		jsonList(j, v.Fallbacks)
		j.raw(`,"by_reason":`)
		jsonList(j, v.ByReason)
		if v.Folded != 0 {
			j.raw(`,"folded":`)
			j.value(v.Folded)
		}
		j.raw("}")
	case track.ExpertView:
		j.raw("{")
		if v.MinSeverity != "" {
			// -z smc,expert,SEVERITY: the floor and what it left out.
			j.raw(`"min_severity":`)
			j.value(v.MinSeverity)
			j.raw(`,"below":`)
			j.value(v.Below)
			j.raw(",")
		}
		j.raw(`"severities":`)
		jsonList(j, v.Severities)
		j.raw("}")
	case rows.Timeline:
		j.raw(`{"conn":`)
		j.value(v.Conn)
		j.raw(`,"events":`)
		jsonList(j, v.Events)
		if v.Cut != 0 {
			j.raw(`,"events_not_kept":`)
			j.value(v.Cut)
		}
		if v.Note != "" {
			j.raw(`,"note":`)
			j.value(v.Note)
		}
		j.raw("}")
	default:
		j.value(v)
	}
	j.raw("\n")
	return j.err
}

// jsonWriter writes JSON pieces and keeps the first error.
type jsonWriter struct {
	w   io.Writer
	err error
}

func (j *jsonWriter) raw(s string) {
	if j.err == nil {
		_, j.err = io.WriteString(j.w, s)
	}
}

func (j *jsonWriter) value(v any) {
	if j.err != nil {
		return
	}
	b, err := json.Marshal(v)
	if err != nil {
		j.err = err
		return
	}
	_, j.err = j.w.Write(b)
}

// jsonList writes rows as a JSON array (null for a nil slice, as
// json.Marshal).
func jsonList[T any](j *jsonWriter, rows []T) {
	if rows == nil {
		j.raw("null")
		return
	}
	j.raw("[")
	for i := range rows {
		if i > 0 {
			j.raw(",")
		}
		j.value(&rows[i])
	}
	j.raw("]")
}
