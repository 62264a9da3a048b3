-- Up Migration
-- Rolling windows read in bounded time (src/store/ledger/periods.ts; the functions
-- writ_period_read and writ_period_write). A rolling window was the sum of its owner's events
-- in (t - D, t]: one index entry and one heap row per payment in the window, under the owner's
-- lock, so a busy agent's spends slowed as its window filled. Now, once a rolling window of an
-- owner holds WRIT_PERIOD_HOUR_COUNTERS_FROM payments (64; the new one included), each new event
-- of that owner is also counted in an hour counter (period_spend, window kind 'bucket@PT1H',
-- window start the UTC hour of its instant; listed in the event's windows, so a release takes it
-- out as it takes it out of its calendar windows), and the event is `bucketed`. A rolling window
-- (t - D, t] is then:
-- - the hour counters after the hour holding t - D (at most 24 per day of D: a range of
--   period_spend's key);
-- - the bucketed events of the hour holding t - D that are after t - D (at most one hour's
--   events: a range of period_events_window);
-- - the events not bucketed after t - D (written while the owner's windows held fewer, or
--   before this migration, or while it had no rolling limit: a range of
--   period_events_unbucketed, which holds no other).
-- Exact, as before: each event in the window is counted once, in its hour or by itself. The read
-- finds the hour from the window's bound itself, so a process of an earlier version, which
-- writes events without hour counters (not bucketed) and calls the read as before, counts right
-- beside the new ones while a deployment rolls over.
-- Each part in a DO block, one command per query string: a Citus coordinator refuses DDL on a
-- distributed table among several commands of one query string (the migration's), with
-- "cannot insert multiple commands into a prepared statement"; in PL/pgSQL it propagates it.
DO $$ BEGIN
  ALTER TABLE period_events ADD COLUMN bucketed boolean NOT NULL DEFAULT false;
  DROP INDEX period_events_window;
  CREATE INDEX period_events_window ON period_events (agent_id, owner, currency, at) WHERE NOT released AND bucketed;
  CREATE INDEX period_events_unbucketed ON period_events (agent_id, owner, currency, at) WHERE NOT released AND NOT bucketed;
END $$;
-- Retention of the hour counters (src/store/retention.ts): an hour is needed while the longest
-- rolling window (366 days) can hold it, and goes 367 days after it started. Found by this
-- index (an hour's counter is inserted once, then raised in place: no index entry per payment).
-- Its predicate is a LIKE, which the reads' `window_kind = 'bucket@PT1H'` does not imply: the
-- planner never takes it for a read (it would scan every agent's hours), only the key.
DO $$ BEGIN
  CREATE INDEX period_spend_buckets ON period_spend (window_start) WHERE window_kind LIKE 'bucket@%';
END $$;

-- Down Migration
DO $$ BEGIN
  DROP INDEX period_spend_buckets;
  DELETE FROM period_spend WHERE window_kind = 'bucket@PT1H';
  DROP INDEX period_events_unbucketed;
  DROP INDEX period_events_window;
  CREATE INDEX period_events_window ON period_events (agent_id, owner, currency, at) WHERE NOT released;
  ALTER TABLE period_events DROP COLUMN bucketed;
END $$;
