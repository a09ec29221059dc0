package engines

import (
	"bytes"
	"encoding/json"
	"image"
	"image/color"
	"image/png"
	"math/rand/v2"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/farebox/farebox/internal/barcode"
	"github.com/farebox/farebox/internal/testtool"
)

type jsSymbol struct {
	Size    int      `json:"size"`
	Compact bool     `json:"compact"`
	Layers  int      `json:"layers"`
	Rows    []string `json:"rows"`
}

// encodeJS runs the engine's Aztec encoder (assets/aztec.js) in node on
// payloads.
func encodeJS(t *testing.T, payloads [][]byte) []jsSymbol {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("node is required (apt-get install nodejs): ", err)
	}
	in, _ := json.Marshal(payloads) // []byte marshals as base64
	cmd := exec.Command(node, filepath.Join("testdata", "aztec", "matrices.js"), filepath.Join("assets", "aztec.js"))
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node matrices.js: %v\n%s", err, stderr.String())
	}
	var syms []jsSymbol
	if err := json.Unmarshal(out, &syms); err != nil {
		t.Fatal(err)
	}
	return syms
}

// symbolPNG draws s at 4 pixels per module with a quiet zone of 4 modules,
// as the engine draws it.
func symbolPNG(s jsSymbol) []byte {
	const scale, quiet = 4, 4
	n := (s.Size + 2*quiet) * scale
	img := image.NewGray(image.Rect(0, 0, n, n))
	for i := range img.Pix {
		img.Pix[i] = 255
	}
	for y, row := range s.Rows {
		for x, c := range row {
			if c != '1' {
				continue
			}
			for dy := 0; dy < scale; dy++ {
				for dx := 0; dx < scale; dx++ {
					img.SetGray((x+quiet)*scale+dx, (y+quiet)*scale+dy, color.Gray{})
				}
			}
		}
	}
	var buf bytes.Buffer
	_ = png.Encode(&buf, img)
	return buf.Bytes()
}

// TestAztecEncoderJS: the engine's JavaScript Aztec encoder makes symbols
// ZXing reads back byte for byte, for every symbol size it picks between
// one byte and 1,850 (compact 1–4 layers, full range up
// to 31 layers, the 11-bit length from 32 bytes on, bit stuffing of
// all-zero and all-one words), and never larger than the Go encoder's
// symbol with the same error correction.
func TestAztecEncoderJS(t *testing.T) {
	testtool.FullSuiteOnly(t, testtool.Validator)
	rnd := rand.New(rand.NewPCG(32, 1))
	var payloads [][]byte
	for _, n := range []int{1, 2, 5, 12, 31, 32, 33, 40, 62, 63, 64, 90, 120, 180, 250, 300, 350, 420, 500, 640, 800, 1000, 1300, 1600, 1850} {
		p := make([]byte, n)
		for i := range p {
			p[i] = byte(rnd.UintN(256))
		}
		payloads = append(payloads, p)
	}
	// Runs of zeros and ones: the words bit stuffing must break up.
	payloads = append(payloads, make([]byte, 100), bytes.Repeat([]byte{0xff}, 100), bytes.Repeat([]byte{0xff}, 7))
	syms := encodeJS(t, payloads)
	seen := map[bool]map[int]bool{true: {}, false: {}}
	for i, s := range syms {
		p := payloads[i]
		got, err := barcode.DecodeImage(symbolPNG(s))
		if err != nil || !bytes.Equal(got, p) {
			t.Errorf("%d bytes (%d layers, compact %v): decoded %d bytes, err %v", len(p), s.Layers, s.Compact, len(got), err)
			continue
		}
		seen[s.Compact][s.Layers] = true
		m, err := barcode.Aztec(p)
		if err != nil {
			t.Fatal(err)
		}
		if s.Size > m.Size {
			t.Errorf("%d bytes: JavaScript symbol %d modules, Go %d", len(p), s.Size, m.Size)
		}
	}
	if len(seen[true]) < 3 || len(seen[false]) < 10 || !seen[false][31] {
		t.Errorf("symbol sizes covered: compact %v, full %v", seen[true], seen[false])
	}
}
