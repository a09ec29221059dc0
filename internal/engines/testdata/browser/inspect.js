// The inspector app (/inspect, docs/inspect.md) in Chromium with a fake
// camera playing cfg.video (a Y4M of farebox's own codes, written by the
// Go test: still, phone (FD) and Google Wallet rotating (FR1) codes):
// sign-in, the verdict for each code online; the app's BarcodeDetector
// branch through a BarcodeDetector installed in the page over the same
// embedded decoder; with the network cut after a reload from the service
// worker; axe-core on the sign-in and camera screens; the window edges ±
// the configured tolerance; a check with data too old; verification alone
// per kind; random bytes, texts, clocks and images through the verifier and
// the decoder (never a throw); frame to verdict under 4× CPU throttling.
"use strict";
const { harness, ANDROID } = require("./harness");

const results = { pages: {}, errors: [], online: {}, offline: {}, timings: [], fuzz: {}, detector: [], throttled: [] };
const { cfg, phone, check, go, run } = harness(results);
const pause = (ms) => new Promise((r) => setTimeout(r, ms));

// taken returns the verdicts the app recorded since the last call.
const taken = (page) => page.evaluate(() => (window.fareboxInspect.results || []).splice(0));

async function verdicts(page, want, timeoutMs) {
  // Collects the verdicts by code digest until every digest of want is seen.
  const end = Date.now() + timeoutMs;
  const seen = {};
  while (Date.now() < end) {
    for (const r of await taken(page)) seen[r.digest || "none"] = r.outcome;
    if (want.every((d) => d in seen)) break;
    await pause(200);
  }
  return seen;
}

// installDetector runs in the page before its scripts: a BarcodeDetector
// (Shape Detection API: getSupportedFormats, detect → [{rawValue, format,
// boundingBox, cornerPoints}]) over the page's embedded ZXing decoder, as
// Linux Chromium has none. It decodes each frame it is given; nothing in
// it knows the codes of the video.
function installDetector() {
  window.__detectCalls = 0;
  class BarcodeDetector {
    constructor(opts) { this.formats = (opts && opts.formats) || ["aztec", "qr_code"]; }
    static async getSupportedFormats() { return ["aztec", "qr_code"]; }
    async detect(source) {
      window.__detectCalls++;
      const Z = window.ZXing;
      const w = source.videoWidth || source.naturalWidth || source.width, h = source.videoHeight || source.naturalHeight || source.height;
      if (!Z || !w || !h) return [];
      const c = document.createElement("canvas");
      c.width = w; c.height = h;
      const ctx = c.getContext("2d", { willReadFrequently: true });
      ctx.drawImage(source, 0, 0, w, h);
      const d = ctx.getImageData(0, 0, w, h).data, lum = new Uint8ClampedArray(w * h);
      for (let i = 0, j = 0; j < lum.length; i += 4, j++) lum[j] = (d[i] * 306 + d[i + 1] * 601 + d[i + 2] * 117) >> 10;
      const names = { aztec: Z.BarcodeFormat.AZTEC, qr_code: Z.BarcodeFormat.QR_CODE };
      const hints = new Map();
      hints.set(Z.DecodeHintType.POSSIBLE_FORMATS, this.formats.map((f) => names[f]).filter((f) => f !== undefined));
      hints.set(Z.DecodeHintType.TRY_HARDER, true);
      const reader = new Z.MultiFormatReader();
      reader.setHints(hints);
      let res;
      try { res = reader.decode(new Z.BinaryBitmap(new Z.HybridBinarizer(new Z.RGBLuminanceSource(lum, w, h)))); } catch (e) { return []; }
      const pts = res.getResultPoints().map((p) => ({ x: p.getX(), y: p.getY() }));
      const xs = pts.map((p) => p.x), ys = pts.map((p) => p.y);
      return [{ rawValue: res.getText(), format: res.getBarcodeFormat() === Z.BarcodeFormat.QR_CODE ? "qr_code" : "aztec", cornerPoints: pts,
        boundingBox: new DOMRectReadOnly(Math.min(...xs), Math.min(...ys), Math.max(...xs) - Math.min(...xs), Math.max(...ys) - Math.min(...ys)) }];
    }
  }
  window.BarcodeDetector = BarcodeDetector;
}

