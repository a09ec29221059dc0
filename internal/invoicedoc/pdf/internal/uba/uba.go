// Package uba resolves the embedding levels of one line of text by the
// Unicode Bidirectional Algorithm (UAX #9, Unicode 15): rules P2–P3,
// X1–X10, W1–W7, N0–N2, I1–I2 and L1, and lays out levels in visual order
// (L2). It is written from the specification; the character data (bidi
// class, bracket pairs) comes from the public lookups of
// golang.org/x/text/unicode/bidi, whose own API hides the levels.
// uba_conformance_test.go runs the Unicode conformance files against it.
package uba

import (
	"slices"
	"unicode/utf8"

	"golang.org/x/text/unicode/bidi"
	"golang.org/x/text/unicode/norm"
)

// maxDepth is the deepest explicit embedding level (BD2).
const maxDepth = 125

// Levels returns the resolved embedding level of each rune of one line of
// text (no paragraph separators): even levels run left to right, odd ones
// right to left. The paragraph level follows the first strong character
// (rules P2, P3), left to right when there is none. A rune of class B is
// treated as white space. Runes removed by rule X9 (embedding controls,
// BN) take the level of the rune before them. The error is always nil; it
// is kept for callers that fall back to left to right.
func Levels(runes []rune) ([]int, error) {
	return levels(runes, -1), nil
}

// levels resolves the levels of runes at paragraph level para (0 or 1), or
// by P2 and P3 when para is -1.
func levels(runes []rune, para int) []int {
	n := len(runes)
	if n == 0 {
		return nil
	}
	p := &paragraph{
		runes:   runes,
		orig:    make([]bidi.Class, n),
		types:   make([]bidi.Class, n),
		levels:  make([]int, n),
		matchOf: make([]int, n),
	}
	for i, r := range runes {
		props, _ := bidi.LookupRune(r)
		c := props.Class()
		if c == bidi.B {
			c = bidi.WS
		}
		p.orig[i] = c
	}
	copy(p.types, p.orig)
	p.matchIsolates()
	p.level = para
	if para < 0 {
		p.level = 0
		if p.firstStrong(0, n) == bidi.R {
			p.level = 1 // P2, P3
		}
	}
	p.explicit()
	for _, seq := range p.runSequences() {
		p.resolve(seq)
	}
	p.lineLevels()
	return p.levels
}

type paragraph struct {
	runes   []rune
	orig    []bidi.Class // class of each rune (B as WS)
	types   []bidi.Class // class as the rules change it
	levels  []int        // explicit, then resolved level
	matchOf []int        // BD9: the matching PDI of an initiator and vice versa, -1 if none
	level   int          // paragraph embedding level
}

func isIsolateInit(c bidi.Class) bool { return c == bidi.LRI || c == bidi.RLI || c == bidi.FSI }

// removed reports the classes rule X9 removes.
func removed(c bidi.Class) bool {
	switch c {
	case bidi.LRE, bidi.RLE, bidi.LRO, bidi.RLO, bidi.PDF, bidi.BN:
		return true
	}
	return false
}

// matchIsolates pairs isolate initiators with their PDIs (BD9).
func (p *paragraph) matchIsolates() {
	var open []int
	for i, c := range p.orig {
		p.matchOf[i] = -1
		switch {
		case isIsolateInit(c):
			open = append(open, i)
		case c == bidi.PDI && len(open) > 0:
			j := open[len(open)-1]
			open = open[:len(open)-1]
			p.matchOf[i], p.matchOf[j] = j, i
		}
	}
}

// firstStrong returns L or R for the first strong character in
// [from, to), skipping isolates (P2), or ON when there is none.
func (p *paragraph) firstStrong(from, to int) bidi.Class {
	for i := from; i < to; i++ {
		switch c := p.orig[i]; {
		case c == bidi.L:
			return bidi.L
		case c == bidi.R || c == bidi.AL:
			return bidi.R
		case isIsolateInit(c):
			if p.matchOf[i] < 0 {
				return bidi.ON
			}
			i = p.matchOf[i]
		}
	}
	return bidi.ON
}

// status is an entry of the directional status stack (X1).
type status struct {
	level    int
	override bidi.Class // ON (neutral), L or R
	isolate  bool
}

