-- +goose Up
-- VDV-KA ticket numbers (Berechtigungsnummer, 4 bytes; docs/barcodes.md):
-- until now the first 32 bits of SHA-256 of the ticket id, which collide
-- (about 170 pairs per 1.2 million tickets) while inspection blocklists
-- key on the number. A ticket of a vdv-ka-static product now gets the next
-- number of the issuer's counter when it is issued; a ticket without one
-- (issued before, or while its product had another profile) keeps its
-- hash-derived number, stored here by app.BackfillVDVNumbers so that the
-- counter skips it while the ticket is valid.
ALTER TABLE tickets ADD COLUMN vdv_number BIGINT;
CREATE INDEX tickets_vdv_number ON tickets (vdv_number) WHERE vdv_number IS NOT NULL;
CREATE TABLE vdv_ticket_numbers (
    id          INTEGER PRIMARY KEY,
    last_number BIGINT NOT NULL
);

-- +goose Down
DROP TABLE vdv_ticket_numbers;
DROP INDEX tickets_vdv_number;
ALTER TABLE tickets DROP COLUMN vdv_number;
