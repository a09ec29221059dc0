// Drives farebox's web pages (docs/web.md) in the system Chromium as a
// person would: the traveller page of a coupon on a 360 px phone in German
// and English, activation through its form, the wallet buttons of the
// platform; the operator console's sign-in, a forged form (CSRF), each
// list and its actions. axe-core checks every page against WCAG 2.1 AA.
// Usage: node pages.js config.json; the Go test (internal/httpapi
// pages_browser_test.go) starts the server, writes the config and asserts
// on results.json; this script only acts and measures.
"use strict";
const { harness, ANDROID, IPHONE } = require("./harness");

const results = { pages: {}, wallets: {}, statuses: {}, texts: {}, errors: [] };
const { cfg, shot, phone, check, go, submit, signIn, run } = harness(results);

async function traveller(browser, name, ua, lang, coupon, typed) {
  const page = await phone(browser, ua, lang);
  const url = cfg.base + "/c/" + coupon;
  await check(page, name + "-form", await go(page, url));
  for (const [field, value] of Object.entries(typed)) {
    if (field.endsWith("birth_date")) {
      // A date input takes the digits of its locale's order; set the value as a picker would.
      await page.$eval(`[name="${field}"]`, (el, v) => { el.value = v; }, value);
    } else {
      await page.type(`[name="${field}"]`, value);
    }
  }
  await page.screenshot({ path: shot(name + "-filled"), fullPage: true });
  const status = await submit(page, "#activate");
  const frame = await (await page.$("#ticket-frame")).contentFrame();
  await frame.waitForFunction(() => document.getElementById("product-name") && document.getElementById("product-name").textContent.length > 0);
  await frame.waitForFunction(() => { const i = document.getElementById("barcode"); return i && i.complete; });
  await new Promise((r) => setTimeout(r, 300));
  await check(page, name + "-ticket", status);
  results.wallets[name] = await page.$$eval(".wallet", (as) => as.map((a) => a.id));
  results.texts[name] = {
    page: await page.$eval("main", (m) => m.innerText),
    frameProduct: await frame.$eval("#product-name", (e) => e.textContent),
    framePassenger: await frame.$eval("#passenger", (e) => e.textContent),
    barcodeWidth: await frame.$eval("#barcode", (e) => e.naturalWidth),
  };
  await page.browserContext().close();
}

run(async (browser) => {
  await traveller(browser, "traveller-de", ANDROID, "de-DE,de;q=0.9", cfg.coupons.de, cfg.typed);
  await traveller(browser, "traveller-en", IPHONE, "en-US,en;q=0.9", cfg.coupons.en, cfg.typed);

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
