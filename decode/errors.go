package decode

import (
	"errors"
	"fmt"
)

// Sentinels wrapped by Error; callers branch on them with errors.Is.
var (
	ErrTruncated     = errors.New("truncated")
	ErrBadEyecatcher = errors.New("bad eyecatcher")
	ErrBadLength     = errors.New("bad length")
	ErrUnknownType   = errors.New("unknown type")
	ErrBadICRC       = errors.New("bad ICRC")
	ErrReserved      = errors.New("reserved value")
)

// Error is a decode failure at a known place inside one message, so that a
// user (and the browser, via errors.As) can find the offending byte.
type Error struct {
	Layer  string // e.g. "CLC Accept", "BTH", "LLC ADD_LINK_V2"
	Field  string // e.g. "rmbe_idx"; empty when the whole message is at fault
	Offset int    // from the first byte of the message
	Err    error  // wraps one of the sentinels above
	Detail string // e.g. "need 1 byte, have 0"
}

func (e *Error) Error() string {
	s := fmt.Sprintf("%s: offset %d", e.Layer, e.Offset)
	if e.Field != "" {
		s += " (" + e.Field + ")"
	}
	s += ": " + e.Err.Error()
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	return s
}

func (e *Error) Unwrap() error { return e.Err }

// Truncated is the error of a message or header shorter than a field
// needs: need bytes from the layer's start, have of them present.
func Truncated(layer, field string, off, need, have int) error {
	return &Error{Layer: layer, Field: field, Offset: off, Err: ErrTruncated,
		Detail: fmt.Sprintf("need %d bytes, have %d", need, have)}
}

// BadLength is the error of a length field that disagrees with the bytes.
func BadLength(layer, field string, off int, detail string) error {
	return &Error{Layer: layer, Field: field, Offset: off, Err: ErrBadLength, Detail: detail}
}
