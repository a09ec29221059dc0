-- +goose Up
-- PostgreSQL compresses an event's object (about 2.3 kB of JSON for an
-- order.created, over the 2 kB toast threshold) with pglz by default:
-- about 22 µs of the database's CPU per event, against about 10 µs with
-- lz4 for the same size on disk (docs/events.md, "Cost"). lz4 needs a
-- server built with it (Debian's and the official images are); without
-- it the objects stay pglz. Rows written before keep their compression.
-- SQLite does not compress.
-- +engine postgres
-- +goose StatementBegin
DO $$
BEGIN
    ALTER TABLE events ALTER COLUMN object SET COMPRESSION lz4;
EXCEPTION WHEN feature_not_supported OR invalid_parameter_value THEN
    RAISE NOTICE 'lz4 is not available: events keep pglz compression';
END $$;
-- +goose StatementEnd
-- +engine sqlite
SELECT 1;
-- +engine end

-- +goose Down
-- +engine postgres
ALTER TABLE events ALTER COLUMN object SET COMPRESSION default;
-- +engine sqlite
SELECT 1;
-- +engine end
