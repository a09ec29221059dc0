// Drives the partner dashboard's getting-started path (docs/web.md
// "Getting started") in the system Chromium as a new partner would. Phase
// "new": the invitation, the test home with nothing done, a test key made
// from the path's button (its secret shown once), the home with the key
// done and the pasteable command, at 360 and 1280 px in English and
// German, the keys page's relative times. Phase "ordered" (after the Go
// test ran the command as pasted): sign-in, the home with the order done,
// the order listed with its product's name. axe-core checks every page
// against WCAG 2.1 AA. Usage: node dash_start.js config.json; the Go test
// (internal/httpapi dash_start_browser_test.go) asserts on results.json.
"use strict";
const { harness, ANDROID } = require("./harness");

const results = { pages: {}, statuses: {}, texts: {}, errors: [] };
const { cfg, phone, check, go, submit, signIn, run } = harness(results);

const text = (page, sel) => page.$eval(sel, (e) => e.innerText);
const wide = (page) => page.setViewport({ width: 1280, height: 900 });
const narrow = (page) => page.setViewport({ width: 360, height: 740, deviceScaleFactor: 2, isMobile: true, hasTouch: true });

// targets are the path's links and buttons smaller than 44 x 44 px.
const smallTargets = (page) => page.$$eval("#start a, #start button", (es) => es.map((e) => {
  const r = e.getBoundingClientRect();
  return { id: e.id || e.textContent, w: r.width, h: r.height };
}).filter((t) => t.w < 44 || t.h < 44));

run(async (browser) => {
  const page = await phone(browser, ANDROID, "en-GB");
  const home = cfg.base + "/dashboard/test/usage";
  if (cfg.phase === "new") {
    await go(page, cfg.invite);
    await page.type("#password", cfg.password);
    await page.type("#password_repeat", cfg.password);
    results.statuses.home = await submit(page, "#set-password");
    await check(page, "dash-start-new", results.statuses.home);
    results.texts.startNew = await text(page, "#start");
    results.texts.smallTargets = await smallTargets(page);
    // Step 1 from the path's own button: the keys page shows the secret once.
    results.statuses.makeKey = await submit(page, "#start-key");
    results.texts.keyURL = page.url();
    results.texts.secret = await page.$eval('[role="status"]', (e) => e.innerText);
    await check(page, "dash-start-key-created", results.statuses.makeKey);
    const time = await page.$("#list time, table time");
    results.texts.keyTime = time && await time.evaluate((e) => ({ text: e.textContent, title: e.title, datetime: e.dateTime }));
    await check(page, "dash-start-key", await go(page, home));
    results.texts.startKey = await text(page, "#start");
    // The command as a person copies it: the element's text.
    results.texts.curl = await page.$eval("#start-curl", (e) => e.innerText);
    await wide(page);
    await check(page, "dash-start-1280", await go(page, home));
    await page.setExtraHTTPHeaders({ "Accept-Language": "de" });
    await check(page, "dash-start-1280-de", await go(page, home));
    await narrow(page);
    await check(page, "dash-start-de", await go(page, home));
    results.texts.startDe = await text(page, "#start");
    await check(page, "dash-keys-de", await go(page, cfg.base + "/dashboard/test/keys"));
    results.texts.keysDe = await text(page, "main");
  } else {
    await go(page, cfg.base + "/dashboard/sign-in");
    results.statuses.signIn = await signIn(page, "#email", cfg.email, cfg.password);
    await check(page, "dash-start-ordered", await go(page, home));
    results.texts.startOrdered = await text(page, "#start");
    results.texts.smallTargets = await smallTargets(page);
    results.statuses.orders = await submit(page, "#start-orders");
    await check(page, "dash-start-orders", results.statuses.orders);
    results.texts.orders = await text(page, "#list");
    await wide(page);
    await check(page, "dash-start-ordered-1280", await go(page, home));
  }
  await page.browserContext().close();
});
