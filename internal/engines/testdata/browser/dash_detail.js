// Drives the partner dashboard's detail pages (docs/web.md "Detail
// pages") in the system Chromium: from the orders list to an order, its
// ticket and its invoice, at 360 and 1280 px in English and German; the
// copy button reached with the keyboard and pressed with Enter (the value
// on the clipboard, "Copied" in the status region); the 44 px targets.
// axe-core checks every page against WCAG 2.1 AA (the golden screenshots
// are golden.js's). Usage: node dash_detail.js config.json; the Go test
// (internal/httpapi dash_detail_browser_test.go) asserts on results.json.
"use strict";
const { harness, smallTargets, ANDROID } = require("./harness");

const results = { pages: {}, statuses: {}, texts: {}, errors: [] };
const { cfg, phone, check, go, signIn, run } = harness(results);

const wide = (page) => page.setViewport({ width: 1280, height: 900 });
const narrow = (page) => page.setViewport({ width: 360, height: 740, deviceScaleFactor: 2, isMobile: true, hasTouch: true });

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
  await page.browserContext().close();
});
