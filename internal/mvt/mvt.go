// Package mvt encodes Mapbox Vector Tiles (specification 2.1) on
// google.golang.org/protobuf's protowire (mvttest decodes them for tests), and holds the geometry steps a
// tile needs: Web Mercator tile coordinates, clipping to the tile with a
// buffer and Douglas–Peucker simplification in tile units.
//
// It is an adapter: it knows the wire format and planar geometry, nothing
// about transit.
package mvt

import (
	"errors"
	"fmt"
	"math"

	"google.golang.org/protobuf/encoding/protowire"
)

// DefaultExtent is the number of tile units along a tile's side.
const DefaultExtent = 4096

// GeomType is a feature's geometry type (spec 4.3.4).
type GeomType int

// Geometry types.
const (
	Unknown    GeomType = 0
	Point      GeomType = 1
	LineString GeomType = 2
	Polygon    GeomType = 3
)

// XY is a point in tile units (origin top left, y down).
type XY struct{ X, Y int32 }

// Prop is one attribute of a feature. Value is a string, int64, uint64,
// float64, float32 or bool.
type Prop struct {
	Key   string
	Value any
}

// Feature is one feature of a layer. Geometry holds the points of a Point
// feature as one part, or one part per line of a LineString feature.
type Feature struct {
	ID       uint64
	HasID    bool
	Type     GeomType
	Geometry [][]XY
	Props    []Prop
}

// Layer is one named layer.
type Layer struct {
	Name     string
	Extent   uint32 // 0 means DefaultExtent
	Features []Feature
}

// Tile is a vector tile.
type Tile struct{ Layers []Layer }

// Field numbers of vector_tile.proto (spec 2.1), for the encoder here and
// the decoder of the tests (mvttest).
const (
	TileLayers = 3

	LayerVersion  = 15
	LayerName     = 1
	LayerFeatures = 2
	LayerKeys     = 3
	LayerValues   = 4
	LayerExtent   = 5

	FeatID       = 1
	FeatTags     = 2
	FeatType     = 3
	FeatGeometry = 4

	ValString = 1
	ValFloat  = 2
	ValDouble = 3
	ValInt    = 4
	ValUint   = 5
	ValSint   = 6
	ValBool   = 7
)

// Geometry commands (spec 4.3).
const (
	CmdMoveTo    = 1
	CmdLineTo    = 2
	CmdClosePath = 7
)

// Marshal encodes the tile. Keys and values are deduplicated per layer;
// features without geometry are left out (the spec requires geometry).
func Marshal(t *Tile) ([]byte, error) {
	var out []byte
	for i := range t.Layers {
		l, err := marshalLayer(&t.Layers[i])
		if err != nil {
			return nil, err
		}
		out = protowire.AppendTag(out, TileLayers, protowire.BytesType)
		out = protowire.AppendBytes(out, l)
	}
	return out, nil
}

type valueKey struct {
	kind byte
	s    string
	u    uint64
}

func marshalLayer(l *Layer) ([]byte, error) {
	if l.Name == "" {
		return nil, errors.New("mvt: a layer needs a name")
	}
	ext := l.Extent
	if ext == 0 {
		ext = DefaultExtent
	}
	keys := map[string]uint32{}
	var keyList []string
	vals := map[valueKey]uint32{}
	var valList [][]byte
	var feats []byte
	var tags []uint32
	var geom []uint32
	for fi := range l.Features {
		f := &l.Features[fi]
		geom = encodeGeometry(geom[:0], f.Type, f.Geometry)
		if len(geom) == 0 {
			continue
		}
		tags = tags[:0]
		for _, p := range f.Props {
			k, ok := keys[p.Key]
			if !ok {
				k = uint32(len(keyList))
				keys[p.Key] = k
				keyList = append(keyList, p.Key)
			}
			vk, enc, err := encodeValue(p.Value)
			if err != nil {
				return nil, fmt.Errorf("mvt: layer %s key %s: %w", l.Name, p.Key, err)
			}
			v, ok := vals[vk]
			if !ok {
				v = uint32(len(valList))
				vals[vk] = v
				valList = append(valList, enc)
			}
			tags = append(tags, k, v)
		}
		var fb []byte
		if f.HasID {
			fb = protowire.AppendTag(fb, FeatID, protowire.VarintType)
			fb = protowire.AppendVarint(fb, f.ID)
		}
		if len(tags) > 0 {
			fb = appendPacked(fb, FeatTags, tags)
		}
		fb = protowire.AppendTag(fb, FeatType, protowire.VarintType)
		fb = protowire.AppendVarint(fb, uint64(f.Type))
		fb = appendPacked(fb, FeatGeometry, geom)
		feats = protowire.AppendTag(feats, LayerFeatures, protowire.BytesType)
		feats = protowire.AppendBytes(feats, fb)
	}
	var b []byte
	b = protowire.AppendTag(b, LayerVersion, protowire.VarintType)
	b = protowire.AppendVarint(b, 2)
	b = protowire.AppendTag(b, LayerName, protowire.BytesType)
	b = protowire.AppendString(b, l.Name)
	b = append(b, feats...)
	for _, k := range keyList {
		b = protowire.AppendTag(b, LayerKeys, protowire.BytesType)
		b = protowire.AppendString(b, k)
	}
	for _, v := range valList {
		b = protowire.AppendTag(b, LayerValues, protowire.BytesType)
		b = protowire.AppendBytes(b, v)
	}
	b = protowire.AppendTag(b, LayerExtent, protowire.VarintType)
	b = protowire.AppendVarint(b, uint64(ext))
	return b, nil
}

