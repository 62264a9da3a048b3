-- One answer per (agent, action) in verify_decisions where the table is partitioned by week
-- (the Citus layout, src/store/citus-partitions.ts; docs/scale.md, "Retention by time
-- partitions"): a partitioned table's unique keys hold its partition column, so its key is
-- (agent_id, action_id, created_at) and an ON CONFLICT of an answer on it never fires. This
-- BEFORE INSERT row trigger of the partitioned table does what the key (agent_id, action_id)
-- does on plain Postgres: it takes the transaction-level advisory lock of the answer's (agent,
-- action) (the one-bigint key space, apart from Writ's two-int locks: src/store/locks.ts), then,
-- in a statement of its own (a new snapshot: it sees every answer committed by an earlier
-- holder of the lock), looks the action up in every partition of the table it fires on (on a
-- Citus worker: the agent's shard of the partitioned table), and skips the row (RETURN NULL:
-- nothing inserted, nothing returned, as ON CONFLICT DO NOTHING) when an answer is stored. The
-- lock is held to the commit, so a second writer of the action waits for the first's commit and
-- then finds its row. On plain Postgres no table has this trigger.
CREATE OR REPLACE FUNCTION writ_decision_once()
RETURNS trigger
LANGUAGE plpgsql VOLATILE AS $$
DECLARE v_found boolean;
BEGIN
  PERFORM pg_advisory_xact_lock(hashtextextended(NEW.agent_id || '/' || NEW.action_id, 0));
  EXECUTE format('SELECT EXISTS (SELECT 1 FROM %s v WHERE v.agent_id = $1 AND v.action_id = $2)', pg_partition_root(TG_RELID)::regclass)
    INTO v_found USING NEW.agent_id, NEW.action_id;
  IF v_found THEN RETURN NULL; END IF;
  RETURN NEW;
END $$;
