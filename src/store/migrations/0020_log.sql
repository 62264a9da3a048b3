-- Up Migration
-- The transparency log (see src/store/log.ts). Appends run one at a time under the advisory
-- lock LOCK_IDS.transparencyLog and write, in ONE statement, the new entries, every full
-- subtree node they complete and the signed head of the new size, so a head exists exactly
-- for each committed append and every entry sits under one.
--
-- log_entries: the entries. body is the RFC 8785 canonical JSON text of the entry body (what
-- entry_hash and the Merkle leaf commit to; text, not jsonb, so it is stored and served
-- byte-exact and without a jsonb parse). Hashes are the 32 raw bytes. The leaf hash of entry
-- s is the node (0, s - 1) of log_nodes and is not stored twice.
CREATE TABLE log_entries (
  sequence        bigint      PRIMARY KEY CHECK (sequence >= 1),
  kind            text        NOT NULL CHECK (kind IN ('agreement', 'revocation', 'registration', 'incident')),
  body            text        NOT NULL,
  entry_hash      bytea       NOT NULL UNIQUE CHECK (length(entry_hash) = 32),
  prev_entry_hash bytea       CHECK (length(prev_entry_hash) = 32),
  created_at      timestamptz NOT NULL DEFAULT now(),
  CHECK ((sequence = 1) = (prev_entry_hash IS NULL))
);

-- log_nodes: the RFC 6962 hash of every FULL subtree: level 0 holds the leaves (idx = leaf
-- index), level l the root of leaves [idx * 2^l, (idx + 1) * 2^l). Written once, never
-- updated; proofs read the few they need in one query.
CREATE TABLE log_nodes (
  level smallint NOT NULL CHECK (level >= 0 AND level <= 63),
  idx   bigint   NOT NULL CHECK (idx >= 0),
  hash  bytea    NOT NULL CHECK (length(hash) = 32),
  PRIMARY KEY (level, idx)
);

-- log_heads: one signed tree head per append transaction. frontier holds the roots of the
-- full subtrees that make up the tree, largest first (what the next append continues from);
-- head is the signed head as JSON text, checkpoint the C2SP signed note of the same size and
-- root (NULL when the append had no origin to sign it under).
CREATE TABLE log_heads (
  tree_size  bigint      PRIMARY KEY CHECK (tree_size >= 1),
  root       bytea       NOT NULL CHECK (length(root) = 32),
  frontier   bytea[]     NOT NULL,
  head       text        NOT NULL,
  checkpoint text,
  created_at timestamptz NOT NULL DEFAULT now()
);

-- Down Migration
DROP TABLE log_heads;
DROP TABLE log_nodes;
DROP TABLE log_entries;
