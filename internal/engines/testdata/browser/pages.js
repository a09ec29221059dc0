// Drives farebox's web pages (docs/web.md) in the system Chromium as a
// person would: the traveller page of a coupon on a 360 px phone in German
// and English, activation through its form, the wallet buttons of the
// platform; the operator console's sign-in, a forged form (CSRF), each
// list and its actions. axe-core checks every page against WCAG 2.1 AA.
// Usage: node pages.js config.json; the Go test (internal/httpapi
// pages_browser_test.go) starts the server, writes the config and asserts
// on results.json; this script only acts and measures.
"use strict";
const { PredefinedNetworkConditions } = require("puppeteer-core");
const { harness, smallTargets, ANDROID, IPHONE } = require("./harness");

const results = { pages: {}, wallets: {}, statuses: {}, texts: {}, errors: [] };
const { cfg, shot, phone, check, go, submit, signIn, run } = harness(results);

// frameOf waits for the ticket frame's engine to draw the ticket and its barcode.
async function frameOf(page) {
  const frame = await (await page.$("#ticket-frame")).contentFrame();
  await frame.waitForFunction(() => document.getElementById("product-name") && document.getElementById("product-name").textContent.length > 0);
  await frame.waitForFunction(() => { const i = document.getElementById("barcode"); return i && i.complete && i.naturalWidth > 0; });
  return frame;
}

// ticketFacts measures where the ticket sits: the barcode's bottom edge in
// the viewport, the wallet buttons' boxes, the frame's height.
async function ticketFacts(page, frame) {
  const fb = await (await page.$("#ticket-frame")).boundingBox();
  const bc = await frame.$eval("#barcode", (e) => { const r = e.getBoundingClientRect(); return { top: r.top, bottom: r.bottom }; });
  return {
    frameTop: Math.round(fb.y), barcodeTop: Math.round(fb.y + bc.top), barcodeBottom: Math.round(fb.y + bc.bottom), frameHeight: Math.round(fb.height),
    wallets: await page.$$eval(".wallet", (as) => as.map((a) => { const r = a.getBoundingClientRect(); return { id: a.id, top: Math.round(r.top), width: Math.round(r.width), height: Math.round(r.height), text: a.innerText }; })),
    walletNote: await page.$eval("#wallet-note", (e) => e.innerText).catch(() => ""),
  };
}

