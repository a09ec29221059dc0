// Package keyref resolves a reference to a private key into a
// crypto.Signer: a file (PEM) or an object of a PKCS#11 token named by a
// `pkcs11:` URI (RFC 7512). Every signing key of farebox goes through it
// (docs/operations.md, "Keys in a hardware token"); what differs per key is
// only the key type a caller accepts.
//
// A token key never leaves the token: farebox hands it the data or digest
// to sign (CKM_EDDSA, CKM_ECDSA, CKM_DSA, CKM_RSA_PKCS, and CKM_RSA_X_509
// for the raw RSA of ISO 9796-2) and reads the public key from the token.
// Token access needs cgo (the PKCS#11 module is a C library): a build with
// CGO_ENABLED=0 still reads file keys and refuses a `pkcs11:` reference at
// start with an error that says so.
package keyref