async function signIn(page) {
  await page.type("#name", cfg.name);
  await page.type("#password", "wrong password!");
  await page.click("#signin-submit");
  await page.waitForSelector("#signin-error:not([hidden])");
  results.wrongPassword = await page.$eval("#signin-error", (e) => e.textContent);
  await page.$eval("#password", (e) => { e.value = ""; });
  await page.type("#password", cfg.password);
  await page.click("#signin-submit");
  await page.waitForSelector("#camera:not([hidden])");
  await page.click("#allow-test").catch(() => {});
}

async function reload(page) {
  await page.reload({ waitUntil: "load" });
  await page.waitForSelector("html[data-ready]");
  await page.waitForSelector("#camera:not([hidden])");
}

// detectorPhase reloads the page with installDetector and collects a few
// verdicts: the app's BarcodeDetector branch end to end.
async function detectorPhase(page) {
  const { identifier } = await page.evaluateOnNewDocument(installDetector);
  await reload(page);
  const end = Date.now() + 30000;
  while (Date.now() < end && results.detector.filter((r) => r.via === "detector").length < 3) {
    for (const r of await taken(page)) results.detector.push({ digest: r.digest, outcome: r.outcome, via: r.via });
    await pause(200);
  }
  results.detectorCalls = await page.evaluate(() => window.__detectCalls);
  await page.removeScriptToEvaluateOnNewDocument(identifier);
}

async function offlinePhase(page) {
  // The network cut: the app reloads from its service worker and judges
  // from the data cached in IndexedDB (decoded by ZXing again).
  await page.evaluate(() => navigator.serviceWorker.ready);
  await page.setOfflineMode(true);
  await reload(page);
  results.offlineAge = await page.$eval("#data-age", (e) => e.textContent);
  results.offline = await verdicts(page, cfg.offline, 60000);
  results.pendingOffline = await page.evaluate(() => new Promise((res) => {
    const r = indexedDB.open("farebox-inspect"); r.onsuccess = () => { const q = r.result.transaction("checks").objectStore("checks").count(); q.onsuccess = () => res(q.result); };
  }));
  await page.setOfflineMode(false);
  await page.evaluate(() => window.fareboxInspect.refresh());
}

// inPage: the edges of the windows, a check with data too old, and
// verification alone per kind of code.
async function inPage(page) {
  Object.assign(results, await page.evaluate(async (cfg) => {
    const V = window.FareboxVerify, S = window.fareboxInspect, out = { bounds: [], verify: {} };
    const data = S.dataOf();
    out.tolerance = data.tolerance;
    for (const b of cfg.bounds) {
      const v = await V.verify(V.b64url(b.payload), b.at, data);
      out.bounds.push({ name: b.name, want: b.want, got: v.outcome, reason: v.reason || "" });
    }
    // The data made older than the session allows: the app's own judge,
    // which keeps and posts the check.
    const real = S.data;
    S.data = Object.assign({}, real, { refreshedAt: Date.now() - (S.session.maxAge + 60) * 1000 });
    try {
      await S.judge(cfg.tickets[0].payload, performance.now(), "test");
      out.tooOld = S.results.filter((r) => r.via === "test").map((r) => r.outcome)[0];
    } finally { S.data = real; }
    // Verification alone: many full checks of a valid code of each kind.
    for (const kind of ["static", "dynamic", "rotating"]) {
      const t = cfg.tickets.find((t) => t.want === "valid" && (t.kind || "static") === kind);
      const b = V.b64url(t.payload), n = 300, o = {};
      const d = S.dataOf(), now = Math.floor(Date.now() / 1000);
      const t0 = performance.now();
      for (let i = 0; i < n; i++) { const v = await V.verify(b, now, d); o[v.outcome] = (o[v.outcome] || 0) + 1; }
      out.verify[kind] = { ms: (performance.now() - t0) / n, runs: n, outcomes: o };
    }
    return out;
  }, cfg));
}

