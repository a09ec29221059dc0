// farebox inspector app (docs/inspect.md): sign-in, the cached keys,
// revocation feed and blocklist (IndexedDB), the camera, the verdict, and
// the checks kept on the device and posted as inspection records.
'use strict';
(function () {
  const V = self.FareboxVerify;
  const $ = (id) => document.getElementById(id);
  const texts = {};
  document.querySelectorAll('#texts [data-k]').forEach(li => { texts[li.dataset.k] = li.textContent; });
  const T = (k) => texts[k] || k;

  // IndexedDB: "kv" (session, data, settings) and "checks" (not yet posted).
  let dbp = null;
  function db() {
    if (!dbp) dbp = new Promise((res, rej) => {
      const r = indexedDB.open('farebox-inspect', 1);
      r.onupgradeneeded = () => { r.result.createObjectStore('kv'); r.result.createObjectStore('checks', { keyPath: 'record_id' }); };
      r.onsuccess = () => res(r.result); r.onerror = () => rej(r.error);
    });
    return dbp;
  }
  async function tx(store, mode, fn) {
    const d = await db();
    return new Promise((res, rej) => {
      const t = d.transaction(store, mode); const s = t.objectStore(store); const out = fn(s);
      t.oncomplete = () => res(out && 'result' in out ? out.result : undefined); t.onerror = () => rej(t.error);
    });
  }
  const get = (k) => tx('kv', 'readonly', s => s.get(k));
  const put = (k, v) => tx('kv', 'readwrite', s => s.put(v, k));

  const state = { session: null, data: null, busy: false, last: '', lastAt: 0, timings: [], verdicts: [] };
  self.fareboxInspect = state;

  function nowSec() { return Math.floor((Date.now() + (state.clockOffset || 0)) / 1000); }

  // Sign-in.
  async function signIn(ev) {
    ev.preventDefault();
    $('signin-error').hidden = true;
    let r;
    try {
      r = await fetch('/v1/inspection/sign-in.json', { method: 'POST', headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ name: $('name').value, password: $('password').value }) });
    } catch (e) { return fail(T('offline')); }
    if (r.status === 429) return fail(T('throttled'));
    if (!r.ok) return fail(T('signin.failed'));
    const s = await r.json();
    state.session = { token: s.token, name: s.name, expires: s.expires_at, maxAge: s.max_data_age_seconds, tolerance: s.window_tolerance_seconds };
    await put('session', state.session);
    $('password').value = '';
    await refresh();
    show();
    function fail(msg) { const e = $('signin-error'); e.textContent = msg; e.hidden = false; }
  }
  async function signOut() {
    state.session = null; await put('session', null);
    // The rotating-barcode secret makes live codes: it leaves with the inspector.
    if (state.data && state.data.rotating) { state.data.rotating = null; await put('data', state.data); }
    stopCamera(); show();
  }

  // The cached data: keys, revocation feed (incremental), blocklist
  // (incremental: the UIC references and the moved-away phones), the
  // rotating-barcode secret. Data of the first layout keeps what it has
  // (offline it is all there is) and reads the blocklist again from 0 for
  // the moved-away phones it did not keep.
  const DATA_VERSION = 2;
  async function refresh() {
    let d = await get('data');
    if (!d) d = { keys: [], revoked: {}, revokedKeys: {}, blockedRefs: {}, feedSeq: 0, blockSeq: 0, refreshedAt: 0 };
    if (d.v !== DATA_VERSION) d = Object.assign({ movedDevices: {}, rotating: null }, d, { v: DATA_VERSION, blockSeq: 0 });
    let ended = false;
    try {
      const kr = await fetch('/v1/inspection/keys.json', { cache: 'no-store' });
      if (!kr.ok) throw new Error('keys ' + kr.status);
      const keys = (await kr.json()).keys || [];
      for (let more = true, n = 0; more && n < 50; n++) {
        const fr = await fetch('/v1/inspection/revocations.json?since=' + d.feedSeq, { cache: 'no-store' });
        if (!fr.ok) throw new Error('feed ' + fr.status);
        const f = V.splitDetached(await fr.text(), 'feed');
        if (!f || !(await V.verifyDetached(keys, V.FEED_CONTEXT, f.body, f.signature))) throw new Error('feed signature');
        for (const e of f.doc.revocations || []) {
          if (e.kind === 'key' && e.kid) d.revokedKeys[e.kid] = e; else if (e.ticket_id) d.revoked[e.ticket_id] = e;
        }
        more = f.doc.last_seq > d.feedSeq && (f.doc.revocations || []).length > 0 && f.doc.more === true;
        d.feedSeq = Math.max(d.feedSeq, f.doc.last_seq || 0);
      }
      for (let more = true, n = 0; more && n < 50; n++) {
        const br = await fetch('/v1/inspection/blocklist.json?since=' + d.blockSeq, { cache: 'no-store' });
        if (!br.ok) break; // an instance without a blocklist: the feed covers farebox's own tickets
        const b = V.splitDetached(await br.text(), 'blocklist');
        if (!b || !(await V.verifyDetached(keys, V.BLOCKLIST_CONTEXT, b.body, b.signature))) throw new Error('blocklist signature');
        for (const e of b.doc.uic || []) if (e.reference) d.blockedRefs[e.reference] = e;
        for (const e of b.doc.devices || []) if (e.ticket_id && e.device_key_sha256) d.movedDevices[e.ticket_id + ' ' + e.device_key_sha256] = e;
        more = b.doc.more === true; d.blockSeq = Math.max(d.blockSeq, b.doc.last_seq || 0);
      }
      if (state.session) {
        // Only an inspector's token reads the secret (docs/inspect.md); an
        // instance without one answers 503 and rotating codes stay unchecked.
        const sr = await fetch('/v1/inspection/rotating-secret.json', { cache: 'no-store', headers: { 'Authorization': 'Bearer ' + state.session.token } });
        if (sr.ok) d.rotating = await sr.json();
        else if (sr.status === 503) d.rotating = null;
        else if (sr.status === 401) { d.rotating = null; ended = true; }
      }
      d.keys = keys; d.refreshedAt = Date.now();
      await put('data', d);
    } catch (e) { state.refreshError = String(e && e.message || e); }
    state.data = d;
    if (ended) return signOut();
    showAge();
    postChecks();
  }
  function showAge() {
    const d = state.data, el = $('data-age');
    if (!el) return;
    if (!d || !d.refreshedAt) { el.textContent = T('age.none'); el.className = 'age stale'; return; }
    const mins = Math.floor((Date.now() - d.refreshedAt) / 60000);
    const stale = (Date.now() - d.refreshedAt) / 1000 > (state.session && state.session.maxAge || 86400);
    el.textContent = T('age').replace('%d', mins) + (stale ? ' — ' + T('age.stale') : '');
    el.className = stale ? 'age stale' : 'age';
  }

  // The checks: kept until the records route has them (idempotent by record_id).
  const outcomes = { valid: 1, not_yet_valid: 1, expired: 1, revoked: 1, replaced: 1, not_genuine: 1, copied: 1, test_ticket: 1, unreadable: 1, data_too_old: 1 };
  async function keepCheck(v) {
    if (!outcomes[v.outcome]) return;
    const rec = { record_id: crypto.randomUUID(), outcome: v.outcome, checked_at: new Date().toISOString().replace(/\.\d+Z$/, 'Z') };
    if (v.ticketId) rec.ticket_id = v.ticketId.slice(0, 128);
    if (v.digest) rec.barcode_sha256 = v.digest;
    await tx('checks', 'readwrite', s => s.put(rec));
    postChecks();
  }
  let posting = false;
  async function postChecks() {
    if (posting || !state.session || !navigator.onLine) return;
    posting = true;
    try {
      const all = await tx('checks', 'readonly', s => s.getAll());
      for (let i = 0; i < all.length; i += 500) {
        const batch = all.slice(i, i + 500);
        const body = JSON.stringify({ records: batch.map(r => Object.assign({}, r, { device_time: new Date().toISOString().replace(/\.\d+Z$/, 'Z') })) });
        const r = await fetch('/v1/inspection/records.json', { method: 'POST', body,
          headers: { 'Content-Type': 'application/json', 'Authorization': 'Bearer ' + state.session.token } });
        if (r.status === 401) { await signOut(); break; }
        if (r.status === 400) { // a check the service refuses would block the queue for ever
          await tx('checks', 'readwrite', s => batch.forEach(c => s.delete(c.record_id)));
          continue;
        }
        if (!r.ok) break;
        await tx('checks', 'readwrite', s => batch.forEach(c => s.delete(c.record_id)));
      }
      state.pending = (await tx('checks', 'readonly', s => s.count()));
    } catch (e) { /* offline: the next refresh posts them */ } finally { posting = false; }
  }

  // The verdict on screen.
  // dataOf is what verify judges with: the cached data and the session's settings.
  function dataOf() {
    const d = state.data || {}, s = state.session || {};
    return { keys: d.keys, revoked: d.revoked, revokedKeys: d.revokedKeys, blockedRefs: d.blockedRefs, movedDevices: d.movedDevices,
      rotating: d.rotating, refreshedAt: d.refreshedAt, maxAge: s.maxAge, tolerance: s.tolerance, allowTest: !!($('allow-test') && $('allow-test').checked) };
  }
  // judge verifies what a decoder (via) read from a frame taken at frameAt.
  async function judge(text, frameAt, via) {
    const bytes = V.bytesOf(text);
    const t0 = performance.now();
    const v = await V.verify(bytes, nowSec(), dataOf());
    const t1 = performance.now();
    render(v);
    state.timings.push({ verify: t1 - t0, total: performance.now() - frameAt, via });
    state.verdicts.push(v.outcome);
    (state.results = state.results || []).push({ digest: v.digest, outcome: v.outcome, ticketId: v.ticketId, via, reason: v.reason });
    await keepCheck(v);
  }
  function render(v) {
    const box = $('verdict');
    box.dataset.outcome = v.outcome;
    box.className = 'verdict v-' + (v.outcome === 'valid' ? 'ok' : 'no');
    $('verdict-word').textContent = T('v.' + v.outcome);
    $('verdict-reason').textContent = v.reason || '';
    const c = v.claims;
    $('who').hidden = !c || v.outcome === 'not_genuine';
    if (c && v.outcome !== 'not_genuine') {
      $('who-name').textContent = ((c.firstName || '') + ' ' + (c.lastName || '')).trim() || '—';
      $('who-born').textContent = c.birthDate || '—';
      $('who-product').textContent = c.productName || '—';
      $('who-until').textContent = new Date(c.validUntil * 1000).toLocaleString(document.documentElement.lang);
      $('who-test').hidden = !c.test;
    }
  }

  // The camera: a frame every 150 ms through BarcodeDetector (Aztec, QR)
  // where the browser has it, else the embedded ZXing decoder.
  let stream = null, timer = null, detector = null, zx = null;
  const canvas = document.createElement('canvas');
  async function startCamera() {
    try {
      stream = await navigator.mediaDevices.getUserMedia({ video: { facingMode: 'environment' }, audio: false });
    } catch (e) { $('camera-error').textContent = T('camera.denied'); $('camera-error').hidden = false; return; }
    const video = $('video'); video.srcObject = stream; await video.play().catch(() => {});
    if ('BarcodeDetector' in self) {
      try {
        const f = await BarcodeDetector.getSupportedFormats();
        if (f.includes('aztec')) detector = new BarcodeDetector({ formats: ['aztec', 'qr_code'] });
      } catch (e) { detector = null; }
    }
    if (self.ZXing && !zx) {
      const hints = new Map();
      hints.set(ZXing.DecodeHintType.POSSIBLE_FORMATS, [ZXing.BarcodeFormat.AZTEC, ZXing.BarcodeFormat.QR_CODE]);
      hints.set(ZXing.DecodeHintType.TRY_HARDER, true);
      zx = new ZXing.MultiFormatReader(); zx.setHints(hints);
    }
    timer = setInterval(scan, 150);
  }
  function stopCamera() {
    if (timer) clearInterval(timer); timer = null;
    if (stream) stream.getTracks().forEach(t => t.stop()); stream = null;
  }
  async function scan() {
    const video = $('video');
    if (state.busy || !video.videoWidth) return;
    state.busy = true;
    const frameAt = performance.now();
    try {
      const got = await decodeFrame(video);
      if (got && (got.text !== state.last || Date.now() - state.lastAt > 5000)) {
        state.last = got.text; state.lastAt = Date.now();
        await judge(got.text, frameAt, got.via);
      }
    } catch (e) { /* a frame without a code */ } finally { state.busy = false; }
  }
  // decodeFrame is {text, via} of the first farebox code in the frame:
  // the BarcodeDetector's, else (none found, a text that is no farebox
  // code, an error) the embedded ZXing decoder's; null without a code.
  async function decodeFrame(video) {
    if (detector) {
      try {
        const found = await detector.detect(video);
        for (const b of found) { const x = V.bytesOf(b.rawValue); if (x && x[0] === 0x46) return { text: b.rawValue, via: 'detector' }; }
      } catch (e) { /* fall through to ZXing */ }
    }
    if (!zx) return null;
    const w = video.videoWidth, h = video.videoHeight;
    canvas.width = w; canvas.height = h;
    const ctx = canvas.getContext('2d', { willReadFrequently: true });
    ctx.drawImage(video, 0, 0, w, h);
    const text = decodeImageData(ctx.getImageData(0, 0, w, h));
    return text ? { text, via: 'zxing' } : null;
  }
  function decodeImageData(img) {
    try {
      const lum = new ZXing.RGBLuminanceSource(toLuma(img), img.width, img.height);
      const bmp = new ZXing.BinaryBitmap(new ZXing.HybridBinarizer(lum));
      return zx.decode(bmp).getText();
    } catch (e) { return null; }
  }
  function toLuma(img) {
    const d = img.data, out = new Uint8ClampedArray(img.width * img.height);
    for (let i = 0, j = 0; j < out.length; i += 4, j++) out[j] = (d[i] * 306 + d[i + 1] * 601 + d[i + 2] * 117) >> 10;
    return out;
  }
  state.decodeImageData = decodeImageData;
  state.judge = judge;
  state.dataOf = dataOf;

  function show() {
    const signed = !!state.session;
    $('signin').hidden = signed; $('camera').hidden = !signed;
    if (signed) { $('who-inspector').textContent = state.session.name; showAge(); startCamera(); }
  }

  async function start() {
    $('signin-form').addEventListener('submit', signIn);
    $('signout').addEventListener('click', signOut);
    if ('serviceWorker' in navigator) navigator.serviceWorker.register('/inspect/sw.js', { scope: '/inspect' }).catch(() => {});
    state.session = await get('session');
    state.data = await get('data');
    if (state.session && navigator.onLine) await refresh();
    show();
    self.addEventListener('online', refresh);
    setInterval(() => { showAge(); if (navigator.onLine) refresh(); }, 5 * 60 * 1000);
    document.documentElement.dataset.ready = '1';
  }
  state.refresh = refresh;
  start();
})();
