-- Up Migration
-- The controller appends one `agreement` log entry per distinct body and checks the log for that
-- exact body before appending (src/controller/store-reads.ts): a hash index keeps the check O(1).
CREATE INDEX log_entries_agreement_body ON log_entries USING hash (body) WHERE kind = 'agreement';

-- Down Migration
DROP INDEX log_entries_agreement_body;
