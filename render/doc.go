// Package render prints typed rows as text tables: smcdump's -z views and
// smctop --once -o text. JSON is the rows marshalled as they are; the TUIs
// place the same rows in widgets. The kernel's key=value lines are
// package smcnl's (WriteSockets and the other Write* functions).
package render
