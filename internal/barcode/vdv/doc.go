// Package vdv implements the VDV-KA static barcode ("VDV-Kernapplikation
// statischer Barcode", the Deutschlandticket's barcode): BER-TLV ticket data
// signed by RSA with message recovery (ISO/IEC 9796-2 scheme 1, SHA-1), the
// issuing organisation's card-verifiable (CV) certificate and the reference
// of the certification authority that signed it. docs/barcodes.md.
package vdv
