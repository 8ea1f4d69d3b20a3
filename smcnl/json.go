package smcnl

// The enums marshal as their names, so -json output reads like the text
// output ("mode": "SMCR", not "mode": 0).

// MarshalText implements encoding.TextMarshaler.
func (m Mode) MarshalText() ([]byte, error) { return []byte(m.String()), nil }

// MarshalText implements encoding.TextMarshaler.
func (s State) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// MarshalText implements encoding.TextMarshaler.
func (r Role) MarshalText() ([]byte, error) { return []byte(r.String()), nil }

// MarshalText implements encoding.TextMarshaler.
func (t LGRType) MarshalText() ([]byte, error) { return []byte(t.String()), nil }

// MarshalText implements encoding.TextMarshaler.
func (s LinkState) MarshalText() ([]byte, error) { return []byte(s.String()), nil }
