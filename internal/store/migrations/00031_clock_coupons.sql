-- +goose Up
-- Advancing a test clock moves the wallet passes of its subscriptions'
-- cycles that started on the way (docs/test-clocks.md): the advance reads
-- the tickets of the clock's coupons by this index. Partial: coupons
-- without a clock (all live ones) pay nothing.
CREATE INDEX coupons_test_clock ON coupons (test_clock_id) WHERE test_clock_id IS NOT NULL;

-- +goose Down
DROP INDEX coupons_test_clock;
