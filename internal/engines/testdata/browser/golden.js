// Takes the golden screenshots of farebox's web pages (docs/web.md
// "Golden screenshots") in the system Chromium, one browser and one page
// for all of them: cfg.golden is the list, in order, of
//   { name, path, viewport, lang, full, steps, hide, frameHide, out }
// where steps are what a person does after the page loaded ({fill:
// selector, text}, {press: selector} waiting for the navigation it
// causes, {click: selector}, {waitFor: selector}); an entry without out
// only acts (a sign-in) and keeps no screenshot. Before each screenshot
// the page is masked: the random part of every id, of API key prefixes and
// inspection keys, and the server's port replaced, animations and the caret off, hide (and frameHide in the
// ticket frame, once its engine drew the ticket) kept in their boxes but
// not drawn. The browser's clock is pinned to cfg.now, the server's test
// clock, in every frame before any page script runs, so the ticket frame
// judges validity as the server does. On a touch layout (at most 480 px
// wide) every interactive target is measured: results.small[name] lists
// those under 44 × 44 px. Usage: node golden.js config.json; the Go test
// (internal/httpapi golden_browser_test.go) compares the PNGs.
"use strict";
const { harness, ANDROID, smallTargets, pinClock } = require("./harness");

const results = { pages: {}, small: {}, urls: {}, errors: [] };
const { cfg, phone, run } = harness(results);

// mask replaces what differs between runs (random ids, the server's port)
// by fixed text, so a golden screenshot shows only what the page's code
// decides; it also stops every animation and the caret.
const mask = (page, hide) => page.evaluate((hide) => {
  const id = /farebox-([a-z_]+)-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;
  const walk = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let n = walk.nextNode(); n; n = walk.nextNode()) {
    n.nodeValue = n.nodeValue.replace(id, "farebox-$1-00000000-0000-0000-0000-000000000000").replace(/127\.0\.0\.1:[0-9]+/g, "127.0.0.1:8080")
      // An API key's random prefix, an inspection key's public key.
      .replace(/fbx_(live|test)_[A-Za-z0-9]{8}/g, "fbx_$1_AAAAAAAA").replace(/("public_key": ")[A-Za-z0-9_-]{43}"/g, '$1' + "A".repeat(43) + '"');
  }
  for (const e of document.querySelectorAll("input, textarea")) {
    if (e.value) { e.value = e.value.replace(/127\.0\.0\.1:[0-9]+/g, "127.0.0.1:8080"); }
  }
  const s = document.createElement("style");
  s.textContent = "*, *::before, *::after { animation: none !important; transition: none !important; caret-color: transparent !important; }" +
    // What no text replacement can fix (a key's random prefix, the ticket's
    // live clock and barcode) keeps its box but is not drawn.
    hide.map((h) => h + " { visibility: hidden !important; }").join("");
  document.head.appendChild(s);
}, hide || []);

async function step(page, s) {
  if (s.fill) {
    await page.$eval(s.fill, (el) => { el.value = ""; });
    await page.type(s.fill, s.text);
  } else if (s.press) {
    await Promise.all([page.waitForNavigation({ waitUntil: "load" }), page.click(s.press)]);
  } else if (s.click) {
    await page.click(s.click);
  } else if (s.waitFor) {
    await page.waitForSelector(s.waitFor);
  }
}

run(async (browser) => {
  const page = await phone(browser, ANDROID, "en-GB");
  await pinClock(page, cfg.now);
  for (const g of cfg.golden) {
    await page.setExtraHTTPHeaders({ "Accept-Language": g.lang === "de" ? "de-DE,de;q=0.9" : "en-GB,en;q=0.9" });
    await page.setViewport(g.viewport);
    if (g.path) { await page.goto(cfg.base + g.path, { waitUntil: "load" }); }
    for (const s of g.steps || []) { await step(page, s); }
    if (!g.out) { continue; }
    results.urls[g.name] = page.url();
    const frameEl = await page.$("#ticket-frame");
    let frame = null;
    if (frameEl) {
      // The ticket frame once its engine drew the ticket, sized by the page's script.
      frame = await frameEl.contentFrame();
      await frame.waitForFunction(() => document.getElementById("product-name") && document.getElementById("product-name").textContent.length > 0);
      await new Promise((r) => setTimeout(r, 300));
    }
    if (g.viewport.width <= 480) { results.small[g.name] = await smallTargets(page); }
    await mask(page, g.hide);
    if (frame) { await mask(frame, g.frameHide); }
    await page.screenshot({ path: g.out, fullPage: !!g.full });
  }
  await page.browserContext().close();
});