// nextLevel is the least odd (rtl) or even level above l.
func nextLevel(l int, rtl bool) int {
	if l++; (l%2 == 1) != rtl {
		l++
	}
	return l
}

// explicit applies rules X1–X8: the explicit level of every rune, and the
// override of its class.
func (p *paragraph) explicit() {
	stack := []status{{level: p.level, override: bidi.ON}} // X1
	overflowIsolates, overflowEmbeddings, validIsolates := 0, 0, 0
	for i, c := range p.orig {
		top := stack[len(stack)-1]
		switch c {
		case bidi.RLE, bidi.LRE, bidi.RLO, bidi.LRO: // X2–X5
			p.levels[i] = top.level
			l := nextLevel(top.level, c == bidi.RLE || c == bidi.RLO)
			if l <= maxDepth && overflowIsolates == 0 && overflowEmbeddings == 0 {
				o := bidi.ON
				if c == bidi.RLO {
					o = bidi.R
				} else if c == bidi.LRO {
					o = bidi.L
				}
				stack = append(stack, status{level: l, override: o})
			} else if overflowIsolates == 0 {
				overflowEmbeddings++
			}
		case bidi.RLI, bidi.LRI, bidi.FSI: // X5a–X5c
			p.levels[i] = top.level
			if top.override != bidi.ON {
				p.types[i] = top.override
			}
			rtl := c == bidi.RLI
			if c == bidi.FSI {
				end := p.matchOf[i]
				if end < 0 {
					end = len(p.orig)
				}
				rtl = p.firstStrong(i+1, end) == bidi.R
			}
			l := nextLevel(top.level, rtl)
			if l <= maxDepth && overflowIsolates == 0 && overflowEmbeddings == 0 {
				validIsolates++
				stack = append(stack, status{level: l, override: bidi.ON, isolate: true})
			} else {
				overflowIsolates++
			}
		case bidi.PDI: // X6a
			if overflowIsolates > 0 {
				overflowIsolates--
			} else if validIsolates > 0 {
				overflowEmbeddings = 0
				for !stack[len(stack)-1].isolate {
					stack = stack[:len(stack)-1]
				}
				stack = stack[:len(stack)-1]
				validIsolates--
			}
			top = stack[len(stack)-1]
			p.levels[i] = top.level
			if top.override != bidi.ON {
				p.types[i] = top.override
			}
		case bidi.PDF: // X7
			p.levels[i] = top.level
			switch {
			case overflowIsolates > 0: // inside an overflowing isolate
			case overflowEmbeddings > 0:
				overflowEmbeddings--
			case !top.isolate && len(stack) >= 2:
				stack = stack[:len(stack)-1]
			}
		default: // X6 (BN is removed by X9 anyway)
			p.levels[i] = top.level
			if top.override != bidi.ON && c != bidi.BN {
				p.types[i] = top.override
			}
		}
	}
}

// sequence is an isolating run sequence (BD13): the indexes of its runes
// in order, and the classes of its start and end (sos, eos).
type sequence struct {
	idx      []int
	sos, eos bidi.Class
}

// runSequences splits the runes X9 keeps into level runs and chains them
// into isolating run sequences (X10).
func (p *paragraph) runSequences() []sequence {
	var runs [][]int
	runAt := make([]int, len(p.orig)) // first rune of a run → run
	prev := -1
	for i, c := range p.orig {
		if removed(c) {
			continue
		}
		if prev < 0 || p.levels[i] != p.levels[prev] {
			runAt[i] = len(runs)
			runs = append(runs, nil)
		}
		runs[len(runs)-1] = append(runs[len(runs)-1], i)
		prev = i
	}
	var seqs []sequence
	for _, run := range runs {
		first := run[0]
		if p.orig[first] == bidi.PDI && p.matchOf[first] >= 0 {
			continue // continues the sequence of its initiator
		}
		var idx []int
		for {
			idx = append(idx, run...)
			last := run[len(run)-1]
			m := p.matchOf[last]
			if !isIsolateInit(p.orig[last]) || m < 0 {
				break
			}
			run = runs[runAt[m]]
		}
		seqs = append(seqs, p.bounds(idx))
	}
	return seqs
}

