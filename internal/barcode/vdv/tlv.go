package vdv

import (
	"errors"
	"fmt"
)

// TLV is one BER-TLV data object: a tag of one or more bytes (the first
// byte's low five bits all set announce more bytes, each with bit 8 set
// but the last) and its value.
type TLV struct {
	Tag   uint32
	Value []byte
}

// ErrTLV reports malformed BER-TLV.
var ErrTLV = errors.New("malformed BER-TLV")

func tlvErr(format string, a ...any) error {
	return fmt.Errorf("%w: %s", ErrTLV, fmt.Sprintf(format, a...))
}

// AppendTLV appends tag, length and value. Lengths use the short form
// below 128 and the 0x81/0x82/0x83 long forms above.
func AppendTLV(b []byte, tag uint32, value []byte) []byte {
	b = appendTag(b, tag)
	b = appendLength(b, len(value))
	return append(b, value...)
}

func appendTag(b []byte, tag uint32) []byte {
	switch {
	case tag > 0xFFFFFF:
		return append(b, byte(tag>>24), byte(tag>>16), byte(tag>>8), byte(tag))
	case tag > 0xFFFF:
		return append(b, byte(tag>>16), byte(tag>>8), byte(tag))
	case tag > 0xFF:
		return append(b, byte(tag>>8), byte(tag))
	}
	return append(b, byte(tag))
}

func appendLength(b []byte, n int) []byte {
	switch {
	case n < 0x80:
		return append(b, byte(n))
	case n <= 0xFF:
		return append(b, 0x81, byte(n))
	case n <= 0xFFFF:
		return append(b, 0x82, byte(n>>8), byte(n))
	}
	return append(b, 0x83, byte(n>>16), byte(n>>8), byte(n))
}

// ReadTLV reads one data object from the front of b and returns it with
// the bytes after it. The value aliases b.
func ReadTLV(b []byte) (TLV, []byte, error) {
	if len(b) == 0 {
		return TLV{}, nil, tlvErr("no tag")
	}
	tag := uint32(b[0])
	i := 1
	if b[0]&0x1F == 0x1F {
		for {
			if i >= len(b) {
				return TLV{}, nil, tlvErr("tag truncated")
			}
			if i >= 4 {
				return TLV{}, nil, tlvErr("tag longer than 4 bytes")
			}
			tag = tag<<8 | uint32(b[i])
			i++
			if b[i-1]&0x80 == 0 {
				break
			}
		}
	}
	if i >= len(b) {
		return TLV{}, nil, tlvErr("tag %X has no length", tag)
	}
	n := int(b[i])
	i++
	if n&0x80 != 0 {
		k := n & 0x7F
		if k == 0 || k > 3 {
			return TLV{}, nil, tlvErr("tag %X: length form 0x%02X not supported", tag, 0x80|k)
		}
		if i+k > len(b) {
			return TLV{}, nil, tlvErr("tag %X: length truncated", tag)
		}
		n = 0
		for _, c := range b[i : i+k] {
			n = n<<8 | int(c)
		}
		if n < 0x80 || (k > 1 && n>>(8*(k-1)) == 0) {
			return TLV{}, nil, tlvErr("tag %X: length %d not in its shortest form", tag, n)
		}
		i += k
	}
	if n > len(b)-i {
		return TLV{}, nil, tlvErr("tag %X: length %d exceeds the %d bytes left", tag, n, len(b)-i)
	}
	return TLV{Tag: tag, Value: b[i : i+n : i+n]}, b[i+n:], nil
}

// ReadTagged reads one data object that must carry tag.
func ReadTagged(b []byte, tag uint32) ([]byte, []byte, error) {
	t, rest, err := ReadTLV(b)
	if err != nil {
		return nil, nil, err
	}
	if t.Tag != tag {
		return nil, nil, tlvErr("want tag %X, found %X", tag, t.Tag)
	}
	return t.Value, rest, nil
}

// ParseTLVs reads a sequence of data objects filling b exactly.
func ParseTLVs(b []byte) ([]TLV, error) {
	var out []TLV
	for len(b) > 0 {
		t, rest, err := ReadTLV(b)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
		b = rest
	}
	return out, nil
}

// Find returns the value of the first object with tag in ts.
func Find(ts []TLV, tag uint32) ([]byte, bool) {
	for _, t := range ts {
		if t.Tag == tag {
			return t.Value, true
		}
	}
	return nil, false
}
