package books

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/bits"
)

// The Merkle tree of a chain (RFC 9162 §2.1, docs/books.md "Proofs"): its
// leaves are the chain's entry hashes in position order (the 32 bytes of
// each, not the hex), so a checkpoint's tree hash commits to exactly what
// its head hash commits to, and an outsider can check that a later
// checkpoint extends an earlier one (a consistency proof) and that an
// entry is in the chain at a checkpoint (an inclusion proof) with a
// logarithmic number of hashes, without the chain.

// hash is one node of a Merkle tree.
type hash = [sha256.Size]byte

// leafHash is MTH({d}) = SHA-256(0x00 || d).
func leafHash(d []byte) hash {
	return sha256.Sum256(append([]byte{0}, d...))
}

// nodeHash is SHA-256(0x01 || left || right).
func nodeHash(l, r hash) hash {
	var b [1 + 2*sha256.Size]byte
	b[0] = 1
	copy(b[1:], l[:])
	copy(b[1+sha256.Size:], r[:])
	return sha256.Sum256(b[:])
}

// split is k, the largest power of two smaller than n (n > 1).
func split(n int) int { return 1 << (bits.Len(uint(n-1)) - 1) }

// treeHash is MTH(D[n]) of the leaf hashes lh (of at least one leaf).
func treeHash(lh []hash) hash {
	if len(lh) == 1 {
		return lh[0]
	}
	k := split(len(lh))
	return nodeHash(treeHash(lh[:k]), treeHash(lh[k:]))
}

// inclusionPath is PATH(m, D[n]) (RFC 9162 §2.1.3.1) over the leaf hashes lh.
func inclusionPath(m int, lh []hash) []hash {
	if len(lh) <= 1 {
		return nil
	}
	k := split(len(lh))
	if m < k {
		return append(inclusionPath(m, lh[:k]), treeHash(lh[k:]))
	}
	return append(inclusionPath(m-k, lh[k:]), treeHash(lh[:k]))
}

// consistencyPath is PROOF(m, D[n]) (RFC 9162 §2.1.4.1), 0 < m <= n.
func consistencyPath(m int, lh []hash) []hash {
	if m == len(lh) {
		return nil
	}
	return subproof(m, lh, true)
}

func subproof(m int, lh []hash, complete bool) []hash {
	n := len(lh)
	if m == n {
		if complete {
			return nil
		}
		return []hash{treeHash(lh)}
	}
	k := split(n)
	if m <= k {
		return append(subproof(m, lh[:k], complete), treeHash(lh[k:]))
	}
	return append(subproof(m-k, lh[k:], false), treeHash(lh[:k]))
}

// verifyInclusion is RFC 9162 §2.1.3.2: whether path proves that leaf
// hash leaf is leaf index of the tree of size with hash root.
func verifyInclusion(index, size int64, leaf hash, path []hash, root hash) bool {
	if index < 0 || index >= size {
		return false
	}
	fn, sn, r := index, size-1, leaf
	for _, p := range path {
		if sn == 0 {
			return false
		}
		if fn&1 == 1 || fn == sn {
			r = nodeHash(p, r)
			for fn&1 == 0 && fn != 0 {
				fn, sn = fn>>1, sn>>1
			}
		} else {
			r = nodeHash(r, p)
		}
		fn, sn = fn>>1, sn>>1
	}
	return sn == 0 && r == root
}

// verifyConsistency is RFC 9162 §2.1.4.2: whether path proves that the
// tree of size second (hash secondHash) extends the tree of size first
// (hash firstHash).
func verifyConsistency(first, second int64, firstHash, secondHash hash, path []hash) bool {
	switch {
	case first <= 0 || first > second:
		return false
	case first == second:
		return len(path) == 0 && firstHash == secondHash
	}
	if first&(first-1) == 0 {
		path = append([]hash{firstHash}, path...)
	}
	if len(path) == 0 {
		return false
	}
	fn, sn := first-1, second-1
	for fn&1 == 1 {
		fn, sn = fn>>1, sn>>1
	}
	fr, sr := path[0], path[0]
	for _, c := range path[1:] {
		if sn == 0 {
			return false
		}
		if fn&1 == 1 || fn == sn {
			fr, sr = nodeHash(c, fr), nodeHash(c, sr)
			for fn&1 == 0 && fn != 0 {
				fn, sn = fn>>1, sn>>1
			}
		} else {
			sr = nodeHash(sr, c)
		}
		fn, sn = fn>>1, sn>>1
	}
	return sn == 0 && fr == firstHash && sr == secondHash
}

// hexHashes and parseHashes convert a proof to and from its hex form.
func hexHashes(hs []hash) []string {
	out := make([]string, len(hs))
	for i, h := range hs {
		out[i] = hex.EncodeToString(h[:])
	}
	return out
}

func parseHash(s string) (hash, error) {
	var h hash
	b, err := hex.DecodeString(s)
	if err != nil || len(b) != sha256.Size {
		return h, fmt.Errorf("%q is no SHA-256 hash in hex", s)
	}
	copy(h[:], b)
	return h, nil
}

func parseHashes(ss []string) ([]hash, error) {
	out := make([]hash, len(ss))
	for i, s := range ss {
		var err error
		if out[i], err = parseHash(s); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// entryLeaf is the leaf hash of an entry hash (hex).
func entryLeaf(entryHash string) (hash, error) {
	d, err := parseHash(entryHash)
	if err != nil {
		return hash{}, err
	}
	return leafHash(d[:]), nil
}

// frontier is a compact range of a growing tree: the roots of its perfect
// subtrees, largest (leftmost) first, so that the tree hash of every
// prefix is known while the leaves pass by once (farebox books verify).
type frontier struct {
	roots []hash
	sizes []int64
}

func (f *frontier) push(leaf hash) {
	f.roots, f.sizes = append(f.roots, leaf), append(f.sizes, 1)
	for n := len(f.sizes); n > 1 && f.sizes[n-1] == f.sizes[n-2]; n = len(f.sizes) {
		f.roots[n-2], f.sizes[n-2] = nodeHash(f.roots[n-2], f.roots[n-1]), 2*f.sizes[n-2]
		f.roots, f.sizes = f.roots[:n-1], f.sizes[:n-1]
	}
}

// root is MTH of the leaves pushed (at least one): the perfect subtrees
// folded from the right, as MTH splits at the largest power of two.
func (f *frontier) root() hash {
	r := f.roots[len(f.roots)-1]
	for i := len(f.roots) - 2; i >= 0; i-- {
		r = nodeHash(f.roots[i], r)
	}
	return r
}
