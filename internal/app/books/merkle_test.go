package books

import (
	"encoding/hex"
	"fmt"
	"testing"
)

// ctLeaves are the leaves of the Certificate Transparency reference test
// vectors (RFC 6962's tree hashing, unchanged in RFC 9162), with the root
// of each prefix of them.
var ctLeaves = []string{"", "00", "10", "2021", "3031", "40414243", "5051525354555657", "606162636465666768696a6b6c6d6e6f"}

var ctRoots = []string{
	"6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
	"fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125",
	"aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77",
	"d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
	"4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4",
	"76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef",
	"ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c",
	"5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328",
}

// TestMerkleReferenceVectors: the tree hash of each prefix of the
// reference leaves is the reference root.
func TestMerkleReferenceVectors(t *testing.T) {
	var lh []hash
	for i, l := range ctLeaves {
		d, _ := hex.DecodeString(l)
		lh = append(lh, leafHash(d))
		if got := treeHash(lh); hex.EncodeToString(got[:]) != ctRoots[i] {
			t.Errorf("root of %d leaves = %x, want %s", i+1, got, ctRoots[i])
		}
	}
}

// leaves are n distinct leaf hashes.
func leaves(n int) []hash {
	lh := make([]hash, n)
	for i := range lh {
		lh[i] = leafHash([]byte(fmt.Sprint("leaf ", i)))
	}
	return lh
}

// sizes are the tree sizes the proofs are tried at: every size to 33
// (1, 2, each power of two, odd and even), and around 1024.
func sizes() []int {
	var out []int
	for n := 1; n <= 33; n++ {
		out = append(out, n)
	}
	return append(out, 63, 64, 65, 1023, 1024, 1025)
}

// TestInclusionProofs: the path of every leaf of every size verifies
// with RFC 9162's algorithm; the wrong leaf, index, root or a path
// one hash short or long does not.
func TestInclusionProofs(t *testing.T) {
	for _, n := range sizes() {
		lh := leaves(n)
		root := treeHash(lh)
		for m := 0; m < n; m++ {
			if n > 70 && m%97 != 0 && m != n-1 {
				continue
			}
			p := inclusionPath(m, lh)
			if !verifyInclusion(int64(m), int64(n), lh[m], p, root) {
				t.Fatalf("size %d leaf %d: the proof does not verify", n, m)
			}
			other := lh[(m+1)%n]
			if n > 1 && verifyInclusion(int64(m), int64(n), other, p, root) {
				t.Fatalf("size %d leaf %d: another leaf verifies", n, m)
			}
			if sib := m ^ 1; (sib < n && verifyInclusion(int64(sib), int64(n), lh[m], p, root)) || verifyInclusion(int64(n), int64(n), lh[m], p, root) {
				t.Fatalf("size %d leaf %d: a wrong index verifies", n, m)
			}
			if len(p) > 0 && verifyInclusion(int64(m), int64(n), lh[m], p[:len(p)-1], root) {
				t.Fatalf("size %d leaf %d: a short path verifies", n, m)
			}
			if verifyInclusion(int64(m), int64(n), lh[m], append(p, root), root) {
				t.Fatalf("size %d leaf %d: a long path verifies", n, m)
			}
			if verifyInclusion(int64(m), int64(n), lh[m], p, leafHash([]byte("x"))) {
				t.Fatalf("size %d leaf %d: a wrong root verifies", n, m)
			}
		}
	}
}

// TestConsistencyProofs: the proof between every two sizes verifies with
// RFC 9162's algorithm; a changed earlier tree, another later tree or a changed
// proof does not.
func TestConsistencyProofs(t *testing.T) {
	for _, n := range sizes() {
		lh := leaves(n)
		second := treeHash(lh)
		for m := 1; m <= n; m++ {
			if n > 70 && m%97 != 0 && m < n-2 && m&(m-1) != 0 {
				continue
			}
			first := treeHash(lh[:m])
			p := consistencyPath(m, lh)
			if !verifyConsistency(int64(m), int64(n), first, second, p) {
				t.Fatalf("%d → %d: the proof does not verify", m, n)
			}
			forked := append(append([]hash{}, lh[:m-1]...), leafHash([]byte("forged")))
			if verifyConsistency(int64(m), int64(n), treeHash(forked), second, p) {
				t.Fatalf("%d → %d: a forked earlier tree verifies", m, n)
			}
			if m < n && verifyConsistency(int64(m), int64(n), first, treeHash(lh[:n-1]), p) {
				t.Fatalf("%d → %d: a shorter later tree verifies", m, n)
			}
			for i := range p {
				bad := append([]hash{}, p...)
				bad[i][0] ^= 1
				if verifyConsistency(int64(m), int64(n), first, second, bad) {
					t.Fatalf("%d → %d: a proof changed at %d verifies", m, n, i)
				}
			}
		}
	}
	if verifyConsistency(0, 1, hash{}, hash{}, nil) || verifyConsistency(2, 1, hash{}, hash{}, nil) {
		t.Error("a size 0 or a shrinking tree verifies")
	}
}

// TestReferenceProofs: proofs over the reference leaves have the lengths
// RFC 9162's examples give (tree of 7 leaves: d0's path is 3 hashes, the
// proof 3 → 7 is 4 hashes, 4 → 7 is 1).
func TestReferenceProofs(t *testing.T) {
	var lh []hash
	for _, l := range ctLeaves[:7] {
		d, _ := hex.DecodeString(l)
		lh = append(lh, leafHash(d))
	}
	if got := len(inclusionPath(0, lh)); got != 3 {
		t.Errorf("PATH(0, D[7]) has %d hashes", got)
	}
	if got := len(inclusionPath(6, lh)); got != 2 {
		t.Errorf("PATH(6, D[7]) has %d hashes", got)
	}
	for m, want := range map[int]int{3: 4, 4: 1, 6: 3} {
		if got := len(consistencyPath(m, lh)); got != want {
			t.Errorf("PROOF(%d, D[7]) has %d hashes, want %d", m, got, want)
		}
	}
}

// TestFrontier: the compact range gives the tree hash of every prefix.
func TestFrontier(t *testing.T) {
	lh := leaves(1030)
	var f frontier
	for i, l := range lh {
		f.push(l)
		if f.root() != treeHash(lh[:i+1]) {
			t.Fatalf("root of %d leaves differs", i+1)
		}
	}
}