func appendPacked(b []byte, num protowire.Number, xs []uint32) []byte {
	n := 0
	for _, x := range xs {
		n += protowire.SizeVarint(uint64(x))
	}
	b = protowire.AppendTag(b, num, protowire.BytesType)
	b = protowire.AppendVarint(b, uint64(n))
	for _, x := range xs {
		b = protowire.AppendVarint(b, uint64(x))
	}
	return b
}

func encodeValue(v any) (valueKey, []byte, error) {
	var b []byte
	switch x := v.(type) {
	case string:
		b = protowire.AppendTag(b, ValString, protowire.BytesType)
		return valueKey{kind: 's', s: x}, protowire.AppendString(b, x), nil
	case bool:
		u := uint64(0)
		if x {
			u = 1
		}
		b = protowire.AppendTag(b, ValBool, protowire.VarintType)
		return valueKey{kind: 'b', u: u}, protowire.AppendVarint(b, u), nil
	case int64:
		if x < 0 {
			b = protowire.AppendTag(b, ValSint, protowire.VarintType)
			return valueKey{kind: 'i', u: uint64(x)}, protowire.AppendVarint(b, protowire.EncodeZigZag(x)), nil
		}
		b = protowire.AppendTag(b, ValInt, protowire.VarintType)
		return valueKey{kind: 'i', u: uint64(x)}, protowire.AppendVarint(b, uint64(x)), nil
	case int:
		return encodeValue(int64(x))
	case uint64:
		b = protowire.AppendTag(b, ValUint, protowire.VarintType)
		return valueKey{kind: 'u', u: x}, protowire.AppendVarint(b, x), nil
	case float64:
		b = protowire.AppendTag(b, ValDouble, protowire.Fixed64Type)
		return valueKey{kind: 'd', u: math.Float64bits(x)}, protowire.AppendFixed64(b, math.Float64bits(x)), nil
	case float32:
		b = protowire.AppendTag(b, ValFloat, protowire.Fixed32Type)
		return valueKey{kind: 'f', u: uint64(math.Float32bits(x))}, protowire.AppendFixed32(b, math.Float32bits(x)), nil
	}
	return valueKey{}, nil, fmt.Errorf("unsupported value type %T", v)
}

func command(id, count int) uint32 { return uint32(id&7) | uint32(count)<<3 }

func zz(d int32) uint32 { return uint32((d << 1) ^ (d >> 31)) }

// encodeGeometry writes the command stream; consecutive duplicate points
// are dropped and line parts left with fewer than two points are skipped.
func encodeGeometry(dst []uint32, t GeomType, parts [][]XY) []uint32 {
	var cx, cy int32
	switch t {
	case Point:
		n := 0
		for _, p := range parts {
			n += len(p)
		}
		if n == 0 {
			return dst
		}
		dst = append(dst, command(CmdMoveTo, n))
		for _, part := range parts {
			for _, p := range part {
				dst = append(dst, zz(p.X-cx), zz(p.Y-cy))
				cx, cy = p.X, p.Y
			}
		}
	case LineString, Polygon:
		for _, part := range parts {
			pts := dedup(part)
			if len(pts) < 2 || t == Polygon && len(pts) < 3 {
				continue
			}
			if t == Polygon && pts[0] == pts[len(pts)-1] {
				pts = pts[:len(pts)-1]
			}
			dst = append(dst, command(CmdMoveTo, 1), zz(pts[0].X-cx), zz(pts[0].Y-cy))
			cx, cy = pts[0].X, pts[0].Y
			dst = append(dst, command(CmdLineTo, len(pts)-1))
			for _, p := range pts[1:] {
				dst = append(dst, zz(p.X-cx), zz(p.Y-cy))
				cx, cy = p.X, p.Y
			}
			if t == Polygon {
				dst = append(dst, command(CmdClosePath, 1))
			}
		}
	}
	return dst
}

func dedup(pts []XY) []XY {
	for i := 1; i < len(pts); i++ {
		if pts[i] == pts[i-1] {
			out := append([]XY(nil), pts[:i]...)
			for _, p := range pts[i+1:] {
				if p != out[len(out)-1] {
					out = append(out, p)
				}
			}
			return out
		}
	}
	return pts
}
