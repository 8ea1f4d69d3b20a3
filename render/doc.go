// Package render prints typed rows as text tables: smctop --once -o text
// and anything else that wants the dashboard's facts as plain text. JSON
// is the rows marshalled as they are; the TUIs place the same rows in
// widgets.
package render
