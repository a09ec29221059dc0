-- +goose Up
-- Apple Wallet updates (docs/wallet.md, "Apple Wallet updates"). A pass is
-- recorded the first time it is built: its serialNumber (the ticket id it
-- was issued for), the coupon whose tickets it follows, its
-- authenticationToken (a random per-pass secret, compared in constant
-- time) and its update tag. Tags are numbered from apple_pass_seq.last_seq
-- inside the updating transaction, so tags follow commit order and a
-- device asking for passesUpdatedSince=N never misses a later commit with
-- a smaller tag. Registrations tie a device (deviceLibraryIdentifier) and
-- its APNs push token to a pass.
CREATE TABLE apple_passes (
    serial_number TEXT PRIMARY KEY,
    coupon_id     TEXT NOT NULL,
    auth_token    TEXT NOT NULL,
    update_seq    BIGINT NOT NULL,
    updated_at    TIMESTAMPTZ NOT NULL,
    created_at    TIMESTAMPTZ NOT NULL
);
CREATE INDEX apple_passes_coupon ON apple_passes (coupon_id);
CREATE TABLE apple_pass_seq (
    id       INTEGER PRIMARY KEY,
    last_seq BIGINT NOT NULL
);
CREATE TABLE apple_registrations (
    device_id     TEXT NOT NULL,
    serial_number TEXT NOT NULL,
    push_token    TEXT NOT NULL,
    created_at    TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (device_id, serial_number)
);
CREATE INDEX apple_registrations_serial ON apple_registrations (serial_number);
CREATE INDEX apple_registrations_push_token ON apple_registrations (push_token);

-- +goose Down
DROP TABLE apple_registrations;
DROP TABLE apple_pass_seq;
DROP TABLE apple_passes;
