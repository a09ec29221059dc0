// Drives the partner dashboard's detail pages (docs/web.md "Detail
// pages") in the system Chromium: from the orders list to an order, its
// ticket and its invoice, at 360 and 1280 px in English and German; the
// copy button reached with the keyboard and pressed with Enter (the value
// on the clipboard, "Copied" in the status region); the 44 px targets.
// Then the golden screenshots (cfg.golden: name, path, viewport; click and
// waitFor for a state reached by a press; hide and frameHide for selectors
// not drawn in the page and in the ticket frame):
// the page with its ids and the server's address masked, animations off. axe-core
// checks every page against WCAG 2.1 AA. Usage: node dash_detail.js
// config.json; the Go test (internal/httpapi dash_detail_browser_test.go)
// asserts on results.json and compares the golden screenshots.
"use strict";
const { harness, ANDROID } = require("./harness");

const results = { pages: {}, statuses: {}, texts: {}, errors: [] };
const { cfg, phone, check, go, signIn, run } = harness(results);

const wide = (page) => page.setViewport({ width: 1280, height: 900 });
const narrow = (page) => page.setViewport({ width: 360, height: 740, deviceScaleFactor: 2, isMobile: true, hasTouch: true });

// smallTargets are main's links and buttons under 44 x 44 px (inline
// links in running text excepted: WCAG 2.5.8's inline exception).
const smallTargets = (page) => page.$$eval("main a, main button, nav a", (es) => es.filter((e) => e.offsetParent !== null && !e.closest("p.small, ol.timeline, td, dd")).map((e) => {
  const r = e.getBoundingClientRect();
  return { id: e.id || e.textContent.trim(), w: Math.round(r.width), h: Math.round(r.height) };
}).filter((t) => t.w < 44 || t.h < 44));

// mask replaces what differs between runs (random ids, the server's port)
// by fixed text, so a golden screenshot shows only what the page's code
// decides; it also stops every animation and the caret.
const mask = (page, hide) => page.evaluate((hide) => {
  const id = /farebox-([a-z_]+)-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;
  const walk = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let n = walk.nextNode(); n; n = walk.nextNode()) {
    n.nodeValue = n.nodeValue.replace(id, "farebox-$1-00000000-0000-0000-0000-000000000000").replace(/127\.0\.0\.1:[0-9]+/g, "127.0.0.1:8080");
  }
  const s = document.createElement("style");
  s.textContent = "*, *::before, *::after { animation: none !important; transition: none !important; caret-color: transparent !important; }" +
    // What no text replacement can fix (a key's random prefix, the ticket's
    // live clock and barcode) keeps its box but is not drawn.
    hide.map((h) => h + " { visibility: hidden !important; }").join("");
  document.head.appendChild(s);
}, hide || []);

run(async (browser) => {
  const page = await phone(browser, ANDROID, "en-GB");
  await page.browserContext().overridePermissions(cfg.base, ["clipboard-read", "clipboard-write"]);
  await go(page, cfg.base + "/dashboard/sign-in");
  results.statuses.signIn = await signIn(page, "#email", cfg.email, cfg.password);
  // From the list to the order, as a partner clicks.
  await go(page, cfg.base + "/dashboard/live/orders");
  const [resp] = await Promise.all([page.waitForNavigation({ waitUntil: "load" }), page.click('a[href="' + cfg.orderPath + '"]')]);
  results.statuses.order = resp.status();
  await check(page, "dash-order", resp.status());
  results.texts.order = await page.$eval("main", (e) => e.innerText);
  results.texts.smallOrder = await smallTargets(page);
  // The copy button with the keyboard: Tab until it has the focus, Enter.
  let focused = "";
  for (let i = 0; i < 60 && focused !== "copy"; i++) {
    await page.keyboard.press("Tab");
    focused = await page.evaluate(() => document.activeElement && document.activeElement.className);
  }
  results.texts.copyFocused = focused;
  results.texts.copyName = await page.evaluate(() => document.activeElement.textContent + "|" + document.activeElement.getAttribute("data-copy"));
  await page.keyboard.press("Enter");
  await page.waitForFunction(() => document.getElementById("copy-status").textContent !== "", { timeout: 5000 });
  results.texts.copyStatus = await page.$eval("#copy-status", (e) => e.textContent + "|" + e.getAttribute("role"));
  results.texts.clipboard = await page.evaluate(() => navigator.clipboard.readText());
  await check(page, "dash-ticket", await go(page, cfg.base + cfg.ticketPath));
  results.texts.ticket = await page.$eval("main", (e) => e.innerText);
  results.texts.smallTicket = await smallTargets(page);
  await check(page, "dash-invoice", await go(page, cfg.base + cfg.invoicePath));
  results.texts.invoice = await page.$eval("main", (e) => e.innerText);
  results.texts.smallInvoice = await smallTargets(page);
  await wide(page);
  for (const [name, path] of [["order", cfg.orderPath], ["ticket", cfg.ticketPath], ["invoice", cfg.invoicePath]]) {
    await check(page, "dash-" + name + "-1280", await go(page, cfg.base + path));
  }
  await page.setExtraHTTPHeaders({ "Accept-Language": "de" });
  for (const [name, path] of [["order", cfg.orderPath], ["ticket", cfg.ticketPath], ["invoice", cfg.invoicePath]]) {
    await check(page, "dash-" + name + "-1280-de", await go(page, cfg.base + path));
  }
  await narrow(page);
  await check(page, "dash-order-de", await go(page, cfg.base + cfg.orderPath));
  results.texts.orderDe = await page.evaluate(() => document.querySelector("h1").innerText);
  // Golden screenshots: the viewport only (a fixed size), masked.
  await page.setExtraHTTPHeaders({ "Accept-Language": "en-GB" });
  for (const g of cfg.golden) {
    await page.setViewport(g.viewport);
    await go(page, cfg.base + g.path);
    if (g.click) {
      // A state reached by a press on the page (the form sent empty).
      await page.click(g.click);
      await page.waitForSelector(g.waitFor);
    }
    await mask(page, g.hide);
    if (g.frameHide) {
      // The ticket frame once its engine drew the ticket: masked as the
      // page, its live clock and barcode not drawn.
      const frame = await (await page.$("#ticket-frame")).contentFrame();
      await frame.waitForFunction(() => document.getElementById("product-name") && document.getElementById("product-name").textContent.length > 0);
      await mask(frame, g.frameHide);
    }
    await page.screenshot({ path: g.out });
  }
  await page.browserContext().close();
});