// bounds determines sos and eos of a sequence from the higher of its level
// and its neighbours' (X10).
func (p *paragraph) bounds(idx []int) sequence {
	lvl := p.levels[idx[0]]
	dir := func(other int) bidi.Class {
		if max(lvl, other)&1 == 1 {
			return bidi.R
		}
		return bidi.L
	}
	before, after := p.level, p.level
	for i := idx[0] - 1; i >= 0; i-- {
		if !removed(p.orig[i]) {
			before = p.levels[i]
			break
		}
	}
	if last := idx[len(idx)-1]; !isIsolateInit(p.orig[last]) {
		for i := last + 1; i < len(p.orig); i++ {
			if !removed(p.orig[i]) {
				after = p.levels[i]
				break
			}
		}
	}
	return sequence{idx: idx, sos: dir(before), eos: dir(after)}
}

// strongDir maps a resolved class to the direction N0–N2 see: L, R (EN and
// AN count as R) or ON.
func strongDir(c bidi.Class) bidi.Class {
	switch c {
	case bidi.L:
		return bidi.L
	case bidi.R, bidi.AL, bidi.EN, bidi.AN:
		return bidi.R
	}
	return bidi.ON
}

// resolve applies W1–W7, N0–N2 and I1–I2 to one isolating run sequence.
func (p *paragraph) resolve(s sequence) {
	idx, t := s.idx, p.types
	lvl := p.levels[idx[0]]
	prev := s.sos
	for _, i := range idx { // W1
		if t[i] == bidi.NSM {
			t[i] = prev
			if isIsolateInit(prev) || prev == bidi.PDI {
				t[i] = bidi.ON
			}
		}
		prev = t[i]
	}
	strong := s.sos
	for _, i := range idx { // W2
		switch t[i] {
		case bidi.L, bidi.R, bidi.AL:
			strong = t[i]
		case bidi.EN:
			if strong == bidi.AL {
				t[i] = bidi.AN
			}
		}
	}
	for _, i := range idx { // W3
		if t[i] == bidi.AL {
			t[i] = bidi.R
		}
	}
	for k := 1; k+1 < len(idx); k++ { // W4
		a, c, b := t[idx[k-1]], t[idx[k]], t[idx[k+1]]
		if a == b && (a == bidi.EN && (c == bidi.ES || c == bidi.CS) || a == bidi.AN && c == bidi.CS) {
			t[idx[k]] = a
		}
	}
	for k := 0; k < len(idx); { // W5
		if t[idx[k]] != bidi.ET {
			k++
			continue
		}
		end := k
		for end < len(idx) && t[idx[end]] == bidi.ET {
			end++
		}
		if k > 0 && t[idx[k-1]] == bidi.EN || end < len(idx) && t[idx[end]] == bidi.EN {
			for j := k; j < end; j++ {
				t[idx[j]] = bidi.EN
			}
		}
		k = end
	}
	for _, i := range idx { // W6
		if c := t[i]; c == bidi.ES || c == bidi.ET || c == bidi.CS {
			t[i] = bidi.ON
		}
	}
	strong = s.sos
	for _, i := range idx { // W7
		switch t[i] {
		case bidi.L, bidi.R:
			strong = t[i]
		case bidi.EN:
			if strong == bidi.L {
				t[i] = bidi.L
			}
		}
	}
	embedding := bidi.L
	if lvl&1 == 1 {
		embedding = bidi.R
	}
	p.brackets(s, embedding)
	for k := 0; k < len(idx); { // N1, N2
		if !isNeutral(t[idx[k]]) {
			k++
			continue
		}
		end := k
		for end < len(idx) && isNeutral(t[idx[end]]) {
			end++
		}
		prev, next := s.sos, s.eos
		if k > 0 {
			prev = strongDir(t[idx[k-1]])
		}
		if end < len(idx) {
			next = strongDir(t[idx[end]])
		}
		dir := embedding
		if prev == next {
			dir = prev
		}
		for j := k; j < end; j++ {
			t[idx[j]] = dir
		}
		k = end
	}
	for _, i := range idx { // I1, I2
		switch c := t[i]; {
		case lvl&1 == 0 && c == bidi.R:
			p.levels[i]++
		case lvl&1 == 0 && (c == bidi.AN || c == bidi.EN):
			p.levels[i] += 2
		case lvl&1 == 1 && (c == bidi.L || c == bidi.AN || c == bidi.EN):
			p.levels[i]++
		}
	}
}

