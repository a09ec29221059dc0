// Drives the two embedded engines in the system Chromium and records what
// the SDK-facing JavaScript contract returns. Usage: node run.js config.json
// The Go test (engines_browser_test.go) writes the config (engine files,
// tickets, schemas) and asserts on results.json; this script only measures.
"use strict";
const fs = require("fs");
const path = require("path");
const { enginePage, fill, runEngines } = require("./harness");

const cfg = JSON.parse(fs.readFileSync(process.argv[2], "utf8"));
const results = { rendering: {}, identification: {}, requests: [], errors: [] };

const newPage = (browser, html, label, lang) => enginePage(browser, results, html, label, lang);

const shot = (name) => path.join(cfg.outDir, name + ".png");

async function renderingScenario(browser, name, ticket) {
  const page = await newPage(browser, fs.readFileSync(cfg.rendering, "utf8"), "rendering " + name);
  // The SDKs inject the ticket as a JavaScript literal.
  const ret = await page.evaluate("window.renderTicket(" + JSON.stringify(ticket) + ")");
  await page.waitForFunction(() => document.getElementById("barcode").complete && document.getElementById("brand-logo").complete);
  const read = () => page.evaluate(() => {
    const t = (id) => document.getElementById(id).textContent;
    const img = document.getElementById("barcode");
    return {
      product: t("product-name"), sub: t("product-sub"), passenger: t("passenger"), birth: t("birth-date"),
      validFrom: t("valid-from"), validUntil: t("valid-until"), area: t("area"), reference: t("reference"),
      status: t("status"), revocation: t("revocation"), state: document.getElementById("ticket").getAttribute("data-state"),
      ribbonVisible: getComputedStyle(document.getElementById("test-ribbon")).display !== "none",
      testNoteVisible: getComputedStyle(document.getElementById("test-note")).display !== "none",
      barcodeNaturalWidth: img.naturalWidth, barcodeShown: getComputedStyle(img).display !== "none",
      barcodeMissingShown: getComputedStyle(document.getElementById("barcode-missing")).display !== "none",
      clock: t("clock"), error: t("error"),
      binding: document.getElementById("ticket").getAttribute("data-binding"), bindingTitle: t("binding-title"),
      bindingShown: getComputedStyle(document.getElementById("binding")).display !== "none",
      brandOrganization: t("brand-organization"), brandOperator: document.getElementById("brand-operator").textContent,
      brandLogoShown: getComputedStyle(document.getElementById("brand-logo")).display !== "none",
      brandLogoNaturalHeight: document.getElementById("brand-logo").naturalHeight,
      bandBackground: getComputedStyle(document.querySelector(".band")).backgroundColor,
      bandColor: getComputedStyle(document.querySelector(".band")).color,
    };
  });
  const first = await read();
  // The clock must tick by itself; wait for a change (generously: machines are noisy).
  await page.waitForFunction((c) => document.getElementById("clock").textContent !== c, { timeout: 60000 }, first.clock)
    .catch(() => {});
  const second = await read();
  await page.screenshot({ path: shot("rendering_" + name), fullPage: true });
  const el = await page.$(".codebox");
  await el.screenshot({ path: shot("rendering_" + name + "_barcode") });
  results.rendering[name] = { returned: ret, first, clockAfter: second.clock };
  await page.close();
}

