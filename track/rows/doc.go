// Package rows is the one presentation of the tracker's snapshot (package
// track): the rows, link-group histories and texts that smcdump's -z
// views (package output/zview), the browser's panes (tui/browser) and
// smctop's wire adapter (package monitor) show. Every surface reads the
// same rows, so a fact reads the same on each; a surface that draws its
// own text copies the typed fields, never parses the text here.
//
// # Entry points
//
// Conns (smc,conns), LinkRows (smc,links), LGRRows (smc,lgr, with each
// group's History), Declines (smc,decline) and TimelineOf
// (smc,timeline,CONN), all over a *track.Snapshot.
//
// # Link numbers
//
// A link is named by the number its kernel gives it (the link ID of
// CONFIRM_LINK and ADD_LINK, Link.LinkID), in every text and column
// that names one. The tracker's own link index is a row key (Link.ID)
// only. A link whose setup the capture did not show has no known number:
// it reads "-", and its JSON field is omitted.
//
// # Absent values
//
// A value the capture did not carry is absent, never a made-up zero: "-"
// in text, and in JSON omitted (omitempty), or null where the field is a
// list. Handshake steps that were not seen are -1 ms (Durations).
package rows
