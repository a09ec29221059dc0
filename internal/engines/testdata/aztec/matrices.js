// Encodes payloads with the engine's Aztec encoder (assets/aztec.js) for
// TestAztecEncoderJS: node matrices.js <aztec.js> < payloads (JSON list of
// base64 strings) > symbols (JSON list of {size, compact, layers, rows}).
"use strict";
const fs = require("fs");
const aztec = require(require("path").resolve(process.argv[2]));
const out = JSON.parse(fs.readFileSync(0, "utf8")).map((b64) => {
  const s = aztec.encode(Buffer.from(b64, "base64"));
  const rows = [];
  for (let y = 0; y < s.size; y++) {
    let r = "";
    for (let x = 0; x < s.size; x++) { r += s.dark(x, y) ? "1" : "0"; }
    rows.push(r);
  }
  return { size: s.size, compact: s.compact, layers: s.layers, rows };
});
process.stdout.write(JSON.stringify(out));
