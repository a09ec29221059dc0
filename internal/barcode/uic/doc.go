// Package uic writes and reads the uic-918-3-uflex barcode profile: a UIC
// 918.3 static barcode container ("#UT", version 01 with DSA-1024/SHA-1 or
// 02 with DSA-2048/SHA-224, the signer's RICS company code and key id,
// zlib-compressed records) holding a U_HEAD record and a U_FLEX record with
// the UIC Flexible Content Barcode (FCB 1.3, ASN.1 unaligned PER) of one
// ticket: issuing details, the traveller (name, birth date) and an open
// ticket with product, area and validity.
//
// The UPER codec (uper.go) covers only the constructs this subset needs;
// UnmarshalFCB refuses everything outside it. Signatures are deterministic
// (the nonce is derived from key and digest). Without a configured issuer
// a development key (company 9999, key 99999) signs, and every barcode it
// signs is a specimen. See docs/barcodes.md.
package uic
