// Package uba resolves Unicode bidirectional embedding levels (UAX #9) for
// one paragraph. core.go and bracket.go are golang.org/x/text/unicode/bidi's
// port of the Unicode reference implementation, copied unchanged but for
// the package name (BSD licence, see LICENSE): the public API of that
// package (v0.42.0) keeps only the direction of each run and drops the
// levels, and the visual order of a line (rule L2) needs the levels.
package uba

import "golang.org/x/text/unicode/bidi"

// Class is the Unicode bidi class of a rune.
type Class bidi.Class

const (
	L       = Class(bidi.L)
	R       = Class(bidi.R)
	EN      = Class(bidi.EN)
	ES      = Class(bidi.ES)
	ET      = Class(bidi.ET)
	AN      = Class(bidi.AN)
	CS      = Class(bidi.CS)
	B       = Class(bidi.B)
	S       = Class(bidi.S)
	WS      = Class(bidi.WS)
	ON      = Class(bidi.ON)
	BN      = Class(bidi.BN)
	NSM     = Class(bidi.NSM)
	AL      = Class(bidi.AL)
	Control = Class(bidi.Control)
	LRO     = Class(bidi.LRO)
	RLO     = Class(bidi.RLO)
	LRE     = Class(bidi.LRE)
	RLE     = Class(bidi.RLE)
	PDF     = Class(bidi.PDF)
	LRI     = Class(bidi.LRI)
	RLI     = Class(bidi.RLI)
	FSI     = Class(bidi.FSI)
	PDI     = Class(bidi.PDI)

	unknownClass = ^Class(0)
)

// Levels returns the resolved embedding level of each rune of one line of
// text (no paragraph separators): even levels run left to right, odd ones
// right to left. The paragraph level follows the first strong character
// (rules P2, P3), left to right when there is none. A rune of class B is
// treated as white space.
func Levels(runes []rune) (levels []int, err error) {
	if len(runes) == 0 {
		return nil, nil
	}
	types := make([]Class, len(runes))
	pairTypes := make([]bracketType, len(runes))
	pairValues := make([]rune, len(runes))
	for i, r := range runes {
		props, _ := bidi.LookupRune(r)
		cls := Class(props.Class())
		if cls == B {
			cls = WS
		}
		types[i] = cls
		switch {
		case props.IsOpeningBracket():
			pairTypes[i], pairValues[i] = bpOpen, r
		case props.IsBracket():
			pairTypes[i], pairValues[i] = bpClose, r
		}
	}
	defer func() {
		// The reference port panics on inputs it considers invalid; a
		// line is then set left to right.
		if recover() != nil {
			levels, err = nil, errInvalid
		}
	}()
	p, err := newParagraph(types, pairTypes, pairValues, implicitLevel)
	if err != nil {
		return nil, err
	}
	lv := p.getLevels([]int{len(types)})
	levels = make([]int, len(lv))
	for i, l := range lv {
		levels[i] = int(l)
	}
	return levels, nil
}

type invalidError struct{}

func (invalidError) Error() string { return "uba: invalid input" }

var errInvalid error = invalidError{}

// Reorder returns the visual order of indexes 0..len(levels)-1 (rule L2:
// from the highest level down to the lowest odd one, reverse every maximal
// sequence at that level or higher).
func Reorder(levels []int) []int {
	order := make([]int, len(levels))
	for i := range order {
		order[i] = i
	}
	hi, lo := 0, 1<<30
	for _, l := range levels {
		hi = max(hi, l)
		if l%2 == 1 {
			lo = min(lo, l)
		}
	}
	for lv := hi; lv >= lo && lv > 0; lv-- {
		for i := 0; i < len(levels); {
			if levels[order[i]] < lv {
				i++
				continue
			}
			j := i
			for j < len(levels) && levels[order[j]] >= lv {
				j++
			}
			for a, b := i, j-1; a < b; a, b = a+1, b-1 {
				order[a], order[b] = order[b], order[a]
			}
			i = j
		}
	}
	return order
}
