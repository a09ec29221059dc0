-- +goose Up
-- The dashboard's detail pages (issue 34, docs/web.md "Detail pages")
-- show the events about an order, its coupons and tickets, or an invoice
-- as a timeline (store.EventsAbout), and the erasure of personal data
-- finds the events about the erased records (EventsOfObjects): both ask
-- for the events of a few object ids, which without this index read every
-- event of every account.
CREATE INDEX events_object ON events (object_id, seq);

-- +goose Down
DROP INDEX events_object;
