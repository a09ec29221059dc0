// farebox inspector app: the verifier (docs/inspect.md). Pure functions
// over bytes and the cached data; WebCrypto for Ed25519 (farebox's
// inspection keys) and ECDSA P-256 (the device key of dynamic tickets).
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
  // payload bytes: the binary payload read as ISO-8859-1, or its base64 text.
  function bytesOf(text) {
    if (typeof text !== 'string' || text.length === 0 || text.length > 8192) return null;
    const raw = latin1(text);
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

  // verify judges the bytes a code carries at now (seconds) with data
  // {keys, revoked: {ticket_id: entry}, revokedKeys: {kid: entry},
  // blockedRefs: {ref: entry}, refreshedAt (ms), maxAge (s), tolerance (s),
  // allowTest}. The verdict's outcome is one of the records' outcomes, or
  // "stale" (genuine and valid, but the data is too old to say so).
  async function verify(bytes, now, data) {
    try { return await verifyInner(bytes, now, data || {}); }
    catch (e) { return { outcome: 'unreadable', reason: 'cannot read: ' + (e && e.message || e) }; }
  }
  async function verifyInner(bytes, now, data) {
    if (!(bytes instanceof Uint8Array) || bytes.length < 3) return { outcome: 'unreadable', reason: 'cannot read: no farebox code' };
    let dyn = null, p = bytes;
    if (bytes[0] === 0x46 && bytes[1] === 0x44) {
      if (bytes[2] !== 1 || bytes.length > MAX_DYNAMIC || bytes.length < 5) return { outcome: 'unreadable', reason: 'cannot read: unknown dynamic code' };
      const n = (bytes[3] << 8) | bytes[4];
      if (bytes.length !== 5 + n + 4 + 64) return { outcome: 'unreadable', reason: 'cannot read: truncated dynamic code' };
      p = bytes.subarray(5, 5 + n);
      const w = new DataView(bytes.buffer, bytes.byteOffset + 5 + n, 4).getUint32(0);
      dyn = { window: w, body: bytes.subarray(0, 5 + n + 4), sig: bytes.subarray(5 + n + 4) };
    } else if (!(bytes[0] === 0x46 && bytes[1] === 0x42)) {
      return { outcome: 'unreadable', reason: 'cannot read: not a farebox code' };
    }
    const digest = hex(new Uint8Array(await crypto.subtle.digest('SHA-256', p)));
    const c = parse(p);
    if (!c) return { outcome: 'not_genuine', reason: 'the payload is malformed', digest };
    const key = (data.keys || []).find(k => k.kid === String(c.kid));
    const base = { claims: c, digest, ticketId: c.ticketId };
    if (!key) return Object.assign(base, { outcome: 'not_genuine', reason: 'signed with an unknown key' });
    if ((key.environment === 'test') !== c.test) return Object.assign(base, { outcome: 'not_genuine', reason: 'key and ticket environment differ' });
    const pub = b64url(key.public_key);
    if (!pub || !(await ed25519(pub, concat(SIGN_CONTEXT, p.subarray(0, c.bodyLen)), p.subarray(c.bodyLen)))) {
      return Object.assign(base, { outcome: 'not_genuine', reason: 'signature does not verify (forged or altered)' });
    }
    const rk = data.revokedKeys && data.revokedKeys[String(c.kid)];
    if (rk) return Object.assign(base, { outcome: 'revoked', reason: 'inspection key revoked: ' + rk.reason });
    if (c.dynamic) {
      if (!dyn) return Object.assign(base, { outcome: 'copied', reason: 'a still image of a ticket that must show a moving code' });
      if (!c.deviceKey || c.deviceKey.length !== 65) return Object.assign(base, { outcome: 'copied', reason: 'ticket not bound to a phone yet' });
      if (!(await p256(c.deviceKey, concat(DEVICE_CONTEXT, dyn.body), dyn.sig))) {
        return Object.assign(base, { outcome: 'copied', reason: 'moving code not signed by the phone the ticket is bound to' });
      }
      const tol = data.tolerance == null ? 30 : data.tolerance;
      const start = dyn.window * c.window, endw = start + c.window;
      if (now < start - tol) return Object.assign(base, { outcome: 'copied', reason: 'code prepared in advance (' + Math.round(start - now) + ' s ahead)' });
      if (now >= endw + tol) return Object.assign(base, { outcome: 'copied', reason: 'old code (' + Math.round(now - endw) + ' s old): screenshot or recording' });
    } else if (dyn) {
      return Object.assign(base, { outcome: 'not_genuine', reason: 'a static ticket inside a dynamic code (forged)' });
    }
    const rev = data.revoked && data.revoked[c.ticketId];
    if (rev) return Object.assign(base, { outcome: rev.kind === 'restored' ? 'replaced' : 'revoked', reason: rev.reason });
    const blk = data.blockedRefs && data.blockedRefs[c.ticketId];
    if (blk) return Object.assign(base, { outcome: 'revoked', reason: blk.reason });
    if (c.test && !data.allowTest) return Object.assign(base, { outcome: 'test_ticket', reason: 'test ticket' });
    if (now < c.validFrom) return Object.assign(base, { outcome: 'not_yet_valid' });
    if (now > c.validUntil) return Object.assign(base, { outcome: 'expired' });
    const age = data.refreshedAt ? (now * 1000 - data.refreshedAt) / 1000 : Infinity;
    if (!(age <= (data.maxAge || 86400))) return Object.assign(base, { outcome: 'stale', reason: 'data too old' });
    return Object.assign(base, { outcome: 'valid' });
  }

  root.FareboxVerify = { verify, parse, bytesOf, b64url, hex, splitDetached, verifyDetached, FEED_CONTEXT, BLOCKLIST_CONTEXT };
})(typeof self !== 'undefined' ? self : globalThis);
