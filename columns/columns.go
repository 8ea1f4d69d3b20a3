// Package columns is the packet list's column layout, one for smcdump -I's
// list and smcdump's text lines (-o column.format:SPEC, as tshark's
// -o gui.column.format): Wireshark's seven columns and any field of
// -G fields, in any order, each at a fixed width or fitted. A layout is
// written as its spec, the text the browser's o prompt edits, the flag
// gives and the browser's config file keeps:
//
//	No.,Time,Source,Destination,Protocol,Length,Seq=smc.cdc.seq:8,Info
//
// items separated by commas, each [TITLE=]NAME[:WIDTH].
package columns

import (
	"cmp"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/smcscope/smcscope/decode"
)

// Kind is what a column shows: a built-in one, or a field (Field).
type Kind uint8

// The built-in columns, in Wireshark's order, then Field.
const (
	No Kind = iota
	Time
	Source
	Destination
	Protocol
	Length
	Info
	Field
)

// Names are the built-in columns' names.
var Names = [Field]string{"No.", "Time", "Source", "Destination", "Protocol", "Length", "Info"}

// Column is one column of a layout.
type Column struct {
	Kind  Kind
	Field decode.FieldDef // Kind Field: the field shown
	Title string          // the heading, "" for the name
	Width int             // set by the user; 0: fitted (the list) or as long as it is (a text line)
}

// Name is what the spec calls the column: the built-in's name or the
// field's.
func (c Column) Name() string {
	if c.Kind == Field {
		return c.Field.Name
	}
	return Names[c.Kind]
}

// Heading is the column's title.
func (c Column) Heading() string { return cmp.Or(c.Title, c.Name()) }

// Default is Wireshark's layout.
func Default() []Column {
	cols := make([]Column, Field)
	for i := range cols {
		cols[i].Kind = Kind(i)
	}
	return cols
}

// Parse reads a column spec. check, when set, may refuse a field column
// (the browser shows only the tracker fields its index keeps).
func Parse(spec string, check func(decode.FieldDef) error) ([]Column, error) {
	var cols []Column
	for _, item := range strings.Split(spec, ",") {
		item = strings.TrimSpace(strings.ReplaceAll(item, `"`, ""))
		if item == "" {
			continue
		}
		var c Column
		if t, rest, ok := strings.Cut(item, "="); ok {
			c.Title, item = strings.TrimSpace(t), strings.TrimSpace(rest)
		}
		if name, w, ok := strings.Cut(item, ":"); ok {
			n, err := strconv.Atoi(strings.TrimSpace(w))
			if err != nil || n < 1 || n > 200 {
				return nil, fmt.Errorf("column %q: width %q: want 1 to 200 characters", name, w)
			}
			c.Width, item = n, strings.TrimSpace(name)
		}
		c.Kind = Field
		for k, n := range Names {
			if strings.EqualFold(item, n) || strings.EqualFold(item+".", n) { // "No" for "No."
				c.Kind = Kind(k)
			}
		}
		if c.Kind == Field {
			d, ok := decode.LookupField(item)
			if !ok {
				return nil, fmt.Errorf("column %q: no such column or field (No., Time, Source, Destination, Protocol, Length, Info, or a field of -G fields)", item)
			}
			if check != nil {
				if err := check(d); err != nil {
					return nil, fmt.Errorf("column %q: %w", item, err)
				}
			}
			c.Field = d
		}
		cols = append(cols, c)
	}
	if len(cols) == 0 {
		return nil, errors.New("no column: name at least one (No., Time, Source, Destination, Protocol, Length, Info, or a field)")
	}
	return cols, nil
}

// Format writes a layout as its spec.
func Format(cols []Column) string {
	parts := make([]string, len(cols))
	for i, c := range cols {
		s := c.Name()
		if c.Title != "" {
			s = c.Title + "=" + s
		}
		if c.Width > 0 {
			s += ":" + strconv.Itoa(c.Width)
		}
		parts[i] = s
	}
	return strings.Join(parts, ",")
}

// FieldText is a field column's cell: the field's values in rec as the -V
// tree writes them (hex, enum names), every occurrence, comma-separated.
func FieldText(rec *decode.Record, d decode.FieldDef) string {
	var s []string
	for k, id := range rec.IDs {
		if id == d.ID {
			s = append(s, rec.Vals[k].Display(d))
		}
	}
	return strings.Join(s, ",")
}
