// The $ref resolver Spectral lints api/openapi.yaml with (spectral lint
// --resolver resolver.js): Spectral's own (local and file references, no
// network), except that a "$ref" inside a literal example value is data,
// not a reference. OpenAPI 3.1 says an example's value is an "embedded
// literal example"; farebox's answers embed JSON Schema documents whose
// "$ref": "#/definitions/..." pointers the SDKs need as they are
// (shared/design/client-contract.md 3.2), so the examples show them as the
// server sends them. Spectral resolves "$ref" everywhere (its open issue
// stoplightio/spectral#1310) and reports those as invalid-ref; this skips
// exactly the pointers below an `example` or an `examples.<name>.value`
// that is not a schema property named so. Every other reference, in
// schemas, responses, parameters, is resolved and checked as usual.
const { Resolver } = require('@stoplight/spectral-ref-resolver');
const { resolveFile } = require('@stoplight/json-ref-readers');

const literal = /\/(example|examples\/[^/]+\/value)(\/|$)/;
const schemaProperty = /\/properties\/(example|examples)(\/|$)/;

function inExampleLiteral(pointer) {
  if (typeof pointer !== 'string') return false;
  const m = literal.exec(pointer);
  if (!m) return false;
  // "/properties/example" names a schema property, not an example value.
  return !schemaProperty.test(pointer.slice(0, m.index + m[0].length));
}

module.exports = new Resolver({
  resolvers: { file: { resolve: resolveFile } },
  transformRef(opts) {
    if (inExampleLiteral(opts.jsonPointer)) return undefined;
    return opts.ref;
  },
});
