// Package invoicetest provides fixed example documents for the tests of the
// invoice renderers: one per invoicing flow of the interface (no customer,
// one customer, split, collection across months, collection with splits),
// a collection within one month from the test environment, a cancellation
// and a payment notice, with a complete seller configuration. It is
// imported by tests only; its values are examples, not configuration.
package invoicetest
