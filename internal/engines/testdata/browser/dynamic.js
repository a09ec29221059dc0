// Drives the rendering engine with a dynamic (device-bound) ticket of a
// running farebox: phone A binds and draws the moving code, shows the next
// window, and shows it again offline from what it stored; phone B (a fresh
// Chromium profile) is refused as another phone. Usage: node dynamic.js
// config.json. The Go test (internal/httpapi TestDynamicTicketInChromium)
// starts the server, decodes the screenshots and verifies the codes; this
// script only drives and records.
"use strict";
const fs = require("fs");
const os = require("os");
const path = require("path");
const puppeteer = require("puppeteer-core");

const cfg = JSON.parse(fs.readFileSync(process.argv[2], "utf8"));
const results = { phoneA: {}, phoneB: {}, requests: [], errors: [] };
const shot = (name) => path.join(cfg.outDir, name + ".png");
const axeSource = fs.readFileSync(require.resolve("axe-core/axe.min.js"), "utf8");

// phone launches Chromium with a profile of its own (its own IndexedDB).
async function phone() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "farebox-phone-"));
  const browser = await puppeteer.launch({ executablePath: cfg.chromium, headless: true, userDataDir: dir,
    args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run", "--disable-background-networking",
      "--disable-component-update", "--disable-sync", "--lang=de-DE"] });
  return { browser, close: async () => { await browser.close(); fs.rmSync(dir, { recursive: true, force: true }); } };
}

// open loads the engine as the service serves it, cuts the network if
// offline, and hands it the ticket as an SDK does.
async function open(browser, label, offline) {
  const page = await browser.newPage();
  await page.setViewport({ width: 390, height: 1000, deviceScaleFactor: 2 });
  page.on("pageerror", (e) => results.errors.push(label + ": pageerror " + e.message));
  page.on("console", (m) => { if (m.type() === "error") { results.errors.push(label + ": console " + m.text()); } });
  page.on("request", (req) => {
    const u = req.url();
    if (!u.startsWith("data:") && u !== cfg.engineURL) { results.requests.push(label + ": " + req.method() + " " + u); }
  });
  await page.goto(cfg.engineURL, { waitUntil: "load" });
  if (offline) { await page.setOfflineMode(true); }
  await page.evaluate("window.renderTicket(" + JSON.stringify(cfg.ticket) + ")");
  await page.waitForFunction(() => {
    const b = document.getElementById("ticket").getAttribute("data-binding");
    const img = document.getElementById("barcode");
    return b && b !== "pending" && (b !== "bound" || (img.getAttribute("data-window") && img.complete));
  }, { timeout: 60000 });
  return page;
}

const state = (page) => page.evaluate(async () => {
  const t = (id) => document.getElementById(id).textContent;
  const vis = (id) => getComputedStyle(document.getElementById(id)).display !== "none";
  const stored = await new Promise((resolve) => {
    const req = indexedDB.open("farebox-rendering-engine", 1);
    req.onsuccess = () => {
      const db = req.result;
      if (!db.objectStoreNames.contains("device_keys")) { db.close(); resolve(null); return; }
      const get = db.transaction("device_keys").objectStore("device_keys").getAll();
      get.onsuccess = () => { db.close(); resolve(get.result.map((r) => ({ publicKey: r.publicKey, payload: r.payload,
        extractable: r.privateKey.extractable, algorithm: r.privateKey.algorithm.namedCurve }))); };
    };
    req.onerror = () => resolve(null);
  });
  return { binding: document.getElementById("ticket").getAttribute("data-binding"), title: t("binding-title"), text: t("binding-text"),
    bindingShown: vis("binding"), retryShown: vis("binding-retry"), liveShown: vis("live"), live: t("live-text"),
    barcodeShown: vis("barcode"), window: document.getElementById("barcode").getAttribute("data-window"), stored };
});

// capture screenshots the code box within one window.
async function capture(page, name) {
  for (let i = 0; i < 5; i++) {
    await page.waitForFunction(() => document.getElementById("barcode").complete);
    const w = () => page.evaluate(() => document.getElementById("barcode").getAttribute("data-window"));
    const before = await w();
    const at = Date.now();
    await (await page.$(".codebox")).screenshot({ path: shot(name) });
    if ((await w()) === before) { return { window: Number(before), at, file: shot(name) }; }
  }
  throw new Error(name + ": the window changed during every screenshot");
}

async function axe(page) {
  await page.addScriptTag({ content: axeSource });
  return page.evaluate(async () => {
    const r = await window.axe.run(document, { runOnly: { type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"] } });
    return r.violations.map((v) => v.id + ": " + v.nodes.map((n) => n.target.join(" ")).slice(0, 3).join(", "));
  });
}

(async () => {
  const a = await phone();
  const b = await phone();
  try {
    // Phone A: first display binds and draws; the next window follows.
    let page = await open(a.browser, "phone A");
    const A = results.phoneA;
    A.first = await state(page);
    if (A.first.binding !== "bound") { throw new Error("phone A did not bind: " + JSON.stringify(A.first)); }
    const t0 = Date.now();
    A.shot1 = await capture(page, "dynamic_phone_a_1");
    await page.screenshot({ path: shot("dynamic_phone_a"), fullPage: true });
    A.axe = await axe(page);
    // Cost of one window in this Chromium: encode a 329-byte code, sign one.
    A.perf = await page.evaluate(async () => {
      const data = new Uint8Array(329).map((_, i) => (i * 7) & 255), n = 100;
      let t = performance.now();
      for (let i = 0; i < n; i++) { fareboxAztec.encode(data); }
      const encodeMs = (performance.now() - t) / n;
      const kp = await crypto.subtle.generateKey({ name: "ECDSA", namedCurve: "P-256" }, false, ["sign"]);
      t = performance.now();
      for (let i = 0; i < n; i++) { await crypto.subtle.sign({ name: "ECDSA", hash: "SHA-256" }, kp.privateKey, data); }
      return { encodeMs, signMs: (performance.now() - t) / n };
    });
    await page.waitForFunction((w) => Number(document.getElementById("barcode").getAttribute("data-window")) > w,
      { timeout: 60000 }, A.shot1.window);
    A.renewedAfterMs = Date.now() - t0;
    A.shot2 = await capture(page, "dynamic_phone_a_2");
    await page.close();
    // Phone A offline: the stored key and payload go on.
    page = await open(a.browser, "phone A offline", true);
    A.offline = await state(page);
    A.shot3 = await capture(page, "dynamic_phone_a_offline");
    await page.close();
    // Phone B: another profile, another key: refused.
    page = await open(b.browser, "phone B");
    results.phoneB = await state(page);
    await page.screenshot({ path: shot("dynamic_phone_b_conflict"), fullPage: true });
    results.phoneB.axe = await axe(page);
    await page.close();
  } catch (e) {
    results.errors.push("script: " + (e.stack || e));
  } finally {
    await a.close();
    await b.close();
    fs.writeFileSync(path.join(cfg.outDir, "results.json"), JSON.stringify(results, null, 2));
  }
})();
