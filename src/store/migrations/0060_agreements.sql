-- Up Migration
-- Delegations, intent agreements and their spend ledgers: the records the verify path reads and
-- the controller, seed data and tests write (src/store/{delegations,agreements,ledger}.ts,
-- src/verify/{spend,outcome}.ts). Postgres is the system of record of every ledger.
--
-- org_id is the tenant as text, nullable and without a foreign key: records declared as
-- Kubernetes resources may name a tenant the registry does not know. agent_id has no foreign
-- key either: an agreement may be declared before its agent registers.

-- delegations: one row per stored grant. record is the full Delegation (chain included)
-- WITHOUT intent_agreement (that lives in agreements). parent_delegation_id is the
-- delegation_id of the last link of the chain (the link directly above), chain_ids every
-- link's id from the root down; revoking an id revokes every row whose chain names it and,
-- recursively, every row whose parent is revoked. generation increases on every change of the
-- stored row (the record cache key).
CREATE TABLE delegations (
  delegation_id        text        PRIMARY KEY CHECK (length(delegation_id) BETWEEN 1 AND 256),
  org_id               text,
  agent_id             text        NOT NULL,
  principal            jsonb       NOT NULL,
  status               text        NOT NULL CHECK (status IN ('active', 'suspended', 'revoked', 'expired')),
  revoked_at           timestamptz,
  revoked_reason       text,
  revoked_by           text,
  record               jsonb       NOT NULL,
  parent_delegation_id text,
  chain_ids            text[]      NOT NULL DEFAULT '{}',
  generation           bigint      NOT NULL DEFAULT 1 CHECK (generation >= 1),
  updated_at           timestamptz NOT NULL DEFAULT now(),
  CHECK ((status = 'revoked') = (revoked_at IS NOT NULL))
);
CREATE INDEX delegations_agent_id_idx ON delegations (agent_id);
CREATE INDEX delegations_parent_idx ON delegations (parent_delegation_id) WHERE parent_delegation_id IS NOT NULL;
CREATE INDEX delegations_chain_ids_idx ON delegations USING gin (chain_ids);

-- delegation_revocations: every revoked delegation id, stored as a row or named only as a link
-- of a stored chain. Durable (NOTIFY is not): the revocation index loads it, and a delegation
-- stored later under a revoked link is stored revoked. Revocation is final: rows are never
-- deleted.
CREATE TABLE delegation_revocations (
  delegation_id text        PRIMARY KEY,
  revoked_at    timestamptz NOT NULL,
  reason        text        NOT NULL,
  revoked_by    text        NOT NULL,
  -- The id whose revocation caused this one (itself for the id that was revoked).
  root_id       text        NOT NULL
);

-- agreements: record is the IntentAgreement WITHOUT ledger, ledger_sequence, ledger_head and
-- ledger_as_of (the ledger lives in ledger_entries; ledger_sequence/ledger_head here are its
-- state). revision increases on every change of the record or its columns, NOT on a ledger
-- append (the ledger is versioned by ledger_sequence), so a prepared record stays cached
-- across spends.
CREATE TABLE agreements (
  agreement_id    text        PRIMARY KEY CHECK (length(agreement_id) BETWEEN 1 AND 256),
  delegation_id   text        REFERENCES delegations (delegation_id),
  agent_id        text        NOT NULL,
  org_id          text,
  status          text        NOT NULL CHECK (status IN ('proposed', 'clarifying', 'accepted', 'active', 'revoked', 'expired')),
  revoked_at      timestamptz,
  revoked_reason  text,
  revoked_by      text,
  record          jsonb       NOT NULL,
  revision        bigint      NOT NULL DEFAULT 1 CHECK (revision >= 1),
  ledger_sequence integer     NOT NULL DEFAULT 0 CHECK (ledger_sequence >= 0),
  ledger_head     text        CHECK (ledger_head ~ '^sha256:[0-9a-f]{64}$'),
  updated_at      timestamptz NOT NULL DEFAULT now(),
  CHECK ((ledger_sequence = 0) = (ledger_head IS NULL)),
  CHECK ((status = 'revoked') = (revoked_at IS NOT NULL))
);
CREATE INDEX agreements_agent_live_idx ON agreements (agent_id) WHERE revoked_at IS NULL AND status IN ('active', 'accepted');
CREATE INDEX agreements_agent_id_idx ON agreements (agent_id);
CREATE INDEX agreements_delegation_id_idx ON agreements (delegation_id) WHERE delegation_id IS NOT NULL;

