-- +goose Up
-- The clearing reads each ticket month's newest coupon (store
-- ClearingSources): per cycle of its billable item, the newest coupon of
-- the cycle's subscription. With the coupons of a subscription in order of
-- creation in one index, that lookup is the first entry of a backward
-- index scan whatever the planner's statistics say (docs/clearing.md
-- "Measured"); the index on subscription_id alone is its prefix. Partial:
-- the coupons of single tickets (no subscription) are never looked up this
-- way, and ordering one does not maintain it.
CREATE INDEX coupons_subscription_newest ON coupons (subscription_id, created_at, id) WHERE subscription_id IS NOT NULL;
DROP INDEX coupons_subscription;

-- +goose Down
CREATE INDEX coupons_subscription ON coupons (subscription_id);
DROP INDEX coupons_subscription_newest;
