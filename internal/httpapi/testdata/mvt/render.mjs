// Renders the API's two tile sources with MapLibre GL in headless Chromium
// (WebGL through SwiftShader) and saves a screenshot per view.
//
// usage: node render.mjs CONFIG.json with {base, key, chromium, outDir,
// views: [{name, center: [lon, lat], zoom}]}; writes OUTDIR/<name>.png and
// prints [{name, png, tiles, errors, colored}] where colored counts the
// pixels of line colours (saturated) in the canvas.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import puppeteer from 'puppeteer-core';

const here = path.dirname(fileURLToPath(import.meta.url));
const cfg = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
const dist = path.join(here, 'node_modules', 'maplibre-gl', 'dist');

const browser = await puppeteer.launch({
  executablePath: cfg.chromium,
  headless: true,
  args: ['--no-sandbox', '--use-angle=swiftshader', '--enable-unsafe-swiftshader', '--ignore-gpu-blocklist'],
});
const out = [];
try {
  for (const view of cfg.views) {
    const page = await browser.newPage();
    await page.setViewport({ width: 900, height: 700 });
    // Same origin as the API: the tiles need no CORS.
    await page.goto(`${cfg.base}/healthz`);
    await page.setContent('<!doctype html><html><body style="margin:0"><div id="map" style="width:900px;height:700px"></div></body></html>');
    await page.addStyleTag({ path: path.join(dist, 'maplibre-gl.css') });
    await page.addScriptTag({ path: path.join(dist, 'maplibre-gl.js') });
    const result = await page.evaluate(async (base, key, view) => {
      const src = (kind) => ({ type: 'vector', tiles: [`${base}/v1/${kind}/{z}-{x}-{y}.mvt?api_key=${key}`], maxzoom: 22 });
      const errors = [];
      let tiles = 0;
      const map = new maplibregl.Map({
        container: 'map', center: view.center, zoom: view.zoom, canvasContextAttributes: { preserveDrawingBuffer: true },
        fadeDuration: 0, attributionControl: false,
        style: {
          version: 8,
          sources: { transit: src('transit_map'), stations: src('station_map') },
          layers: [
            { id: 'bg', type: 'background', paint: { 'background-color': '#f4f1ea' } },
            { id: 'lines', type: 'line', source: 'transit', 'source-layer': 'lines',
              paint: { 'line-color': ['case', ['==', ['get', 'color'], ''], '#555555', ['get', 'color']], 'line-width': 2.5 } },
            { id: 'stations', type: 'circle', source: 'stations', 'source-layer': 'stations',
              paint: { 'circle-radius': 2.5, 'circle-color': '#ffffff', 'circle-stroke-color': '#222222', 'circle-stroke-width': 1 } },
          ],
        },
      });
      map.on('error', (e) => errors.push(String(e.error && e.error.message || e)));
      map.on('sourcedata', (e) => { if (e.tile) tiles++; });
      await new Promise((resolve) => map.once('idle', resolve));
      const c = map.getCanvas();
      const tmp = document.createElement('canvas');
      tmp.width = c.width; tmp.height = c.height;
      const ctx = tmp.getContext('2d');
      ctx.drawImage(c, 0, 0);
      const px = ctx.getImageData(0, 0, tmp.width, tmp.height).data;
      let colored = 0;
      for (let i = 0; i < px.length; i += 4) {
        const mx = Math.max(px[i], px[i + 1], px[i + 2]), mn = Math.min(px[i], px[i + 1], px[i + 2]);
        if (mx - mn > 80) colored++;
      }
      const features = map.queryRenderedFeatures().length;
      return { tiles, errors, colored, features };
    }, cfg.base, cfg.key, view);
    const png = path.join(cfg.outDir, `${view.name}.png`);
    await page.screenshot({ path: png });
    out.push({ name: view.name, png, ...result });
    await page.close();
  }
} finally {
  await browser.close();
}
process.stdout.write(JSON.stringify(out));
