// The harness dashboard.js and pages.js share: the config the Go test
// wrote (node <script> config.json), a phone-sized page in the system
// Chromium, axe-core's WCAG 2.1 AA check with a screenshot per page, and
// results.json written whatever happens. The Go side is
// internal/engines/browsertest.
"use strict";
const fs = require("fs");
const os = require("os");
const path = require("path");
const puppeteer = require("puppeteer-core");

const ANDROID = "Mozilla/5.0 (Linux; Android 15; Pixel 9) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Mobile Safari/537.36";
const IPHONE = "Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1";

// harness reads the config and returns the helpers, which record into
// results (it needs a pages object and an errors array).
function harness(results) {
  const cfg = JSON.parse(fs.readFileSync(process.argv[2], "utf8"));
  const axeSource = fs.readFileSync(require.resolve("axe-core/axe.min.js"), "utf8");
  const shot = (name) => path.join(cfg.outDir, name + ".png");

  // phone is a fresh browser context's page at 360 px (by height, 740
  // unless given) with ua and lang.
  async function phone(browser, ua, lang, height) {
    const ctx = await browser.createBrowserContext();
    const page = await ctx.newPage();
    await page.setBypassCSP(true); // lets the test inject axe (and fetch a download); the pages themselves run no script
    await page.setUserAgent(ua);
    await page.setExtraHTTPHeaders({ "Accept-Language": lang });
    await page.setViewport({ width: 360, height: height || 740, deviceScaleFactor: 2, isMobile: true, hasTouch: true });
    page.on("pageerror", (e) => results.errors.push("pageerror " + e.message));
    return page;
  }

  // check records a page: axe violations (WCAG 2.1 A and AA), the widest
  // element against the 360 px viewport, the status, and a screenshot.
  async function check(page, name, status) {
    await page.addScriptTag({ content: axeSource });
    const axe = await page.evaluate(async () => {
      const r = await window.axe.run(document, { runOnly: { type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"] } });
      return r.violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.map((n) => n.target.join(" ") + ": " + n.failureSummary).slice(0, 5) }));
    });
    const width = await page.evaluate(() => document.documentElement.scrollWidth);
    // A touch layout (the phone): every target measured.
    const small = page.viewport().width <= 480 ? await smallTargets(page) : [];
    await page.screenshot({ path: shot(name), fullPage: true });
    results.pages[name] = { axe, scrollWidth: width, status, lang: await page.evaluate(() => document.documentElement.lang),
      title: await page.title(), small };
  }

  async function go(page, url) {
    const resp = await page.goto(url, { waitUntil: "load" });
    return resp.status();
  }

  async function submit(page, selector) {
    const [resp] = await Promise.all([page.waitForNavigation({ waitUntil: "load" }), page.click(selector)]);
    return resp ? resp.status() : 0;
  }

  // run launches Chromium and runs body(browser); an error it throws is
  // recorded, and results.json is written in any case.
  async function run(body) {
    const browser = await puppeteer.launch({ executablePath: cfg.chromium, headless: true,
      args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"].concat(cfg.chromiumArgs || []) });
    try {
      await body(browser);
    } catch (e) {
      results.errors.push("script: " + (e.stack || e));
    } finally {
      await browser.close();
      fs.writeFileSync(path.join(cfg.outDir, "results.json"), JSON.stringify(results, null, 2));
    }
  }

  // signIn types user into the (emptied) field userField and password into
  // #password, runs before(page) if given (to tamper with the form), and
  // submits #signin; it returns the answer's status.
  async function signIn(page, userField, user, password, before) {
    // After a failure the form keeps the name typed: type it anew.
    await page.$eval(userField, (el) => { el.value = ""; });
    await page.type(userField, user);
    await page.type("#password", password);
    if (before) { await before(page); }
    return submit(page, "#signin");
  }

  return { cfg, shot, phone, check, go, submit, signIn, run };
}

// smallTargets lists the page's interactive targets under 44 × 44 CSS px
// as "name WxH": links, buttons, summaries, selects and inputs (a text
// input by its height, a radio button or checkbox by its row, .choice,
// li or label). Not counted: what is not drawn (or a visually hidden skip
// link until it has the focus), and a link inside running text, whose
// paragraph, cell or item says more than the link (WCAG 2.5.8's inline
// exception), and the form's error summary, whose links jump to fields.
async function smallTargets(page) {
  return page.evaluate(() => {
    const out = [];
    // Drawn: a box of its own on the page (a skip link waits off-screen
    // until it has the focus; its focused style is 44 px tall).
    const drawn = (e) => { const r = e.getBoundingClientRect(); const cs = getComputedStyle(e);
      return r.width > 1 && r.height > 1 && r.right > 0 && r.bottom > -window.scrollY && cs.visibility !== "hidden" && cs.display !== "none"; };
    const inline = (e) => {
      if (e.tagName !== "A") { return false; }
      const block = e.parentElement.closest("p, td, dd, li, figcaption, small");
      return block !== null && block.textContent.trim().length > e.textContent.trim().length;
    };
    for (const e of document.querySelectorAll("a[href], button, summary, select, input:not([type=hidden]), textarea")) {
      if (!drawn(e) || inline(e) || e.closest("#form-problems")) { continue; }
      const choice = e.type === "radio" || e.type === "checkbox";
      const box = choice ? e.closest(".choice, li, label") || e : e;
      const r = box.getBoundingClientRect();
      const text = e.tagName === "TEXTAREA" || (e.tagName === "INPUT" && !choice && !["submit", "button", "reset"].includes(e.type));
      if (text ? r.height < 44 : r.height < 44 || r.width < 44) {
        out.push((e.id || e.name || e.textContent.trim().slice(0, 24)) + " " + Math.round(r.width) + "x" + Math.round(r.height));
      }
    }
    return out;
  });
}

// pinClock makes iso the browser's time in every frame of page, before
// any of the page's scripts runs: Date (new Date(), Date.now()) answers
// that instant, standing still; dates given to it are as ever. A page's
// validity display then follows the server's test clock.
async function pinClock(page, iso) {
  if (!iso) { return; }
  await page.evaluateOnNewDocument((iso) => {
    const pinned = Date.parse(iso);
    const Real = Date;
    class Pinned extends Real {
      constructor(...a) { if (a.length === 0) { super(pinned); } else { super(...a); } }
      static now() { return pinned; }
    }
    // Called without new, Date() is the current time as a string.
    const Wrapped = new Proxy(Pinned, { apply: () => new Real(pinned).toString() });
    globalThis.Date = Wrapped;
  }, iso);
}

// enginePage opens html (an embedded engine) in a 390 px page that lets
// no request out: each one tried and each script error is recorded in
// results (requests, errors) under label. lang, if given, is the
// navigator's language.
async function enginePage(browser, results, html, label, lang) {
  const page = await browser.newPage();
  if (lang) {
    await page.evaluateOnNewDocument((l) => {
      Object.defineProperty(navigator, "languages", { get: () => [l] });
      Object.defineProperty(navigator, "language", { get: () => l });
    }, lang);
    await page.goto("about:blank"); // a new document, so the override applies before setContent
  }
  await page.setViewport({ width: 390, height: 1000, deviceScaleFactor: 2 });
  await page.setRequestInterception(true);
  page.on("request", (req) => {
    const u = req.url();
    if (u.startsWith("data:") || u === "about:blank") { req.continue(); return; }
    results.requests.push(label + ": " + u);
    req.abort();
  });
  page.on("pageerror", (e) => results.errors.push(label + ": pageerror " + e.message));
  page.on("console", (m) => { if (m.type() === "error") { results.errors.push(label + ": console " + m.text()); } });
  await page.setContent(html, { waitUntil: "load" });
  return page;
}

// fill empties the input #id and types value as a user would.
async function fill(page, id, value) {
  await page.$eval("#" + id, (el) => { el.value = ""; });
  if (value !== "") { await page.type("#" + id, value); }
}

// runEngines launches Chromium (German, a profile of its own, nothing
// fetched in the background) for the engine scripts, runs body(browser)
// and writes results.json into cfg.outDir; an error ends the process with
// status 1.
function runEngines(cfg, results, body) {
  (async () => {
    const userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), "farebox-chromium-"));
    const browser = await puppeteer.launch({
      executablePath: cfg.chromium, headless: true, userDataDir,
      args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync",
        "--lang=de-DE", "--user-data-dir=" + userDataDir],
    });
    try {
      await body(browser);
    } finally {
      await browser.close();
      fs.rmSync(userDataDir, { recursive: true, force: true });
    }
    fs.writeFileSync(path.join(cfg.outDir, "results.json"), JSON.stringify(results, null, 2));
  })().catch((e) => { console.error(e && e.stack ? e.stack : e); process.exit(1); });
}

module.exports = { harness, enginePage, fill, runEngines, smallTargets, pinClock, ANDROID, IPHONE };
