-- +goose Up
-- Device binding (issue 32, docs/barcodes.md "Dynamic barcodes"): a ticket
-- of a product with inspection_profile dynamic is bound to the public key
-- (ECDSA P-256, uncompressed point, base64url) the rendering engine made in
-- the device the first time it showed the ticket. One device at a time:
-- binding another key needs the partner's permission (move_allowed_at,
-- cleared by the move); move_last_allowed_at rate-limits the permissions,
-- moves counts the moves. A restored ticket is a new ticket: it binds afresh.
ALTER TABLE tickets ADD COLUMN device_key TEXT;
ALTER TABLE tickets ADD COLUMN device_bound_at TIMESTAMPTZ;
ALTER TABLE tickets ADD COLUMN device_moves INTEGER NOT NULL DEFAULT 0;
ALTER TABLE tickets ADD COLUMN device_move_allowed_at TIMESTAMPTZ;
ALTER TABLE tickets ADD COLUMN device_move_last_allowed_at TIMESTAMPTZ;

-- +goose Down
ALTER TABLE tickets DROP COLUMN device_move_last_allowed_at;
ALTER TABLE tickets DROP COLUMN device_move_allowed_at;
ALTER TABLE tickets DROP COLUMN device_moves;
ALTER TABLE tickets DROP COLUMN device_bound_at;
ALTER TABLE tickets DROP COLUMN device_key;
