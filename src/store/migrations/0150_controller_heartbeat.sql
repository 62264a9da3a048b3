-- Up Migration
-- How far the controller has observed the cluster (src/store/controller-heartbeat.ts,
-- docs/operator.md "Payments through an API server outage"): one row per leader-election Lease,
-- written every second by the replica that leads (or led last). The data plane trusts it for
-- revocation state while its own Kubernetes watch is down.
CREATE TABLE controller_heartbeats (
  lease         text PRIMARY KEY,
  identity      text NOT NULL,
  -- Every change the API server announced before this instant has been processed into Postgres.
  observed_at   timestamptz NOT NULL,
  -- The controller's own probe of the API server answered at its last heartbeat.
  api_reachable boolean NOT NULL,
  written_at    timestamptz NOT NULL DEFAULT now()
);

-- Down Migration
DROP TABLE controller_heartbeats;
