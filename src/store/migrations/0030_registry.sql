-- Up Migration
-- The registry (bureau): participant organizations, their API keys, registered agents, and
-- the inquiries, reports and subscriptions about agents. See docs/registry.md and the store
-- modules src/store/{orgs,keys,agents,inquiries,reports,subscriptions}.ts.

CREATE TABLE orgs (
  org_id     text        PRIMARY KEY CHECK (org_id ~ '^org_[0-9a-f]{24}$'),
  name       text        NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
  org_type   text        NOT NULL CHECK (org_type IN ('agent_operator', 'wallet', 'bank_issuer', 'processor_psp', 'merchant')),
  status     text        NOT NULL DEFAULT 'active' CHECK (status IN ('active')),
  created_at timestamptz NOT NULL
);

-- API keys: only SHA-256(token) is stored (hex), and keys are found by it. prefix is the first
-- 12 characters of the token, shown in lists. A revoked key keeps its row (revoked_at set).
CREATE TABLE api_keys (
  key_id     text        PRIMARY KEY CHECK (key_id ~ '^key_[0-9a-f]{24}$'),
  org_id     text        NOT NULL REFERENCES orgs (org_id),
  name       text        NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
  prefix     text        NOT NULL CHECK (prefix ~ '^bur_[A-Za-z0-9_-]{8}$'),
  token_hash text        NOT NULL CONSTRAINT api_keys_token_hash_key UNIQUE CHECK (token_hash ~ '^[0-9a-f]{64}$'),
  scopes     text[]      NOT NULL CHECK (cardinality(scopes) >= 1),
  created_at timestamptz NOT NULL,
  revoked_at timestamptz
);
CREATE INDEX api_keys_org_id_idx ON api_keys (org_id, created_at);

-- Agents: principal_id is pseudonymous (prn_...) and shown only to the owning organization.
CREATE TABLE agents (
  agent_id           text        CONSTRAINT agents_pkey PRIMARY KEY CHECK (agent_id ~ '^[A-Za-z0-9][A-Za-z0-9._:@-]{0,127}$'),
  org_id             text        NOT NULL REFERENCES orgs (org_id),
  principal_id       text        NOT NULL CHECK (principal_id ~ '^prn_[A-Za-z0-9_-]{1,64}$'),
  verification_level text        NOT NULL CHECK (verification_level IN ('institution_attested', 'operator_verified', 'self_declared')),
  status             text        NOT NULL CHECK (status IN ('active', 'suspended', 'retired')),
  public_key         jsonb       NOT NULL,
  fingerprint        text        NOT NULL CONSTRAINT agents_fingerprint_key UNIQUE CHECK (fingerprint ~ '^sha256:[0-9a-f]{64}$'),
  registered_at      timestamptz NOT NULL,
  updated_at         timestamptz NOT NULL
);
CREATE INDEX agents_org_id_idx ON agents (org_id);

-- Every inquiry is recorded: who asked (organization and key), about which agent, why, when.
CREATE TABLE inquiries (
  inquiry_id   text        PRIMARY KEY CHECK (inquiry_id ~ '^inq_[0-9a-f]{24}$'),
  org_id       text        NOT NULL REFERENCES orgs (org_id),
  key_id       text        NOT NULL REFERENCES api_keys (key_id),
  agent_id     text        NOT NULL REFERENCES agents (agent_id),
  purpose_code text        NOT NULL CHECK (purpose_code IN ('payment_authorization', 'account_opening', 'dispute_review', 'fraud_investigation', 'compliance_check')),
  created_at   timestamptz NOT NULL
);
CREATE INDEX inquiries_agent_id_idx ON inquiries (agent_id, created_at);
CREATE INDEX inquiries_org_id_idx ON inquiries (org_id, created_at);

-- Reports: one per (reporter organization, agent, kind, evidence hash). seq orders reports by
-- filing (recency), also within one millisecond.
CREATE TABLE reports (
  report_id     text        PRIMARY KEY CHECK (report_id ~ '^rpt_[0-9a-f]{24}$'),
  seq           bigint      GENERATED ALWAYS AS IDENTITY UNIQUE,
  org_id        text        NOT NULL REFERENCES orgs (org_id),
  key_id        text        NOT NULL REFERENCES api_keys (key_id),
  agent_id      text        NOT NULL REFERENCES agents (agent_id),
  kind          text        NOT NULL CHECK (kind IN ('transaction_outcome', 'fraud_incident', 'chargeback', 'policy_violation')),
  evidence_hash text        NOT NULL CHECK (evidence_hash ~ '^sha256:[0-9a-f]{64}$'),
  summary       text        NOT NULL CHECK (length(summary) <= 2000),
  created_at    timestamptz NOT NULL,
  CONSTRAINT reports_duplicate_key UNIQUE (org_id, agent_id, kind, evidence_hash)
);
CREATE INDEX reports_agent_id_idx ON reports (agent_id, seq DESC);

-- The daily report cap: one counter row per organization and UTC day, incremented in the
-- report's own transaction (the row lock serialises concurrent reports of one organization).
CREATE TABLE report_daily_counts (
  org_id text    NOT NULL REFERENCES orgs (org_id),
  day    date    NOT NULL,
  count  integer NOT NULL CHECK (count >= 0),
  PRIMARY KEY (org_id, day)
);

-- Subscriptions to an agent's alerts (revocation, incident, score drop).
CREATE TABLE subscriptions (
  subscription_id text        PRIMARY KEY CHECK (subscription_id ~ '^sub_[0-9a-f]{24}$'),
  org_id          text        NOT NULL REFERENCES orgs (org_id),
  agent_id        text        NOT NULL REFERENCES agents (agent_id),
  webhook_url     text        NOT NULL CHECK (length(webhook_url) <= 2048),
  created_at      timestamptz NOT NULL,
  active          boolean     NOT NULL DEFAULT true
);
CREATE INDEX subscriptions_agent_id_idx ON subscriptions (agent_id) WHERE active;
CREATE UNIQUE INDEX subscriptions_active_key ON subscriptions (org_id, agent_id, webhook_url) WHERE active;

-- Seams for the agreement/verify area, which owns agreements and agent revocations: until its
-- migration replaces them (CREATE OR REPLACE FUNCTION, same signature), an agent has no
-- active authorizations and no revocations.
CREATE FUNCTION registry_active_authorizations(p_agent_id text) RETURNS bigint
  LANGUAGE sql STABLE AS $$ SELECT 0::bigint $$;
CREATE FUNCTION registry_revocation_count(p_agent_id text) RETURNS bigint
  LANGUAGE sql STABLE AS $$ SELECT 0::bigint $$;

-- Down Migration
DROP FUNCTION registry_revocation_count(text);
DROP FUNCTION registry_active_authorizations(text);
DROP TABLE subscriptions;
DROP TABLE report_daily_counts;
DROP TABLE reports;
DROP TABLE inquiries;
DROP TABLE agents;
DROP TABLE api_keys;
DROP TABLE orgs;
