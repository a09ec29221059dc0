// Renders REAL API output in the two engines (the served HTML, tickets as the
// SDKs re-encode them, the product's schemas as the API serves them) and
// records what the JavaScript contract returns. Usage: node real.js config.json
// The Go test (internal/httpapi/engines_browser_test.go) writes the config and
// asserts on results.json; this script only measures and takes screenshots.
"use strict";
const fs = require("fs");
const path = require("path");
const { enginePage, fill, runEngines } = require("./harness");

const cfg = JSON.parse(fs.readFileSync(process.argv[2], "utf8"));
const results = { rendering: {}, identification: {}, requests: [], errors: [] };
const shot = (name) => path.join(cfg.outDir, name + ".png");

const newPage = (browser, html, label) => enginePage(browser, results, html, label);

async function render(browser, name, ticket) {
  const page = await newPage(browser, fs.readFileSync(cfg.rendering, "utf8"), "rendering " + name);
  const ret = await page.evaluate("window.renderTicket(" + JSON.stringify(ticket) + ")");
  await page.waitForFunction(() => document.getElementById("barcode").complete);
  const got = await page.evaluate(() => {
    const t = (id) => document.getElementById(id).textContent;
    const vis = (id) => getComputedStyle(document.getElementById(id)).display !== "none";
    return {
      product: t("product-name"), sub: t("product-sub"), passenger: t("passenger"), birth: t("birth-date"),
      area: t("area"), reference: t("reference"), status: t("status"), revocation: t("revocation"), error: t("error"),
      state: document.getElementById("ticket").getAttribute("data-state"),
      ribbonVisible: vis("test-ribbon"), testNoteVisible: vis("test-note"),
      barcodeShown: vis("barcode"), barcodeMissingShown: vis("barcode-missing"),
    };
  });
  await page.screenshot({ path: shot("real_rendering_" + name), fullPage: true });
  const el = await page.$(".codebox");
  await el.screenshot({ path: shot("real_rendering_" + name + "_barcode") });
  results.rendering[name] = { returned: ret, got };
  await page.close();
}

const read = (page) => page.evaluate(() => ({
  medium: window.getIdentificationMedium(), tariff: window.getTariffSettings(),
  inputs: Array.from(document.querySelectorAll("input")).map((e) => [e.id, e.value]),
  submit: !!document.getElementById("submit_activate_button"),
  close: !!document.getElementById("close_identification_form_button"),
}));

async function identification(browser) {
  const html = fs.readFileSync(cfg.identification, "utf8");
  const lit = (v) => JSON.stringify(v);
  // iOS arity, empty form, then typed in as a user would.
  let page = await newPage(browser, html, "identification ios");
  await page.evaluate("window.renderIdentificationView(" + lit(cfg.mediumSchema) + ", " + lit(cfg.tariffSchema) + ", null)");
  const empty = await read(page);
  for (const [id, v] of Object.entries(cfg.typed)) { await fill(page, id, v); }
  results.identification.ios = { empty, filled: await read(page) };
  await page.screenshot({ path: shot("real_identification_ios"), fullPage: true });
  await page.close();
  // Android arity, prefilled from the ticket's identification_medium.
  page = await newPage(browser, html, "identification android");
  await page.evaluate("window.renderIdentificationView(" + lit(cfg.mediumSchema) + ", " + lit(cfg.tariffSchema) + ", " +
    lit(cfg.prefill) + ", null, true)");
  const prefilled = await read(page);
  await fill(page, cfg.tariffInput, cfg.tariffValue);
  results.identification.android = { prefilled, filled: await read(page) };
  await page.screenshot({ path: shot("real_identification_android"), fullPage: true });
  await page.close();
}

runEngines(cfg, results, async (browser) => {
  for (const [name, ticket] of Object.entries(cfg.tickets)) { await render(browser, name, ticket); }
  await identification(browser);
});
