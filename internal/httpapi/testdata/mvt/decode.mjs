// Fetches vector tiles from a running farebox and decodes them with
// Mapbox's @mapbox/vector-tile (the decoder map libraries build on), so
// the Go encoder is checked by code it shares nothing with.
//
// usage: node decode.mjs BASE_URL API_KEY PATH... (PATH like
// /v1/transit_map/13-1310-3166.mvt); prints one JSON object per PATH.
import { VectorTile } from '@mapbox/vector-tile';
import Pbf from 'pbf';

const [base, key, ...paths] = process.argv.slice(2);
const out = [];
for (const path of paths) {
  const m = path.match(/\/(\d+)-(\d+)-(\d+)\.mvt$/);
  const [z, x, y] = [Number(m[1]), Number(m[2]), Number(m[3])];
  // fetch asks for gzip and inflates it, as browsers do.
  const res = await fetch(`${base}${path}?api_key=${encodeURIComponent(key)}`);
  const buf = new Uint8Array(await res.arrayBuffer());
  const entry = {
    path, status: res.status, contentType: res.headers.get('content-type'),
    contentEncoding: res.headers.get('content-encoding'),
    requestId: res.headers.get('x-request-id'), layers: {},
  };
  if (res.status === 200) {
    const tile = new VectorTile(new Pbf(buf));
    for (const [name, layer] of Object.entries(tile.layers)) {
      const feats = [];
      for (let i = 0; i < layer.length; i++) {
        const f = layer.feature(i);
        feats.push({
          type: f.type, properties: f.properties,
          geometry: f.loadGeometry().map((ring) => ring.map((p) => [p.x, p.y])),
          geojson: f.toGeoJSON(x, y, z).geometry,
        });
      }
      entry.layers[name] = { version: layer.version, extent: layer.extent, features: feats };
    }
  }
  out.push(entry);
}
process.stdout.write(JSON.stringify(out));