// isNeutral reports the classes N1 and N2 resolve (NI).
func isNeutral(c bidi.Class) bool {
	switch c {
	case bidi.B, bidi.S, bidi.WS, bidi.ON, bidi.LRI, bidi.RLI, bidi.FSI, bidi.PDI:
		return true
	}
	return false
}

// maxBrackets is the depth of the bracket stack of BD16.
const maxBrackets = 63

// brackets applies N0 to the bracket pairs of a sequence.
func (p *paragraph) brackets(s sequence, embedding bidi.Class) {
	idx, t := s.idx, p.types
	// BD16: pairs of sequence positions, found with a stack of openers
	// (their closing bracket, canonically decomposed).
	type opener struct {
		closing rune
		k       int
	}
	var stack []opener
	var pairs [][2]int
scan:
	for k, i := range idx {
		if t[i] != bidi.ON {
			continue
		}
		props, _ := bidi.LookupRune(p.runes[i])
		switch {
		case !props.IsBracket():
		case props.IsOpeningBracket():
			if len(stack) == maxBrackets {
				break scan
			}
			stack = append(stack, opener{canonical(pairedBracket(p.runes[i])), k})
		default:
			c := canonical(p.runes[i])
			for j := len(stack) - 1; j >= 0; j-- {
				if stack[j].closing == c {
					pairs = append(pairs, [2]int{stack[j].k, k})
					stack = stack[:j]
					break
				}
			}
		}
	}
	slices.SortFunc(pairs, func(a, b [2]int) int { return a[0] - b[0] })
	for _, pr := range pairs {
		open, close := pr[0], pr[1]
		found := bidi.ON
		for k := open + 1; k < close; k++ {
			if d := strongDir(t[idx[k]]); d == embedding {
				found = d // N0 b
				break
			} else if d != bidi.ON {
				found = d
			}
		}
		if found == bidi.ON {
			continue // N0 d: no strong type inside
		}
		if found != embedding { // N0 c: the context decides
			ctx := s.sos
			for k := open - 1; k >= 0; k-- {
				if d := strongDir(t[idx[k]]); d != bidi.ON {
					ctx = d
					break
				}
			}
			if ctx != found {
				found = embedding
			}
		}
		for _, k := range pr {
			t[idx[k]] = found
			// NSMs after a bracket take its new class.
			for k++; k < len(idx) && p.orig[idx[k]] == bidi.NSM; k++ {
				t[idx[k]] = found
			}
		}
	}
}

// pairedBracket is the Bidi_Paired_Bracket of a bracket: the mirror that
// bidi.ReverseString puts in its place.
func pairedBracket(r rune) rune {
	m, _ := utf8.DecodeRuneInString(bidi.ReverseString(string(r)))
	return m
}

// canonical is the canonical decomposition of a bracket when that is a
// single rune (U+2329 is U+3008), so that BD16 matches equivalents.
func canonical(r rune) rune {
	d := norm.NFD.String(string(r))
	if c, size := utf8.DecodeRuneInString(d); size == len(d) {
		return c
	}
	return r
}

// lineLevels applies L1 (segment separators, and white space and isolate
// controls before them or at the end of the line, return to the paragraph
// level) and gives the runes X9 removed the level of the rune before them.
func (p *paragraph) lineLevels() {
	for i, c := range p.orig {
		if removed(c) {
			if i == 0 {
				p.levels[i] = p.level
			} else {
				p.levels[i] = p.levels[i-1]
			}
		}
	}
	trailing := true
	for i := len(p.orig) - 1; i >= 0; i-- {
		switch c := p.orig[i]; {
		case c == bidi.S:
			p.levels[i] = p.level
			trailing = true
		case c == bidi.WS || isIsolateInit(c) || c == bidi.PDI || removed(c):
			if trailing {
				p.levels[i] = p.level
			}
		default:
			trailing = false
		}
	}
}

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
