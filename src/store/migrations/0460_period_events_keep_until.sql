-- Up Migration
-- Retention of period_events (src/store/retention.ts): a row is needed while a rolling window
-- can still hold it (its instant plus its owner's longest rolling duration) and while a
-- calendar window it was counted in is open (a release then takes it out of that window).
-- keep_until is the latest of those instants, set by writ_period_write; NULL: kept for good
-- (counted in a `total` window, which never closes). The retention sweep deletes the rows past
-- it. Rows written before this column: their instant plus 367 days (longer than the longest
-- rolling window, 366 days, and than any calendar window but `total`), NULL with a `total` window.
ALTER TABLE period_events ADD COLUMN keep_until timestamptz;
UPDATE period_events SET keep_until = at + interval '367 days' WHERE NOT windows @> '[["total"]]'::jsonb;
-- Found by the sweep as the other retained tables' rows are (0110_retention.sql): a BRIN index,
-- cheap to keep up on every ALLOW (keep_until grows with the insert order).
CREATE INDEX period_events_keep_until ON period_events USING brin (keep_until);

-- Down Migration
DROP INDEX period_events_keep_until;
ALTER TABLE period_events DROP COLUMN keep_until;
