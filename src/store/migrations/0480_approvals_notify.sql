-- Up Migration
-- A new approval binds its (agent, action_id) to its request (src/store/approvals.ts): each
-- data-plane process keeps the agent's open approvals in memory (src/verify/approvals.ts) and
-- drops them on the agent's change notice (src/store/changes.ts), sent here when one is opened.
CREATE TRIGGER approvals_opened AFTER INSERT ON approvals
  FOR EACH ROW EXECUTE FUNCTION writ_agents_changed();

-- Down Migration
DROP TRIGGER approvals_opened ON approvals;
