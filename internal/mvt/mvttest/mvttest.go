// Package mvttest decodes Mapbox Vector Tiles for tests, so a round trip
// through mvt.Marshal checks the encoder against a second reading.
package mvttest

import (
	"errors"
	"fmt"
	"math"

	"github.com/farebox/farebox/internal/mvt"
	"google.golang.org/protobuf/encoding/protowire"
)

// Unmarshal decodes a tile, strict about wire types.
func Unmarshal(b []byte) (*mvt.Tile, error) {
	t := &mvt.Tile{}
	err := fields(b, func(num protowire.Number, typ protowire.Type, v []byte, _ uint64) error {
		if num != mvt.TileLayers || typ != protowire.BytesType {
			return nil
		}
		l, err := unmarshalLayer(v)
		if err != nil {
			return err
		}
		t.Layers = append(t.Layers, l)
		return nil
	})
	return t, err
}

func fields(b []byte, fn func(protowire.Number, protowire.Type, []byte, uint64) error) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return protowire.ParseError(n)
		}
		b = b[n:]
		var v []byte
		var u uint64
		switch typ {
		case protowire.VarintType:
			u, n = protowire.ConsumeVarint(b)
		case protowire.BytesType:
			v, n = protowire.ConsumeBytes(b)
		case protowire.Fixed64Type:
			u, n = protowire.ConsumeFixed64(b)
		case protowire.Fixed32Type:
			var u32 uint32
			u32, n = protowire.ConsumeFixed32(b)
			u = uint64(u32)
		default:
			n = protowire.ConsumeFieldValue(num, typ, b)
		}
		if n < 0 {
			return protowire.ParseError(n)
		}
		b = b[n:]
		if err := fn(num, typ, v, u); err != nil {
			return err
		}
	}
	return nil
}

func packed(v []byte) ([]uint32, error) {
	var out []uint32
	for len(v) > 0 {
		x, n := protowire.ConsumeVarint(v)
		if n < 0 {
			return nil, protowire.ParseError(n)
		}
		out = append(out, uint32(x))
		v = v[n:]
	}
	return out, nil
}

func unmarshalLayer(b []byte) (mvt.Layer, error) {
	var l mvt.Layer
	var keys []string
	var vals []any
	type rawFeat struct {
		id    uint64
		hasID bool
		typ   mvt.GeomType
		tags  []uint32
		geom  []uint32
	}
	var raws []rawFeat
	version := uint64(1)
	err := fields(b, func(num protowire.Number, typ protowire.Type, v []byte, u uint64) error {
		switch num {
		case mvt.LayerVersion:
			version = u
		case mvt.LayerName:
			l.Name = string(v)
		case mvt.LayerExtent:
			l.Extent = uint32(u)
		case mvt.LayerKeys:
			keys = append(keys, string(v))
		case mvt.LayerValues:
			var val any
			err := fields(v, func(num protowire.Number, _ protowire.Type, v []byte, u uint64) error {
				switch num {
				case mvt.ValString:
					val = string(v)
				case mvt.ValFloat:
					val = math.Float32frombits(uint32(u))
				case mvt.ValDouble:
					val = math.Float64frombits(u)
				case mvt.ValInt:
					val = int64(u)
				case mvt.ValUint:
					val = u
				case mvt.ValSint:
					val = protowire.DecodeZigZag(u)
				case mvt.ValBool:
					val = u != 0
				}
				return nil
			})
			if err != nil {
				return err
			}
			vals = append(vals, val)
		case mvt.LayerFeatures:
			var rf rawFeat
			err := fields(v, func(num protowire.Number, _ protowire.Type, v []byte, u uint64) error {
				var err error
				switch num {
				case mvt.FeatID:
					rf.id, rf.hasID = u, true
				case mvt.FeatType:
					rf.typ = mvt.GeomType(u)
				case mvt.FeatTags:
					rf.tags, err = packed(v)
				case mvt.FeatGeometry:
					rf.geom, err = packed(v)
				}
				return err
			})
			if err != nil {
				return err
			}
			raws = append(raws, rf)
		}
		return nil
	})
	if err != nil {
		return l, err
	}
	if version != 2 {
		return l, fmt.Errorf("mvt: layer %s has version %d", l.Name, version)
	}
	for _, rf := range raws {
		f := mvt.Feature{ID: rf.id, HasID: rf.hasID, Type: rf.typ}
		if len(rf.tags)%2 != 0 {
			return l, errors.New("mvt: odd number of tags")
		}
		for i := 0; i < len(rf.tags); i += 2 {
			if int(rf.tags[i]) >= len(keys) || int(rf.tags[i+1]) >= len(vals) {
				return l, errors.New("mvt: tag out of range")
			}
			f.Props = append(f.Props, mvt.Prop{Key: keys[rf.tags[i]], Value: vals[rf.tags[i+1]]})
		}
		g, err := decodeGeometry(rf.geom)
		if err != nil {
			return l, err
		}
		if rf.typ == mvt.Point && len(g) > 0 {
			var all []mvt.XY
			for _, p := range g {
				all = append(all, p...)
			}
			g = [][]mvt.XY{all}
		}
		f.Geometry = g
		l.Features = append(l.Features, f)
	}
	return l, nil
}

func decodeGeometry(c []uint32) ([][]mvt.XY, error) {
	var parts [][]mvt.XY
	var x, y int32
	for i := 0; i < len(c); {
		id, count := int(c[i]&7), int(c[i]>>3)
		i++
		switch id {
		case mvt.CmdMoveTo, mvt.CmdLineTo:
			if i+2*count > len(c) {
				return nil, errors.New("mvt: truncated geometry")
			}
			for k := 0; k < count; k++ {
				x += protowireZZ(c[i])
				y += protowireZZ(c[i+1])
				i += 2
				if id == mvt.CmdMoveTo {
					parts = append(parts, nil)
				}
				if len(parts) == 0 {
					return nil, errors.New("mvt: LineTo before MoveTo")
				}
				parts[len(parts)-1] = append(parts[len(parts)-1], mvt.XY{X: x, Y: y})
			}
		case mvt.CmdClosePath:
		default:
			return nil, fmt.Errorf("mvt: unknown command %d", id)
		}
	}
	return parts, nil
}

func protowireZZ(u uint32) int32 { return int32(u>>1) ^ -int32(u&1) }