async function traveller(browser, name, ua, lang, coupon, typed) {
  const page = await phone(browser, ua, lang, 640);
  const url = cfg.base + "/c/" + coupon;
  await check(page, name + "-form", await go(page, url));
  const t = { small: {} };
  t.small.form = await smallTargets(page);
  // Sent empty: the script checks every field, marks it and sums up.
  await page.click("#activate");
  await page.waitForSelector("#form-problems:not([hidden])");
  t.empty = {
    url: page.url(),
    summary: await page.$eval("#form-problems", (e) => e.innerText),
    focused: await page.evaluate(() => document.activeElement.id),
    invalid: await page.$$eval('[aria-invalid="true"]', (es) => es.map((e) => e.id)),
    atFields: await page.$$eval(".field-error", (es) => es.filter((e) => e.textContent).map((e) => e.id + ": " + e.textContent)),
  };
  await check(page, name + "-form-errors", 200);
  // As typed: a four-digit postal code is refused when the field is left, and accepted at the fifth digit.
  await page.type("#t-german_postal_code", "1011");
  await page.keyboard.press("Tab");
  t.postalShort = await page.$eval("#e-t-german_postal_code", (e) => e.textContent);
  await page.focus("#t-german_postal_code");
  await page.keyboard.press("End");
  await page.keyboard.type("5");
  t.postalFixed = await page.$eval("#e-t-german_postal_code", (e) => e.textContent);
  t.postalInvalid = await page.$eval("#t-german_postal_code", (e) => e.getAttribute("aria-invalid"));
  for (const [field, value] of Object.entries(typed)) {
    if (field === "choice") {
      await page.click(value); // the residence, as a choice
    } else if (field.endsWith("birth_date")) {
      // A date input takes the digits of its locale's order; set the value as a picker would.
      await page.$eval(`[name="${field}"]`, (el, v) => { el.value = v; el.dispatchEvent(new Event("input")); }, value);
    } else {
      await page.$eval(`[name="${field}"]`, (el) => { el.value = ""; });
      await page.type(`[name="${field}"]`, value);
    }
  }
  // A monthly ticket late in the month: the page says so and asks which month.
  t.months = await page.$$eval("[name=month]", (rs) => rs.map((r) => ({ value: r.value, checked: r.checked, label: document.querySelector(`label[for="${r.id}"]`).innerText })));
  t.lateWarning = await page.$eval("#late-month", (e) => e.innerText).catch(() => "");
  if (await page.$("#month-this")) { await page.click("#month-this"); }
  await page.screenshot({ path: shot(name + "-filled"), fullPage: true });
  const status = await submit(page, "#activate");
  const frame = await frameOf(page);
  await new Promise((r) => setTimeout(r, 300));
  await check(page, name + "-ticket", status);
  await page.screenshot({ path: shot(name + "-ticket-viewport"), fullPage: false });
  t.small.ticket = await smallTargets(page);
  Object.assign(t, await ticketFacts(page, frame));
  results.wallets[name] = t.wallets.map((w) => w.id);
  t.page = await page.$eval("main", (m) => m.innerText);
  t.frameProduct = await frame.$eval("#product-name", (e) => e.textContent);
  t.framePassenger = await frame.$eval("#passenger", (e) => e.textContent);
  t.barcodeWidth = await frame.$eval("#barcode", (e) => e.naturalWidth);
  // Offline once shown: the worker kept the page and its ticket.
  await page.waitForFunction(() => document.documentElement.dataset.offline === "ready", { timeout: 15000 });
  await page.setOfflineMode(true);
  await page.reload({ waitUntil: "load" });
  const off = await frameOf(page);
  t.offline = { product: await off.$eval("#product-name", (e) => e.textContent), barcodeWidth: await off.$eval("#barcode", (e) => e.naturalWidth),
    page: await page.$eval("main", (m) => m.innerText) };
  await page.screenshot({ path: shot(name + "-ticket-offline"), fullPage: false });
  await page.setOfflineMode(false);
  // The language switch: the other language, the same page.
  await Promise.all([page.waitForNavigation({ waitUntil: "load" }), page.click("#lang-switch")]);
  t.switched = { lang: await page.evaluate(() => document.documentElement.lang), h1: await page.$eval("h1", (e) => e.innerText), url: page.url() };
  await check(page, name + "-ticket-switched", 200);
  results.texts[name] = t;
  await page.browserContext().close();
}

// desktop shows a page at 1280 px and records it.
async function desktop(browser, name, url, lang) {
  const ctx = await browser.createBrowserContext();
  const page = await ctx.newPage();
  await page.setBypassCSP(true);
  await page.setExtraHTTPHeaders({ "Accept-Language": lang });
  await page.setViewport({ width: 1280, height: 800 });
  page.on("pageerror", (e) => results.errors.push("pageerror " + e.message));
  const status = await go(page, url);
  if (await page.$("#ticket-frame")) { await frameOf(page); await new Promise((r) => setTimeout(r, 300)); }
  await check(page, name, status);
  const frame = await page.$("#ticket-frame");
  results.texts[name] = frame ? await ticketFacts(page, await frame.contentFrame()) : {};
  await ctx.close();
}

// firstLoad measures a first visit on Chrome's "Slow 4G" profile: bytes
// transferred until the page and its ticket frame have loaded, and the
// first contentful paint.
async function firstLoad(browser, url) {
  const ctx = await browser.createBrowserContext();
  const page = await ctx.newPage();
  await page.setUserAgent(ANDROID);
  await page.setViewport({ width: 360, height: 640, deviceScaleFactor: 2, isMobile: true, hasTouch: true });
  // Under the pages' real policy (no bypass here): nothing refused.
  page.on("console", (m) => { if (/Content Security Policy|Refused/.test(m.text())) { results.errors.push("firstLoad: " + m.text()); } });
  page.on("pageerror", (e) => results.errors.push("firstLoad pageerror " + e.message));
  const cdp = await page.createCDPSession();
  await cdp.send("Network.enable");
  let bytes = 0;
  const requests = [];
  cdp.on("Network.loadingFinished", (e) => { bytes += e.encodedDataLength; });
  cdp.on("Network.requestWillBeSent", (e) => { requests.push(e.request.url.replace(cfg.base, "").slice(0, 80)); });
  await page.emulateNetworkConditions(PredefinedNetworkConditions["Slow 4G"]);
  const start = Date.now();
  await page.goto(url, { waitUntil: "load" });
  await frameOf(page);
  const loaded = Date.now() - start;
  const fcp = await page.evaluate(() => { const e = performance.getEntriesByName("first-contentful-paint")[0]; return e ? e.startTime : -1; });
  await ctx.close();
  return { bytes, fcp: Math.round(fcp), loaded, requests };
}

