// Drives the partner dashboard (docs/web.md "Partner dashboard") in the
// system Chromium at 360 px as a person would: the invitation link, the
// password set, the usage page with its charts and CSV download, each list
// in test and live, a key made, a forged form (CSRF), the webhooks (an
// endpoint made, its deliveries, a redelivery), sign-out and
// sign-in. axe-core checks every page against WCAG 2.1 AA. Usage: node
// dashboard.js config.json; the Go test (internal/httpapi
// dashboard_browser_test.go) starts the server and asserts on results.json.
"use strict";
const { harness, ANDROID } = require("./harness");

const results = { pages: {}, statuses: {}, texts: {}, errors: [] };
const { cfg, phone, check, go, submit, signIn, run } = harness(results);

const main_ = (page) => page.$eval("main", (m) => m.innerText);

run(async (browser) => {
  const page = await phone(browser, ANDROID, "en-GB");

  // Without a session: the sign-in form.
  results.statuses.unsigned = await go(page, cfg.base + "/dashboard/test/usage");
  results.statuses.unsignedURL = page.url();
  await check(page, "dash-signin", results.statuses.unsigned);

  // The invitation: set the password (typed twice).
  await check(page, "dash-invite", await go(page, cfg.invite));
  await page.type("#password", cfg.password);
  await page.type("#password_repeat", cfg.password);
  results.statuses.setPassword = await submit(page, "#set-password");
  results.statuses.afterSetPassword = page.url();
  await check(page, "dash-usage-test", results.statuses.setPassword);
  results.texts.banner = await page.$eval("#env-banner", (e) => e.innerText);
  results.texts.bannerColour = await page.$eval("#env-banner", (e) => getComputedStyle(e).backgroundColor);
  // The plot: bars drawn, a text alternative, the table.
  results.texts.bars = await page.$$eval("#chart-all rect.counted", (rs) => rs.filter((r) => Number(r.getAttribute("height")) > 0).length);
  results.texts.chartDesc = await page.$eval("#chart-all desc", (e) => e.textContent);
  results.texts.chartWidth = await page.$eval("#chart-all svg.narrow", (e) => e.getBoundingClientRect().width);
  results.texts.narrowChart = await page.evaluate(() => {
    const svg = document.querySelector("#chart-all svg.narrow");
    return { tickPx: svg.querySelector("text.tick").getBoundingClientRect().height,
      ticks: [...svg.querySelectorAll("text.tick[text-anchor=end][dominant-baseline]")].map((t) => t.textContent),
      days: svg.querySelectorAll("text.tick:not([dominant-baseline])").length };
  });
  results.texts.table = await page.$eval("#usage-table", (e) => e.innerText);
  // The CSV download, as the link asks for it.
  const href = await page.$eval("#csv", (a) => a.href);
  results.texts.csv = await page.evaluate(async (u) => {
    const r = await fetch(u, { credentials: "same-origin" });
    return { status: r.status, type: r.headers.get("content-type"), disposition: r.headers.get("content-disposition"), body: await r.text() };
  }, href);

  // Each list, in test and in live; the switch between them.
  for (const env of ["test", "live"]) {
    for (const s of ["orders", "coupons", "tickets", "subscriptions", "invoices", "customers", "keys", "webhooks", "users"]) {
      await check(page, `dash-${s}-${env}`, await go(page, `${cfg.base}/dashboard/${env}/${s}`));
      results.texts[`${s}-${env}`] = await main_(page);
    }
  }
  await go(page, cfg.base + "/dashboard/test/orders");
  const [sw] = await Promise.all([page.waitForNavigation({ waitUntil: "load" }), page.click("#env-switch")]);
  results.statuses.switched = sw.status();
  results.statuses.switchedURL = page.url();
  results.texts.liveBannerColour = await page.$eval("#env-banner", (e) => getComputedStyle(e).backgroundColor);
  await check(page, "dash-usage-live", await go(page, cfg.base + "/dashboard/live/usage"));
  // Search by reference.
  await go(page, cfg.base + "/dashboard/live/orders");
  await page.type("#q", cfg.reference);
  results.statuses.search = await submit(page, "#search");
  results.texts.search = await main_(page);
  await check(page, "dash-orders-search", results.statuses.search);

  // A key: a forged form first (403), then the real one.
  await go(page, cfg.base + "/dashboard/test/keys");
  await page.$eval('#create-key', (b) => { b.form.querySelector('[name="csrf_token"]').value = "forged"; });
  results.statuses.forgedKey = await submit(page, "#create-key");
  await check(page, "dash-csrf-refused", results.statuses.forgedKey);
  await go(page, cfg.base + "/dashboard/test/keys");
  results.statuses.createKey = await submit(page, "#create-key");
  results.texts.createKey = await page.$eval('[role="status"]', (e) => e.innerText);
  await check(page, "dash-key-created", results.statuses.createKey);
  // The page after the redirect showed the key once; a reload shows it no
  // more (and makes no other key).
  results.statuses.createKeyURL = page.url();
  const reload = await page.reload({ waitUntil: "load" });
  results.statuses.keyReload = reload.status();
  results.texts.keyReload = await main_(page);

  // Webhooks: a form without an event type (the field's error), then an
  // endpoint made (its secret shown once); an endpoint's deliveries and
  // a redelivery.
  await go(page, cfg.base + "/dashboard/test/webhooks");
  await page.type("#url", cfg.receiver);
  results.statuses.hookNoEvents = await submit(page, "#create-hook");
  results.texts.hookError = await page.$eval("#events-error", (e) => e.innerText);
  results.texts.hookURLKept = await page.$eval("#url", (e) => e.value);
  await check(page, "dash-webhooks-error", results.statuses.hookNoEvents);
  await page.click("#event-0");
  results.statuses.createHook = await submit(page, "#create-hook");
  results.texts.createHook = await page.$eval('[role="status"]', (e) => e.innerText);
  results.texts.hookList = await page.$eval("#list", (e) => e.innerText);
  await check(page, "dash-webhooks-created", results.statuses.createHook);
  await check(page, "dash-webhook-attempts", await go(page, cfg.base + "/dashboard/test/webhooks/" + cfg.hook));
  results.texts.attempts = await page.$eval("#attempts", (e) => e.innerText);
  results.statuses.redeliver = await submit(page, "button.redeliver");
  results.texts.redeliver = await page.$eval('[role="status"]', (e) => e.innerText);
  await check(page, "dash-webhook-redelivered", results.statuses.redeliver);

  // Users: another user of the account removed (the notice), the last
  // one offered no Remove button.
  await go(page, cfg.base + "/dashboard/test/users");
  results.statuses.removeUser = await submit(page, `button[aria-label="Remove ${cfg.otherUser}"]`);
  results.texts.removeUser = await main_(page);
  await check(page, "dash-users-removed", results.statuses.removeUser);

  // Sign out, a wrong password, then sign in; a German page.
  results.statuses.signOut = await submit(page, "#signout");
  results.statuses.afterSignOut = page.url();
  results.statuses.wrongPassword = await signIn(page, "#email", cfg.email, "wrong password!");
  results.texts.keptEmail = await page.$eval("#email", (e) => e.value);
  await check(page, "dash-signin-failed", results.statuses.wrongPassword);
  results.statuses.signIn = await signIn(page, "#email", cfg.email, cfg.password);
  results.statuses.afterSignIn = page.url();
  await page.setExtraHTTPHeaders({ "Accept-Language": "de" });
  await check(page, "dash-usage-de", await go(page, cfg.base + "/dashboard/live/usage"));
  // The usage page at 1280 px: the wide chart, its text at the page's size.
  await page.setViewport({ width: 1280, height: 900 });
  await check(page, "dash-usage-1280-de", await go(page, cfg.base + "/dashboard/test/usage"));
  results.texts.wideChart = await page.evaluate(() => {
    const svg = [...document.querySelectorAll(".chart svg")].find((s) => s.getBoundingClientRect().width > 0);
    const tick = svg.querySelector("text.tick");
    return { cls: svg.getAttribute("class"), width: svg.getBoundingClientRect().width, tickPx: tick.getBoundingClientRect().height,
      ticks: [...svg.querySelectorAll("text.tick[text-anchor=end][dominant-baseline]")].map((t) => t.textContent) };
  });
  // The lists with names and relative times at 1280 px (issue 34).
  for (const [env, s] of [["live", "orders"], ["live", "subscriptions"], ["live", "customers"], ["test", "keys"], ["test", "users"], ["test", "webhooks"]]) {
    await check(page, `dash-${s}-1280-de`, await go(page, `${cfg.base}/dashboard/${env}/${s}`));
  }
  await check(page, "dash-webhook-1280-de", await go(page, cfg.base + "/dashboard/test/webhooks/" + cfg.hook));
  await page.setViewport({ width: 360, height: 740, deviceScaleFactor: 2, isMobile: true, hasTouch: true });
  await check(page, "dash-webhooks-de", await go(page, cfg.base + "/dashboard/test/webhooks"));
  await check(page, "dash-webhook-de", await go(page, cfg.base + "/dashboard/test/webhooks/" + cfg.hook));
  await page.browserContext().close();
});