// fuzz: random bytes, mutated and truncated codes of every kind, random
// texts and rotating codes, random clocks through the verifier; random
// images through the decoder.
async function fuzz(page) {
  results.fuzz = await page.evaluate(async (payloads) => {
    const V = window.FareboxVerify, S = window.fareboxInspect;
    const data = Object.assign(S.dataOf(), { refreshedAt: Date.now() });
    const ok = new Set(["valid", "not_yet_valid", "expired", "revoked", "replaced", "not_genuine", "copied", "test_ticket", "unreadable", "data_too_old"]);
    const out = { runs: 0, bad: [], outcomes: {}, images: 0, imageBad: 0 };
    const rnd = (n) => { const b = new Uint8Array(n); for (let o = 0; o < n; o += 65536) crypto.getRandomValues(b.subarray(o, Math.min(n, o + 65536))); return b; };
    const digits = (n) => Array.from(rnd(n), (x) => String(x % 10)).join("");
    const real = payloads.map((p) => V.b64url(p));
    const rotating = real.filter((b) => b[0] === 0x46 && b[1] === 0x52).map((b) => new TextDecoder().decode(b).split("."));
    for (let i = 0; i < 3000; i++) {
      let b;
      const pick = i % 5, r = real[i % real.length];
      if (pick === 0) b = rnd(Math.floor(Math.random() * 400));
      else if (pick === 1) { b = r.slice(); const j = Math.floor(Math.random() * b.length); b[j] ^= 1 << (i % 8); }
      else if (pick === 2) b = r.slice(0, Math.floor(Math.random() * r.length));
      else if (pick === 3) { const s = Array.from(rnd(Math.floor(Math.random() * 300)), (x) => String.fromCharCode(x * 3)).join(""); b = V.bytesOf(s); }
      else { const p = rotating[i % rotating.length]; b = new TextEncoder().encode([p[0], p[1], digits(1 + (i % 12)), digits(5 + (i % 6))].join(".")); }
      if (i % 7 === 0 && b && b.length > 2) { b[0] = 0x46; b[1] = [0x42, 0x44, 0x52][i % 3]; }
      const now = Math.floor(Date.now() / 1000) + Math.floor((Math.random() - 0.5) * 2 ** 34);
      try {
        const v = await V.verify(b, i % 97 === 0 ? NaN : now, data);
        out.runs++;
        if (!v || !ok.has(v.outcome)) out.bad.push(String(v && v.outcome));
        out.outcomes[v.outcome] = (out.outcomes[v.outcome] || 0) + 1;
      } catch (e) { out.bad.push("threw " + e); }
    }
    for (let i = 0; i < 20; i++) {
      const w = 40 + Math.floor(Math.random() * 300), h = 40 + Math.floor(Math.random() * 300);
      const img = new ImageData(new Uint8ClampedArray(rnd(w * h * 4)), w, h);
      try { S.decodeImageData(img); out.images++; } catch (e) { out.imageBad++; }
    }
    return out;
  }, cfg.tickets.map((t) => t.payload));
}

// throttled: frame to verdict with the CPU slowed 4× (DevTools
// Emulation.setCPUThrottlingRate, Lighthouse's mid-tier mobile profile).
async function throttled(page) {
  const cdp = await page.createCDPSession();
  await cdp.send("Emulation.setCPUThrottlingRate", { rate: 4 });
  try {
    await page.evaluate(() => { window.fareboxInspect.timings.splice(0); });
    const end = Date.now() + 30000;
    while (Date.now() < end && (await page.evaluate(() => window.fareboxInspect.timings.length)) < 6) await pause(300);
    results.throttled = await page.evaluate(() => window.fareboxInspect.timings.slice());
  } finally {
    await cdp.send("Emulation.setCPUThrottlingRate", { rate: 1 });
  }
}

run(async (browser) => {
  const page = await phone(browser, ANDROID, cfg.lang || "de");
  const ctx = page.browserContext();
  await ctx.overridePermissions(cfg.base, ["camera"]);
  results.status = await go(page, cfg.base + "/inspect");
  await page.waitForSelector("html[data-ready]");
  await check(page, "inspect-signin-de", results.status);
  await signIn(page);
  results.online = await verdicts(page, cfg.tickets.map((t) => t.digest), 90000);
  await check(page, "inspect-camera-de", 200);
  results.timings = await page.evaluate(() => window.fareboxInspect.timings.slice());
  results.debug = await page.evaluate(() => JSON.stringify({ refreshError: window.fareboxInspect.refreshError, age: document.getElementById("data-age").textContent,
    verdicts: window.fareboxInspect.verdicts.slice(0, 12), reason: document.getElementById("verdict-reason").textContent }));
  await detectorPhase(page);
  await offlinePhase(page);
  await inPage(page);
  await fuzz(page);
  await throttled(page);
  // Let the last checks reach the records route.
  await pause(1500);
});