run(async (browser) => {
  await traveller(browser, "traveller-de", ANDROID, "de-DE,de;q=0.9", cfg.coupons.de, cfg.typedDe);
  await traveller(browser, "traveller-en", IPHONE, "en-US,en;q=0.9", cfg.coupons.en, cfg.typed);
  for (const [lang, accept] of [["de", "de-DE"], ["en", "en-GB"]]) {
    await desktop(browser, "traveller-" + lang + "-ticket-1280", cfg.base + "/c/" + cfg.coupons[lang], accept);
    await desktop(browser, "traveller-" + lang + "-form-1280", cfg.base + "/c/" + cfg.coupons.fresh, accept);
  }
  results.texts.firstLoad = await firstLoad(browser, cfg.base + "/c/" + cfg.coupons.en);

  // The console on the same phone width.
  const page = await phone(browser, ANDROID, "en-GB");
  const status = await go(page, cfg.base + "/admin/accounts");
  results.statuses.unsignedAccounts = { status, url: page.url() };
  await check(page, "admin-signin", status);
  // A forged sign-in: the token altered, then removed.
  results.statuses.forgedSignIn = await signIn(page, "#user", cfg.user, cfg.password,
    (p) => p.$eval('[name="csrf_token"]', (el) => { el.value = "forged" + el.value; }));
  await check(page, "admin-csrf-refused", results.statuses.forgedSignIn);
  results.texts.forged = await page.$eval("main", (m) => m.innerText);
  await go(page, cfg.base + "/admin/sign-in");
  results.statuses.tokenlessSignIn = await signIn(page, "#user", cfg.user, cfg.password,
    (p) => p.$eval('[name="csrf_token"]', (el) => el.remove()));
  // A wrong password, then the right one.
  await go(page, cfg.base + "/admin/sign-in");
  results.statuses.wrongPassword = await signIn(page, "#user", cfg.user, "wrong password");
  await check(page, "admin-signin-failed", results.statuses.wrongPassword);
  results.statuses.signIn = await signIn(page, "#user", cfg.user, cfg.password);
  results.statuses.afterSignIn = page.url();
  await check(page, "admin-accounts", results.statuses.signIn);
  // Actions on the accounts page: a test key for the first account, then a grant.
  results.statuses.createKey = await submit(page, 'form[action$="/keys"] button');
  results.texts.createKey = await page.$eval('[role="status"]', (e) => e.innerText);
  await check(page, "admin-key-created", results.statuses.createKey);
  results.statuses.grant = await submit(page, 'form[action$="/grants"] button');
  results.texts.grant = await page.$eval('[role="status"]', (e) => e.innerText);
  for (const [name, p] of [["admin-catalog", "/admin/catalog"], ["admin-feeds", "/admin/feeds"],
    ["admin-jobs", "/admin/jobs?state=dead"], ["admin-inspection-keys", "/admin/inspection-keys"]]) {
    await check(page, name, await go(page, cfg.base + p));
  }
  // The clearing page (the map of Germany and its tables) on the phone, then at 1280 px.
  await check(page, "admin-clearing", await go(page, cfg.base + "/admin/clearing"));
  await page.setViewport({ width: 1280, height: 800 });
  await check(page, "admin-clearing-1280", await go(page, cfg.base + "/admin/clearing"));
  await page.setViewport({ width: 360, height: 740, deviceScaleFactor: 2, isMobile: true, hasTouch: true });
  await go(page, cfg.base + "/admin/feeds");
  results.texts.feeds = await page.$eval("main", (m) => m.innerText);
  await go(page, cfg.base + "/admin/jobs?state=dead");
  results.texts.deadJobs = await page.$eval("main", (m) => m.innerText);
  results.statuses.retry = await submit(page, "#retry-" + cfg.deadJob);
  results.texts.retry = await page.$eval('[role="status"]', (e) => e.innerText);
  await check(page, "admin-job-retried", results.statuses.retry);
  results.statuses.signOut = await submit(page, 'form[action="/admin/sign-out"] button');
  results.statuses.afterSignOut = page.url();
  // A German console page.
  await page.setExtraHTTPHeaders({ "Accept-Language": "de" });
  await check(page, "admin-signin-de", await go(page, cfg.base + "/admin/sign-in"));
});
