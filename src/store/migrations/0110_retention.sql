-- Up Migration
-- Retention (src/store/retention.ts, docs/retention.md): what the pruning finds by age.
-- BRIN indexes on insert times: rows arrive in time order, so a block range summary is enough
-- to find the old ones, and keeping it costs the insert path (every verify) next to nothing.
CREATE INDEX verify_decisions_created_brin ON verify_decisions USING brin (created_at);
CREATE INDEX webhook_outbox_created_brin ON webhook_outbox USING brin (created_at);
CREATE INDEX portal_sessions_expires_idx ON portal_sessions (expires_at);

-- Down Migration
DROP INDEX portal_sessions_expires_idx;
DROP INDEX webhook_outbox_created_brin;
DROP INDEX verify_decisions_created_brin;
