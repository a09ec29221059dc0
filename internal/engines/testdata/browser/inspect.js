// The inspector app (/inspect, docs/inspect.md) in Chromium with a fake
// camera playing cfg.video (a Y4M of farebox's own barcodes, written by
// the Go test): sign-in, the verdict for each ticket online, then with the
// network cut after a reload from the service worker, axe-core on the
// sign-in and camera screens, the timings, and random bytes, texts, clocks
// and images through the verifier and the decoder (never a throw).
"use strict";
const { harness, ANDROID } = require("./harness");

const results = { pages: {}, errors: [], online: {}, offline: {}, timings: [], fuzz: {}, posted: 0 };
const { cfg, phone, check, go, run } = harness(results);

async function verdicts(page, want, timeoutMs) {
  // Collects the verdicts by payload digest until every digest of want is seen.
  const end = Date.now() + timeoutMs;
  const seen = {};
  while (Date.now() < end) {
    const got = await page.evaluate(() => (window.fareboxInspect.results || []).splice(0));
    for (const r of got) seen[r.digest || "none"] = r.outcome;
    if (want.every((d) => d in seen)) break;
    await new Promise((r) => setTimeout(r, 200));
  }
  return seen;
}

run(async (browser) => {
  const page = await phone(browser, ANDROID, cfg.lang || "de");
  const ctx = page.browserContext();
  await ctx.overridePermissions(cfg.base, ["camera"]);
  results.status = await go(page, cfg.base + "/inspect");
  await page.waitForSelector("html[data-ready]");
  await check(page, "inspect-signin-de", results.status);
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
  const digests = cfg.tickets.map((t) => t.digest);
  results.online = await verdicts(page, digests, 60000);
  await check(page, "inspect-camera-de", 200);
  results.timings = await page.evaluate(() => window.fareboxInspect.timings);
  results.debug = await page.evaluate(() => JSON.stringify({ refreshError: window.fareboxInspect.refreshError, age: document.getElementById("data-age").textContent,
    verdicts: window.fareboxInspect.verdicts.slice(0, 12), reason: document.getElementById("verdict-reason").textContent }));
  // Let the checks reach the records route.
  await page.evaluate(() => new Promise((r) => setTimeout(r, 1500)));

  // The network cut: the app reloads from its service worker and judges
  // from the data cached in IndexedDB.
  await page.evaluate(() => navigator.serviceWorker.ready);
  await page.setOfflineMode(true);
  await page.reload({ waitUntil: "load" });
  await page.waitForSelector("html[data-ready]");
  await page.waitForSelector("#camera:not([hidden])");
  results.offlineAge = await page.$eval("#data-age", (e) => e.textContent);
  results.offline = await verdicts(page, cfg.offline, 60000);
  results.pendingOffline = await page.evaluate(() => new Promise((res) => {
    const r = indexedDB.open("farebox-inspect"); r.onsuccess = () => { const q = r.result.transaction("checks").objectStore("checks").count(); q.onsuccess = () => res(q.result); };
  }));
  await page.setOfflineMode(false);
  await page.evaluate(() => window.fareboxInspect.refresh());
  await page.evaluate(() => new Promise((r) => setTimeout(r, 1500)));

  // Bad input: random bytes, mutated payloads, random text and clocks
  // through the verifier; random images through the decoder.
  results.fuzz = await page.evaluate(async (payloads) => {
    const V = window.FareboxVerify, S = window.fareboxInspect;
    const data = { keys: S.data.keys, revoked: S.data.revoked, revokedKeys: S.data.revokedKeys, refreshedAt: Date.now(), maxAge: 86400 };
    const ok = new Set(["valid", "not_yet_valid", "expired", "revoked", "replaced", "not_genuine", "copied", "test_ticket", "unreadable", "stale"]);
    const out = { runs: 0, bad: [], outcomes: {}, images: 0, imageBad: 0, verifyMs: 0, verifyRuns: 0 };
    const rnd = (n) => { const b = new Uint8Array(n); for (let o = 0; o < n; o += 65536) crypto.getRandomValues(b.subarray(o, Math.min(n, o + 65536))); return b; };
    const real = payloads.map((p) => V.b64url(p));
    for (let i = 0; i < 3000; i++) {
      let b;
      const pick = i % 4;
      if (pick === 0) b = rnd(Math.floor(Math.random() * 400));
      else if (pick === 1) { b = real[i % real.length].slice(); const j = Math.floor(Math.random() * b.length); b[j] ^= 1 << (i % 8); }
      else if (pick === 2) { b = real[i % real.length].slice(0, Math.floor(Math.random() * real[i % real.length].length)); }
      else { const s = Array.from(rnd(Math.floor(Math.random() * 300)), (x) => String.fromCharCode(x * 3)).join(""); b = V.bytesOf(s); }
      if (i % 7 === 0 && b && b.length > 2) { b[0] = 0x46; b[1] = i % 2 ? 0x42 : 0x44; }
      const now = Math.floor(Date.now() / 1000) + Math.floor((Math.random() - 0.5) * 2 ** 34);
      try {
        const v = await V.verify(b, now, data);
        out.runs++;
        if (!v || !ok.has(v.outcome)) out.bad.push(String(v && v.outcome));
        out.outcomes[v.outcome] = (out.outcomes[v.outcome] || 0) + 1;
      } catch (e) { out.bad.push("threw " + e); }
    }
    // Verification alone of a genuine payload.
    const t0 = performance.now();
    for (let i = 0; i < 200; i++) await V.verify(real[i % real.length], Math.floor(Date.now() / 1000), data);
    out.verifyMs = (performance.now() - t0) / 200;
    for (let i = 0; i < 20; i++) {
      const w = 40 + Math.floor(Math.random() * 300), h = 40 + Math.floor(Math.random() * 300);
      const img = new ImageData(new Uint8ClampedArray(rnd(w * h * 4)), w, h);
      try { S.decodeImageData(img); out.images++; } catch (e) { out.imageBad++; }
    }
    return out;
  }, cfg.tickets.map((t) => t.payload));
});
