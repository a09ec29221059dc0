// farebox inspector app: the verifier (docs/inspect.md). Pure functions
// over bytes and the cached data; WebCrypto for Ed25519 (farebox's
// inspection keys), ECDSA P-256 (the device key of dynamic tickets) and
// HMAC (the TOTP of Google Wallet rotating codes, the moved-phone digests).
// It never throws on any input: every path ends in a verdict object.
'use strict';
(function (root) {
  const te = new TextEncoder();
  const td = new TextDecoder('utf-8', { fatal: true });
  const SIGN_CONTEXT = te.encode('farebox inspection barcode\0');
  const DEVICE_CONTEXT = te.encode('farebox device window\0');
  const FEED_CONTEXT = 'farebox revocation feed\0';
  const BLOCKLIST_CONTEXT = 'farebox blocklist\0';
  const MAX_PAYLOAD = 18 + 2 * (1 + 1 + 255 + 1 + 255 + 16) + 3 * (2 + 400) + 2 + 65 + 64;
  const MAX_DYNAMIC = 5 + MAX_PAYLOAD + 4 + 64;

  function concat(...parts) {
    let n = 0; for (const p of parts) n += p.length;
    const out = new Uint8Array(n); let o = 0;
    for (const p of parts) { out.set(p, o); o += p.length; }
    return out;
  }
  function b64url(s) {
    s = String(s).trim().replace(/-/g, '+').replace(/_/g, '/').replace(/=+$/, '');
    if (!/^[A-Za-z0-9+/]*$/.test(s) || s.length % 4 === 1) return null;
    try {
      const bin = atob(s + '==='.slice((s.length + 3) % 4));
      const out = new Uint8Array(bin.length);
      for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
      return out;
    } catch (e) { return null; }
  }
  // A decoder that hands binary content back through TextDecoder's
  // "iso-8859-1" gets windows-1252 (the WHATWG label): 0x80–0x9F come back
  // as these characters; map them home.
  const CP1252 = [0x20AC, 0x81, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021, 0x02C6, 0x2030, 0x0160, 0x2039, 0x0152, 0x8D, 0x017D, 0x8F,
    0x90, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014, 0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0x9D, 0x017E, 0x0178];
  const FROM1252 = new Map(CP1252.map((c, i) => [c, 0x80 + i]));
  function latin1(s) {
    const out = new Uint8Array(s.length);
    for (let i = 0; i < s.length; i++) {
      let c = s.charCodeAt(i);
      if (c > 255) { c = FROM1252.get(c); if (c === undefined) return null; }
      out[i] = c;
    }
    return out;
  }
  function hex(b) { return Array.from(b, x => x.toString(16).padStart(2, '0')).join(''); }
  function fmtUUID(u) { const h = hex(u); return h.slice(0, 8) + '-' + h.slice(8, 12) + '-' + h.slice(12, 16) + '-' + h.slice(16, 20) + '-' + h.slice(20); }

  // bytesOf turns what a code carries (text as the decoder gives it) into
  // payload bytes: the binary payload read as ISO-8859-1, or its base64
  // text; a Google Wallet rotating code's text ("FR1.…") as it is.
  function bytesOf(text) {
    if (typeof text !== 'string' || text.length === 0 || text.length > 8192) return null;
    const raw = latin1(text);
    if (raw && raw.length > 4 && raw[0] === 0x46 && raw[1] === 0x52 && raw[2] === 0x31 && raw[3] === 0x2e) return raw; // "FR1." (a text)
    if (raw && raw.length >= 3 && raw[0] === 0x46 && (raw[1] === 0x42 || raw[1] === 0x44)) return raw; // "FB" / "FD"
    const b = b64url(text);
    if (b && b.length >= 3 && b[0] === 0x46 && (b[1] === 0x42 || b[1] === 0x44)) return b;
    return raw || b;
  }

  // parse is barcode.Parse of internal/barcode/payload.go: the claims and
  // the length of the signed body, or null for anything Sign could not write.
  function parse(p) {
    if (!(p instanceof Uint8Array) || p.length < 18 + 64 || p.length > MAX_PAYLOAD || p[0] !== 0x46 || p[1] !== 0x42) return null;
    if (p[2] !== 1 && p[2] !== 2) return null;
    const dv = new DataView(p.buffer, p.byteOffset, p.byteLength);
    const c = { version: p[2], kid: dv.getUint16(3) };
    const flags = p[5];
    if (flags & ~0x03) return null;
    c.test = (flags & 1) !== 0; c.dynamic = (flags & 2) !== 0;
    c.validFrom = dv.getUint32(6); c.validUntil = dv.getUint32(10);
    if (c.validUntil < c.validFrom) return null;
    const y = dv.getUint16(14), m = p[16], d = p[17];
    if (y || m || d) {
      const t = new Date(Date.UTC(y, m - 1, d));
      if (y < 1 || y > 9999 || t.getUTCFullYear() !== y || t.getUTCMonth() !== m - 1 || t.getUTCDate() !== d) return null;
      c.birthDate = String(y).padStart(4, '0') + '-' + String(m).padStart(2, '0') + '-' + String(d).padStart(2, '0');
    } else c.birthDate = '';
    let o = 18;
    const end = p.length - 64;
    const str = (w) => {
      if (o + w > end) throw 0;
      const n = w === 2 ? dv.getUint16(o) : p[o]; o += w;
      if (o + n > end) throw 0;
      const s = td.decode(p.subarray(o, o + n)); o += n; return s;
    };
    const id = () => {
      if (o >= end) throw 0;
      const tag = p[o++];
      if (tag === 0) return str(1);
      if (tag !== 1) throw 0;
      const prefix = str(1), kind = str(1);
      if (o + 16 > end) throw 0;
      const u = fmtUUID(p.subarray(o, o + 16)); o += 16;
      return prefix + '-' + kind + '-' + u;
    };
    try {
      c.ticketId = id(); c.productId = id();
      const w = c.version === 2 ? 2 : 1;
      c.productName = str(w); c.firstName = str(w); c.lastName = str(w);
      if (c.version === 2 && te.encode(c.productName).length <= 255 && te.encode(c.firstName).length <= 255 && te.encode(c.lastName).length <= 255) return null;
      if (c.dynamic) {
        if (o + 2 > end) return null;
        c.window = p[o]; const kl = p[o + 1]; o += 2;
        if (c.window < 1 || (kl !== 0 && kl !== 65) || o + kl > end) return null;
        c.deviceKey = p.slice(o, o + kl); o += kl;
        if (kl && c.deviceKey[0] !== 4) return null;
      }
    } catch (e) { return null; }
    if (o !== end) return null;
    c.bodyLen = end;
    return c;
  }

  async function ed25519(pub, msg, sig) {
    try {
      const k = await crypto.subtle.importKey('raw', pub, { name: 'Ed25519' }, false, ['verify']);
      return await crypto.subtle.verify({ name: 'Ed25519' }, k, sig, msg);
    } catch (e) { return false; }
  }
  async function p256(pub, msg, sig) {
    try {
      const k = await crypto.subtle.importKey('raw', pub, { name: 'ECDSA', namedCurve: 'P-256' }, false, ['verify']);
      return await crypto.subtle.verify({ name: 'ECDSA', hash: 'SHA-256' }, k, sig, msg);
    } catch (e) { return false; }
  }

  // verifyDetached checks a signed document's bytes (the feed, the
  // blocklist) with a live key of keys: Ed25519 over context ‖ body.
  async function verifyDetached(keys, context, body, sig) {
    const k = (keys || []).find(k => k.kid === sig.kid && k.environment !== 'test');
    const s = b64url(sig.sig || ''), pub = k && b64url(k.public_key);
    if (!s || !pub) return false;
    return ed25519(pub, concat(te.encode(context), body), s);
  }

  // splitDetached cuts {"<name>":<body>,"signature":{...}} into the body's
  // verbatim bytes and the signature.
  function splitDetached(text, name) {
    const head = '{"' + name + '":';
    text = String(text).trimEnd();
    const i = text.lastIndexOf(',"signature":');
    if (!text.startsWith(head) || i < 0) return null;
    try {
      return { body: te.encode(text.slice(head.length, i)), doc: JSON.parse(text.slice(head.length, i)), signature: JSON.parse(text.slice(i + 13, -1)) };
    } catch (e) { return null; }
  }

  const MOVED_CONTEXT = te.encode('farebox moved device\0');
  const ROTATING_PREFIX = 'FR1.';
  const MAX_ROTATING = ROTATING_PREFIX.length + Math.ceil(MAX_PAYLOAD * 4 / 3) + 2 + 10 + 10;

  function b64urlEncode(b) {
    let bin = '';
    for (let i = 0; i < b.length; i++) bin += String.fromCharCode(b[i]);
    return btoa(bin).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
  }
  async function sha256(b) { return new Uint8Array(await crypto.subtle.digest('SHA-256', b)); }
  async function hmac(hash, key, msg) {
    const k = await crypto.subtle.importKey('raw', key, { name: 'HMAC', hash }, false, ['sign']);
    return new Uint8Array(await crypto.subtle.sign('HMAC', k, msg));
  }
  // totp is RFC 6238 with HMAC-SHA1 (dynamic.TOTP): the value of key at
  // Unix time seconds for a time step of period seconds, digits long.
  async function totp(key, seconds, period, digits) {
    const step = Math.floor(seconds / period), msg = new Uint8Array(8), dv = new DataView(msg.buffer);
    dv.setUint32(0, Math.floor(step / 4294967296)); dv.setUint32(4, step % 4294967296);
    const h = await hmac('SHA-1', key, msg), off = h[h.length - 1] & 0x0f;
    const code = (((h[off] & 0x7f) << 24) | (h[off + 1] << 16) | (h[off + 2] << 8) | h[off + 3]) >>> 0;
    return String(code % 10 ** digits).padStart(digits, '0');
  }
  // sameText compares without stopping at the first difference.
  function sameText(a, b) {
    if (a.length !== b.length) return false;
    let d = 0; for (let i = 0; i < a.length; i++) d |= a.charCodeAt(i) ^ b.charCodeAt(i);
    return d === 0;
  }
  function isRotating(b) { return b.length > 4 && b[0] === 0x46 && b[1] === 0x52 && b[2] === 0x31 && b[3] === 0x2e; }

  // parseRotating is dynamic.ParseRotating: the text of a Google Wallet
  // rotating code, "FR1." base64url(payload) "." seconds "." TOTP value,
  // split; a string (why it cannot be read) for anything else.
  function parseRotating(b, digits) {
    if (b.length > MAX_ROTATING) return 'too long';
    let s = '';
    for (let i = 0; i < b.length; i++) { if (b[i] > 0x7e || b[i] < 0x20) return 'not text'; s += String.fromCharCode(b[i]); }
    const parts = s.slice(ROTATING_PREFIX.length).split('.');
    if (parts.length !== 3) return 'a rotating code has three parts after FR1.';
    const p = b64url(parts[0]);
    if (!p || p.length === 0) return 'the payload is not base64url';
    if (!/^[0-9]{1,10}$/.test(parts[1])) return 'the timestamp is not Unix seconds';
    if (!new RegExp('^[0-9]{' + digits + '}$').test(parts[2])) return 'the TOTP value is not ' + digits + ' digits';
    return { payload: p, seconds: Number(parts[1]), value: parts[2] };
  }

  // rotatingParams are the TOTP parameters of data.rotating (GET
  // /v1/inspection/rotating-secret.json), null when the device has none.
  function rotatingParams(r) {
    if (!r || r.algorithm !== 'TOTP_SHA1' || r.key_derivation !== 'HMAC-SHA256') return null;
    const secret = /^([0-9a-f]{2}){32,}$/.test(r.secret || '') ? Uint8Array.from(r.secret.match(/../g), x => parseInt(x, 16)) : null;
    const digits = r.digits, len = r.key_length;
    if (!secret || !Number.isInteger(digits) || digits < 6 || digits > 10 || !Number.isInteger(len) || len < 1 || len > 32 || typeof r.key_context !== 'string') return null;
    return { secret, digits, len, context: te.encode(r.key_context) };
  }

  // tolerance is the clock difference accepted on each side of a window
  // (seconds): the configured one (the sign-in's window_tolerance_seconds),
  // else farebox inspect's default.
  function tolerance(data) {
    const t = data.tolerance;
    return typeof t === 'number' && Number.isFinite(t) && t >= 0 ? t : 30;
  }

  // outside is why window [start, end) is not current at now ± tol, '' when it is.
  function outside(start, end, now, tol) {
    if (now < start - tol) return 'code prepared in advance (' + Math.round(start - now) + ' s ahead)';
    if (now >= end + tol) return 'old code (' + Math.round(now - end) + ' s old): screenshot or recording';
    return '';
  }

  // verify judges the bytes a code carries at now (seconds) with data
  // {keys, revoked: {ticket_id: entry}, revokedKeys: {kid: entry},
  // blockedRefs: {ref: entry}, movedDevices: {"ticket_id digest": entry},
  // rotating (the rotating-barcode secret's answer), refreshedAt (ms),
  // maxAge (s), tolerance (s), allowTest}. The verdict's outcome is one of
  // the records' outcomes (docs/records.md), data_too_old included.
  async function verify(bytes, now, data) {
    try { return await verifyInner(bytes, now, data || {}); }
    catch (e) { return { outcome: 'unreadable', reason: 'cannot read: ' + (e && e.message || e) }; }
  }
  // codeOf splits what a code carries into the farebox payload p and the
  // moving part: {dyn} of a phone's code (FD), {rot} of a Google Wallet
  // rotating code (FR1), neither for a still payload (FB); or a verdict.
  function codeOf(bytes, data) {
    if (isRotating(bytes)) {
      const params = rotatingParams(data.rotating);
      const r = parseRotating(bytes, params ? params.digits : 8);
      if (typeof r === 'string') return { outcome: 'unreadable', reason: 'cannot read: ' + r };
      return { p: r.payload, rot: Object.assign(r, { params }) };
    }
    if (bytes[0] === 0x46 && bytes[1] === 0x44) {
      if (bytes[2] !== 1 || bytes.length > MAX_DYNAMIC || bytes.length < 5) return { outcome: 'unreadable', reason: 'cannot read: unknown dynamic code' };
      const n = (bytes[3] << 8) | bytes[4];
      if (bytes.length !== 5 + n + 4 + 64) return { outcome: 'unreadable', reason: 'cannot read: truncated dynamic code' };
      const w = new DataView(bytes.buffer, bytes.byteOffset + 5 + n, 4).getUint32(0);
      return { p: bytes.subarray(5, 5 + n), dyn: { window: w, body: bytes.subarray(0, 5 + n + 4), sig: bytes.subarray(5 + n + 4) } };
    }
    if (bytes[0] === 0x46 && bytes[1] === 0x42) return { p: bytes };
    return { outcome: 'unreadable', reason: 'cannot read: not a farebox code' };
  }
  async function verifyInner(bytes, now, data) {
    if (!(bytes instanceof Uint8Array) || bytes.length < 3) return { outcome: 'unreadable', reason: 'cannot read: no farebox code' };
    if (typeof now !== 'number' || !Number.isFinite(now)) return { outcome: 'unreadable', reason: 'cannot read: this device has no clock time' };
    const code = codeOf(bytes, data);
    if (code.outcome) return code;
    // The digest of the code as read, as farebox inspect --post records it.
    const digest = hex(await sha256(bytes));
    const { p, dyn, rot } = code;
    const c = parse(p);
    if (!c) return { outcome: 'not_genuine', reason: 'the payload is malformed', digest };
    const key = (data.keys || []).find(k => k.kid === String(c.kid));
    const base = { claims: c, digest, ticketId: c.ticketId };
    const no = (outcome, reason) => Object.assign(base, { outcome, reason });
    if (!key) return no('not_genuine', 'signed with an unknown key');
    if ((key.environment === 'test') !== c.test) return no('not_genuine', 'key and ticket environment differ');
    const pub = b64url(key.public_key);
    if (!pub || !(await ed25519(pub, concat(SIGN_CONTEXT, p.subarray(0, c.bodyLen)), p.subarray(c.bodyLen)))) {
      return no('not_genuine', 'signature does not verify (forged or altered)');
    }
    const rk = data.revokedKeys && data.revokedKeys[String(c.kid)];
    if (rk) return no('revoked', 'inspection key revoked: ' + rk.reason);
    const tol = tolerance(data);
    if (!c.dynamic && (dyn || rot)) return no('not_genuine', 'a static ticket inside a ' + (dyn ? 'dynamic' : 'rotating') + ' code (forged)');
    if (c.dynamic && rot) {
      // Google Wallet's rotating code: the TOTP of the timestamp's time
      // step with the ticket's key, and that step's window against now.
      const P = rot.params;
      if (!P) return no('copied', 'cannot check the wallet pass\'s rotating code: this device has no rotating-barcode secret (sign in again online)');
      const k = (await hmac('SHA-256', P.secret, concat(P.context, te.encode(c.ticketId)))).subarray(0, P.len);
      if (!sameText(await totp(k, rot.seconds, c.window, P.digits), rot.value)) {
        return no('copied', 'the rotating code was not made by this ticket\'s wallet pass (a made-up time, or a code of another ticket)');
      }
      const start = Math.floor(rot.seconds / c.window) * c.window, why = outside(start, start + c.window, now, tol);
      if (why) return no('copied', why);
    } else if (c.dynamic) {
      if (!dyn) return no('copied', 'a still image of a ticket that must show a moving code');
      if (!c.deviceKey || c.deviceKey.length !== 65) return no('copied', 'ticket not bound to a phone yet');
      if (!(await p256(c.deviceKey, concat(DEVICE_CONTEXT, dyn.body), dyn.sig))) {
        return no('copied', 'moving code not signed by the phone the ticket is bound to');
      }
      // The blocklist's moved-away phones: this ticket's code from a phone it left.
      const moved = data.movedDevices && data.movedDevices[c.ticketId + ' ' + b64urlEncode(await sha256(concat(MOVED_CONTEXT, te.encode(c.ticketId), c.deviceKey)))];
      if (moved) return no('replaced', moved.reason || 'the ticket moved to another phone');
      const why = outside(dyn.window * c.window, dyn.window * c.window + c.window, now, tol);
      if (why) return no('copied', why);
    }
    const rev = data.revoked && data.revoked[c.ticketId];
    if (rev) return no(rev.kind === 'restored' ? 'replaced' : 'revoked', rev.reason);
    const blk = data.blockedRefs && data.blockedRefs[c.ticketId];
    if (blk) return no('revoked', blk.reason);
    if (c.test && !data.allowTest) return no('test_ticket', 'test ticket');
    if (now < c.validFrom) return Object.assign(base, { outcome: 'not_yet_valid' });
    if (now > c.validUntil) return Object.assign(base, { outcome: 'expired' });
    const age = data.refreshedAt ? (now * 1000 - data.refreshedAt) / 1000 : Infinity;
    if (!(age <= (data.maxAge || 86400))) return no('data_too_old', 'data too old: connect to a network');
    return Object.assign(base, { outcome: 'valid' });
  }

  root.FareboxVerify = { verify, parse, bytesOf, b64url, hex, totp, splitDetached, verifyDetached, FEED_CONTEXT, BLOCKLIST_CONTEXT };
})(typeof self !== 'undefined' ? self : globalThis);