async function identificationScenarios(browser) {
  const html = fs.readFileSync(cfg.identification, "utf8");
  const s = cfg.schemas;
  const R = results.identification;
  const ids = (page) => page.evaluate(() => ({
    inputs: Array.from(document.querySelectorAll("input, select")).filter((e) => e.type !== "radio").map((e) => e.id),
    submit: !!document.getElementById("submit_activate_button"),
    close: !!document.getElementById("close_identification_form_button"),
  }));
  const get = (page) => page.evaluate(() => ({
    medium: window.getIdentificationMedium(), tariff: window.getTariffSettings(),
    errors: Array.from(document.querySelectorAll(".msg")).filter((e) => e.textContent).map((e) => e.id + ": " + e.textContent),
  }));
  // The getters in the other order (a client may ask for the tariff settings first).
  const getReversed = (page) => page.evaluate(() => {
    const tariff = window.getTariffSettings();
    return { medium: window.getIdentificationMedium(), tariff,
      errors: Array.from(document.querySelectorAll(".msg")).filter((e) => e.textContent).map((e) => e.id + ": " + e.textContent) };
  });
  // What the user sees now, without calling a getter: field messages, marked inputs, the form note.
  const marks = (page) => page.evaluate(() => ({
    errors: Array.from(document.querySelectorAll(".msg")).filter((e) => e.textContent).map((e) => e.id),
    invalid: Array.from(document.querySelectorAll("[aria-invalid=true]")).map((e) => e.id),
    formError: getComputedStyle(document.getElementById("form_error")).display !== "none",
  }));

  // 1. iOS arity with the server's full schemas; iOS message transport.
  let page = await newPage(browser, html, "identification ios-full");
  await page.evaluate(() => {
    window.__posted = [];
    window.webkit = { messageHandlers: {
      activateCouponListener: { postMessage: (m) => window.__posted.push(["activate", m]) },
      closeIdentificationFormListener: { postMessage: (m) => window.__posted.push(["close", m]) },
    } };
  });
  await page.evaluate("window.renderIdentificationView(" + JSON.stringify(s.medium) + ", " + JSON.stringify(s.tariff) + ", null)");
  R.iosFull = { ids: await ids(page), empty: await get(page) };
  await page.screenshot({ path: shot("identification_ios_empty_errors"), fullPage: true });
  await fill(page, "im_photo_id_lite_first_name", "Max");
  R.iosFull.marksAfterFirstName = await marks(page);
  await fill(page, "im_photo_id_lite_last_name", "Mustermann");
  await fill(page, "im_photo_id_lite_birth_date", "30.02.1990");
  await fill(page, "ts_german_postal_code", "1234");
  R.iosFull.badDate = await get(page);
  await fill(page, "im_photo_id_lite_birth_date", "01.01.1990");
  R.iosFull.marksAfterDate = await marks(page);
  R.iosFull.badPostal = await get(page);
  R.iosFull.badPostalReversed = await getReversed(page);
  await fill(page, "ts_german_postal_code", "12345x");
  R.iosFull.badPostal2 = await get(page);
  await fill(page, "ts_german_postal_code", "not-germany");
  R.iosFull.notGermany = await get(page);
  await fill(page, "ts_german_postal_code", "12345");
  await fill(page, "im_photo_id_lite_birth_date", "1990-01-01");
  R.iosFull.valid = await get(page);
  await page.screenshot({ path: shot("identification_ios_filled"), fullPage: true });
  await page.click("#submit_activate_button");
  await page.click("#close_identification_form_button");
  R.iosFull.posted = await page.evaluate(() => window.__posted);
  await page.close();

  // 2. Android arity with prefill; Android bridge transport.
  page = await newPage(browser, html, "identification android-prefill", "de-DE");
  await page.evaluate(() => {
    window.__calls = [];
    window.Android = { activateCoupon: (m, t) => window.__calls.push(["activate", m, t]), closeView: () => window.__calls.push(["close"]) };
  });
  await page.evaluate("window.renderIdentificationView(" + JSON.stringify(s.medium) + ", " + JSON.stringify(s.tariff) + ", " +
    JSON.stringify(cfg.prefill) + ", null, true)");
  R.androidPrefill = { ids: await ids(page), values: await page.evaluate(() =>
    Array.from(document.querySelectorAll("input")).map((e) => [e.id, e.value])) };
  await fill(page, "ts_german_postal_code", "80331");
  R.androidPrefill.got = await get(page);
  await page.screenshot({ path: shot("identification_android_prefill"), fullPage: true });
  await page.click("#submit_activate_button");
  await page.click("#close_identification_form_button");
  R.androidPrefill.calls = await page.evaluate(() => window.__calls);
  // An SDK that attaches its own click listener does the transport itself.
  await page.evaluate(() => {
    window.__sdk = 0;
    document.getElementById("submit_activate_button").addEventListener("click", () => { window.__sdk++; });
  });
  await page.click("#submit_activate_button");
  await page.evaluate(() => {
    window.__sdkClose = 0;
    document.getElementById("close_identification_form_button").onclick = () => { window.__sdkClose++; };
  });
  await page.click("#close_identification_form_button");
  R.androidPrefill.afterSdkListener = await page.evaluate(() => ({ calls: window.__calls.length, sdk: window.__sdk, sdkClose: window.__sdkClose }));
  await page.close();

  // 3. iOS re-encoded schema (only the keywords of client-contract 3.2), no tariff schema.
  page = await newPage(browser, html, "identification ios-reencoded");
  await page.evaluate("window.renderIdentificationView(" + JSON.stringify(s.mediumIOS) + ", null, null)");
  R.iosReencoded = { ids: await ids(page), empty: await get(page), emptyReversed: await getReversed(page) };
  await fill(page, "im_photo_id_lite_first_name", "Erika");
  await fill(page, "im_photo_id_lite_last_name", "Musterfrau");
  await fill(page, "im_photo_id_lite_birth_date", "31.02.1985");
  R.iosReencoded.badDate = await getReversed(page);
  await fill(page, "im_photo_id_lite_birth_date", "7.3.1985");
  R.iosReencoded.marksCorrected = await marks(page);
  R.iosReencoded.valid = await get(page);
  await page.close();

  // 3b. Android arity without a tariff schema, Android bridge: an invalid form sends nothing.
  page = await newPage(browser, html, "identification android-no-tariff");
  await page.evaluate(() => {
    window.__calls = [];
    window.Android = { activateCoupon: (m, t) => window.__calls.push(["activate", m, t]), closeView: () => window.__calls.push(["close"]) };
  });
  await page.evaluate("window.renderIdentificationView(" + JSON.stringify(s.mediumIOS) + ", null, null, null, true)");
  await fill(page, "im_photo_id_lite_first_name", "Erika");
  await page.click("#submit_activate_button");
  R.androidNoTariff = { invalid: await getReversed(page), callsInvalid: await page.evaluate(() => window.__calls.length) };
  await fill(page, "im_photo_id_lite_last_name", "Musterfrau");
  await fill(page, "im_photo_id_lite_birth_date", "07.03.1985");
  R.androidNoTariff.marksCorrected = await marks(page);
  await page.click("#submit_activate_button");
  R.androidNoTariff.calls = await page.evaluate(() => window.__calls);
  await page.close();

  // 4. Schemas as JSON strings, Android arity, several options with enum and lengths.
  page = await newPage(browser, html, "identification multi", "de-DE");
  await page.evaluate("window.renderIdentificationView(" + JSON.stringify(JSON.stringify(s.multi)) + ", " +
    JSON.stringify(JSON.stringify(s.tariffIOS)) + ", null, null, true)");
  R.multi = { ids: await ids(page), radios: await page.evaluate(() =>
    Array.from(document.querySelectorAll("input[type=radio]")).map((e) => [e.value, e.checked])) };
  await fill(page, "im_photo_id_first_name", "Ana");
  await fill(page, "im_photo_id_last_name", "Lima");
  await fill(page, "im_photo_id_birth_date", "2000-12-31");
  await fill(page, "im_photo_id_id_number", "12345");
  await page.select("#im_photo_id_id_type", "passport");
  await fill(page, "ts_german_postal_code", "10115");
  R.multi.shortNumber = await get(page);
  // Typing stops at maxlength; a pasted or scripted value does not, so validation must catch it.
  await page.$eval("#im_photo_id_id_number", (el) => { el.value = "1234567890"; });
  R.multi.longNumber = await get(page);
  await fill(page, "im_photo_id_id_number", "C01X00T47");
  R.multi.valid = await get(page);
  await page.screenshot({ path: shot("identification_multi"), fullPage: true });
  await page.click("#im_option_photo_id_name_only");
  await fill(page, "im_photo_id_name_only_first_name", "Ana");
  await fill(page, "im_photo_id_name_only_last_name", "L1ma");
  R.multi.nameOnlyBad = await get(page);
  await fill(page, "im_photo_id_name_only_last_name", "Lima-Silva");
  R.multi.nameOnly = await get(page);
  await page.close();
}

runEngines(cfg, results, async (browser) => {
  for (const [name, ticket] of Object.entries(cfg.tickets)) {
    await renderingScenario(browser, name, ticket);
  }
  await identificationScenarios(browser);
});
