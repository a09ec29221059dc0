-- +goose Up
-- Key rotation (docs/wallet.md, "Key rotation and compromise"): the
-- inspection key that signs a ticket's barcode. NULL means the key active
-- when the ticket is read; `farebox keys rotate` stamps those tickets with
-- the outgoing key before the new one signs, so a barcode already on a
-- phone keeps verifying, and `farebox keys revoke` moves the tickets of a
-- revoked key to its successor. The index finds a key's still-valid tickets.
ALTER TABLE tickets ADD COLUMN inspection_kid INTEGER;
CREATE INDEX tickets_inspection_kid ON tickets (inspection_kid, valid_until);

-- +goose Down
DROP INDEX tickets_inspection_kid;
ALTER TABLE tickets DROP COLUMN inspection_kid;
