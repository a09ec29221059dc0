// Package credentials loads the service's signing material at startup: the
// inspection barcode keyring (internal/barcode), the Apple Wallet pass
// credentials (internal/wallet/apple) and the Google Wallet service account
// (internal/wallet/google).
//
// Each comes from configuration when configured. Otherwise:
//
//   - Inspection keys are generated once. With the embedded database they
//     are files in <data-dir>/keys/inspection; on PostgreSQL they are rows of
//     the service_secrets table, so every instance signs and verifies with
//     the same keys without extra configuration (the first instance to start
//     inserts them, the others read them). Anyone who can read that table
//     can forge tickets; production deployments should configure keys from
//     a secret store instead (docs/wallet.md).
//   - Apple and Google development credentials are generated into
//     <data-dir>/keys/wallet-dev of each instance. Passes built with them do
//     not install on devices (Apple) or are rejected (Google), so they are
//     not advertised in available_rendering_options unless explicitly allowed.
//
// Limits: keys are loaded once; a rotation takes effect on restart.
package credentials
