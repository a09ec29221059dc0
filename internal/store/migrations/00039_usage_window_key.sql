-- +goose Up
-- The deferred usage ledger (usage.Deferred, docs/operations.md "Billing")
-- writes each window of rows under a key unique to the process and window
-- ("<run>-<n>"). A write whose outcome was unknown (the connection broke
-- after the commit) is retried under the same key; the unique index makes
-- the retry change nothing, so a window is never counted twice. Rows the
-- synchronous ledger and the journal's roll-up write carry no key (NULL:
-- not unique-checked; segments are kept once by usage_segments).
ALTER TABLE usage_batches ADD COLUMN window_key TEXT;
CREATE UNIQUE INDEX usage_batches_window_key ON usage_batches (window_key);

-- +goose Down
DROP INDEX usage_batches_window_key;
ALTER TABLE usage_batches DROP COLUMN window_key;
