// fareboxAztec: a compact Aztec Code encoder (ISO/IEC 24778) for binary data,
// written for the rendering engine (engines.go inlines it in its page).
// It encodes the whole input in one binary shift from upper mode, picks
// the smallest compact or full-range symbol that holds it with at least
// 23 % error correction (the layer choice, bit stuffing, Reed-Solomon
// fields and module layout follow the standard as ZXing implements it), and
// returns {size, dark(x, y)}. Inputs up to what a 32-layer symbol holds
// (about 1,900 bytes); the engine's dynamic barcode is about 350. Tests: engines'
// TestAztecEncoderJS decodes its symbols with ZXing.
var fareboxAztec = (function () {
  "use strict";
  var WORD = [4, 6, 6, 8, 8, 8, 8, 8, 8, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10,
    12, 12, 12, 12, 12, 12, 12, 12, 12, 12];
  var POLY = { 4: 0x13, 6: 0x43, 8: 0x12d, 10: 0x409, 12: 0x1069 };
  var fields = {};

  function Bits() { this.a = []; }
  Bits.prototype.add = function (v, n) { for (var i = n - 1; i >= 0; i--) { this.a.push((v >>> i) & 1); } };

  // field returns exp/log tables of GF(2^m).
  function field(m) {
    if (fields[m]) { return fields[m]; }
    var size = 1 << m, exp = new Array(size), log = new Array(size), x = 1;
    for (var i = 0; i < size; i++) { exp[i] = x; x <<= 1; if (x >= size) { x = (x ^ POLY[m]) & (size - 1); } }
    for (i = 0; i < size - 1; i++) { log[exp[i]] = i; }
    fields[m] = { exp: exp, log: log, n: size - 1 };
    return fields[m];
  }
  function mul(f, a, b) { return a === 0 || b === 0 ? 0 : f.exp[(f.log[a] + f.log[b]) % f.n]; }

  // checkWords appends Reed-Solomon words to the words of bits so that they
  // fill totalBits, and returns the whole as bits (leading pad of zeros).
  function checkWords(bits, totalBits, m) {
    var f = field(m), data = [], total = Math.floor(totalBits / m), i, j;
    for (i = 0; i + m <= bits.a.length; i += m) {
      var w = 0;
      for (j = 0; j < m; j++) { w = (w << 1) | bits.a[i + j]; }
      data.push(w);
    }
    var ec = total - data.length, gen = [1];
    for (i = 1; i <= ec; i++) { // gen *= (x - α^i), highest degree first
      var next = gen.concat([0]);
      for (j = 1; j < next.length; j++) { next[j] ^= mul(f, gen[j - 1], f.exp[i % f.n]); }
      gen = next;
    }
    var rem = new Array(ec).fill(0);
    for (i = 0; i < data.length; i++) {
      var factor = data[i] ^ rem[0];
      rem.shift(); rem.push(0);
      for (j = 0; j < ec; j++) { rem[j] ^= mul(f, gen[j + 1], factor); }
    }
    var out = new Bits();
    out.add(0, totalBits % m);
    data.concat(rem).forEach(function (w) { out.add(w, m); });
    return out;
  }

  // stuff splits bits into words of m bits, none all zeros or all ones
  // (pads with ones).
  function stuff(bits, m) {
    var out = new Bits(), n = bits.a.length, mask = (1 << m) - 2;
    for (var i = 0; i < n; i += m) {
      var w = 0;
      for (var j = 0; j < m; j++) { if (i + j >= n || bits.a[i + j]) { w |= 1 << (m - 1 - j); } }
      if ((w & mask) === mask) { out.add(w & mask, m); i--; } else if ((w & mask) === 0) { out.add(w | 1, m); i--; } else { out.add(w, m); }
    }
    return out;
  }

  function encode(bytes) {
    var n = bytes.length;
    if (n < 1 || n > 2078) { throw new Error("aztec: " + n + " bytes (1 to 2078)"); }
    var bits = new Bits();
    bits.add(31, 5); // B/S from upper mode
    if (n <= 31) { bits.add(n, 5); } else { bits.add(0, 5); bits.add(n - 31, 11); }
    for (var b = 0; b < n; b++) { bits.add(bytes[b], 8); }
    var ecc = Math.floor(bits.a.length * 23 / 100) + 11, need = bits.a.length + ecc;
    var compact, layers, m = 0, stuffed = null, total;
    for (var i = 0; ; i++) {
      if (i > 32) { throw new Error("aztec: data too large"); }
      compact = i <= 3;
      layers = compact ? i + 1 : i;
      total = ((compact ? 88 : 112) + 16 * layers) * layers;
      if (need > total) { continue; }
      if (m !== WORD[layers]) { m = WORD[layers]; stuffed = stuff(bits, m); }
      if (compact && stuffed.a.length > m * 64) { continue; }
      if (stuffed.a.length + ecc <= total - total % m) { break; }
    }
    var msg = checkWords(stuffed, total, m).a;
    var mode = new Bits();
    if (compact) { mode.add(layers - 1, 2); mode.add(stuffed.a.length / m - 1, 6); mode = checkWords(mode, 28, 4).a; }
    else { mode.add(layers - 1, 5); mode.add(stuffed.a.length / m - 1, 11); mode = checkWords(mode, 40, 4).a; }

    var base = (compact ? 11 : 14) + layers * 4, map = new Array(base), size, k;
    if (compact) {
      size = base;
      for (k = 0; k < base; k++) { map[k] = k; }
    } else {
      size = base + 1 + 2 * Math.floor((Math.floor(base / 2) - 1) / 15);
      var oc = Math.floor(base / 2), c0 = Math.floor(size / 2);
      for (k = 0; k < oc; k++) {
        var off = k + Math.floor(k / 15);
        map[oc - k - 1] = c0 - off - 1;
        map[oc + k] = c0 + off + 1;
      }
    }
    var grid = new Uint8Array(size * size);
    var set = function (x, y) { grid[y * size + x] = 1; };
    var row = 0;
    for (var l = 0; l < layers; l++) {
      var rs = (layers - l) * 4 + (compact ? 9 : 12);
      for (var j = 0; j < rs; j++) {
        var co = j * 2;
        for (k = 0; k < 2; k++) {
          if (msg[row + co + k]) { set(map[l * 2 + k], map[l * 2 + j]); }
          if (msg[row + rs * 2 + co + k]) { set(map[l * 2 + j], map[base - 1 - l * 2 - k]); }
          if (msg[row + rs * 4 + co + k]) { set(map[base - 1 - l * 2 - k], map[base - 1 - l * 2 - j]); }
          if (msg[row + rs * 6 + co + k]) { set(map[base - 1 - l * 2 - j], map[l * 2 + k]); }
        }
      }
      row += rs * 8;
    }
    var c = Math.floor(size / 2), q;
    if (compact) {
      for (q = 0; q < 7; q++) {
        var o = c - 3 + q;
        if (mode[q]) { set(o, c - 5); }
        if (mode[q + 7]) { set(c + 5, o); }
        if (mode[20 - q]) { set(o, c + 5); }
        if (mode[27 - q]) { set(c - 5, o); }
      }
    } else {
      for (q = 0; q < 10; q++) {
        var o2 = c - 5 + q + Math.floor(q / 5);
        if (mode[q]) { set(o2, c - 7); }
        if (mode[q + 10]) { set(c + 7, o2); }
        if (mode[29 - q]) { set(o2, c + 7); }
        if (mode[39 - q]) { set(c - 7, o2); }
      }
    }
    var eye = compact ? 5 : 7;
    for (q = 0; q < eye; q += 2) {
      for (k = c - q; k <= c + q; k++) { set(k, c - q); set(k, c + q); set(c - q, k); set(c + q, k); }
    }
    set(c - eye, c - eye); set(c - eye + 1, c - eye); set(c - eye, c - eye + 1);
    set(c + eye, c - eye); set(c + eye, c - eye + 1); set(c + eye, c + eye - 1);
    if (!compact) { // reference grid
      for (q = 0, j = 0; q < Math.floor(base / 2) - 1; q += 15, j += 16) {
        for (k = c & 1; k < size; k += 2) { set(c - j, k); set(c + j, k); set(k, c - j); set(k, c + j); }
      }
    }
    return { size: size, compact: compact, layers: layers, dark: function (x, y) { return grid[y * size + x] === 1; } };
  }

  return { encode: encode };
})();
if (typeof module !== "undefined" && module.exports) { module.exports = fareboxAztec; }
