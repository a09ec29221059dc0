package app

// WithoutOrderEvents returns a copy of a whose PlaceOrder writes no
// order.created event: the baseline of BenchmarkPlaceOrderEvents.
func WithoutOrderEvents(a *App) *App {
	c := New(Options{Store: a.store, Clock: a.clock, IDPrefix: string(a.IDs), Location: a.Loc, Invoicing: a.inv})
	c.catalog.Store(a.catalog.Load())
	c.benchWithoutEvents = true
	return c
}