-- ledger_entries: the hash-chained spend ledger. entry is the ledger entry exactly as hashed
-- (entry_hash = SHA-256 of JCS(entry without entry_hash)); the other columns are copies for
-- queries. intent_id is the entry's intent as resolved against the mandates (its own
-- intent_id, or the only mandate's). An (action, outcome) pair occurs at most once per
-- agreement: that is the idempotency of spends (outcome 'allowed', key = action_id) and of
-- later outcomes.
CREATE TABLE ledger_entries (
  agreement_id    text    NOT NULL REFERENCES agreements (agreement_id),
  sequence        integer NOT NULL CHECK (sequence >= 1),
  entry           jsonb   NOT NULL,
  action_id       text    NOT NULL,
  outcome         text    NOT NULL CHECK (outcome IN ('allowed', 'authorized', 'settled', 'failed')),
  intent_id       text    NOT NULL,
  currency        text    NOT NULL CHECK (currency ~ '^[A-Z]{3}$'),
  amount_minor    bigint  CHECK (amount_minor >= 0),
  entry_hash      text    NOT NULL CHECK (entry_hash ~ '^sha256:[0-9a-f]{64}$'),
  prev_entry_hash text    CHECK (prev_entry_hash ~ '^sha256:[0-9a-f]{64}$'),
  created_at      timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (agreement_id, sequence),
  CONSTRAINT ledger_entries_action_outcome_key UNIQUE (agreement_id, action_id, outcome),
  CHECK ((sequence = 1) = (prev_entry_hash IS NULL))
);

-- agreement_spend: spent per intent in minor units of the intent's currency, maintained in the
-- same transaction as every ledger insert (a budget check never sums the ledger). For each
-- action only its latest entry counts: allowed/authorized/settled count, failed releases.
CREATE TABLE agreement_spend (
  agreement_id text   NOT NULL REFERENCES agreements (agreement_id),
  intent_id    text   NOT NULL,
  currency     text   NOT NULL CHECK (currency ~ '^[A-Z]{3}$'),
  spent_minor  bigint NOT NULL DEFAULT 0 CHECK (spent_minor >= 0),
  PRIMARY KEY (agreement_id, intent_id)
);

-- verify_decisions: the answer given to (agent, action), so a retried verify returns the same
-- decision. request_hash is the hash of the canonical request; decision the response body.
CREATE TABLE verify_decisions (
  agent_id     text        NOT NULL,
  action_id    text        NOT NULL,
  agreement_id text,
  request_hash text        NOT NULL,
  decision     jsonb       NOT NULL,
  created_at   timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (agent_id, action_id)
);

-- The registry's seams (0030_registry.sql), now answered from these tables.
-- Active authorizations: live (active or accepted, not revoked) agreements of the agent whose
-- delegation, when it has one, is not revoked.
CREATE OR REPLACE FUNCTION registry_active_authorizations(p_agent_id text) RETURNS bigint
  LANGUAGE sql STABLE AS $$
    SELECT count(*)::bigint FROM agreements a LEFT JOIN delegations d ON d.delegation_id = a.delegation_id
    WHERE a.agent_id = p_agent_id AND a.revoked_at IS NULL AND a.status IN ('active', 'accepted')
      AND (d.delegation_id IS NULL OR d.revoked_at IS NULL)
  $$;
-- Revocations: revoked delegations of the agent plus its agreements that are revoked here or
-- named by a pushed principal revocation (each record counted once).
CREATE OR REPLACE FUNCTION registry_revocation_count(p_agent_id text) RETURNS bigint
  LANGUAGE sql STABLE AS $$
    SELECT (SELECT count(*) FROM delegations WHERE agent_id = p_agent_id AND revoked_at IS NOT NULL)
         + (SELECT count(*) FROM agreements a WHERE a.agent_id = p_agent_id
              AND (a.revoked_at IS NOT NULL OR EXISTS (SELECT 1 FROM revocations r WHERE r.agreement_id = a.agreement_id)))
  $$;

-- Down Migration
CREATE OR REPLACE FUNCTION registry_revocation_count(p_agent_id text) RETURNS bigint
  LANGUAGE sql STABLE AS $$ SELECT 0::bigint $$;
CREATE OR REPLACE FUNCTION registry_active_authorizations(p_agent_id text) RETURNS bigint
  LANGUAGE sql STABLE AS $$ SELECT 0::bigint $$;
DROP TABLE verify_decisions;
DROP TABLE agreement_spend;
DROP TABLE ledger_entries;
DROP TABLE agreements;
DROP TABLE delegation_revocations;
DROP TABLE delegations;
