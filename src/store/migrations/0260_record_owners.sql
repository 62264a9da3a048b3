-- Up Migration
-- record_owners: which declared resource acts on a record (src/store/record-owners.ts). A
-- delegation or agreement is acted on (stored, changed, revoked) only through the resource that
-- created it: one owner per record, fixed when the record is first stored through a resource.
-- A subscription may be declared by several resources of its organization (same agent and URL):
-- each holds a claim, and it is deactivated when the last claim is released. An owner is a
-- resource's namespace and name, and in `uid` its owner identity `<Kind>/<namespace>/<name>`
-- (src/core/crd/owner.ts): the same declaration deleted and applied again is the same owner,
-- another kind, namespace or name never is. Never updated; released subscription claims are deleted.
CREATE TABLE record_owners (
  kind       text        NOT NULL CHECK (kind IN ('delegation', 'agreement', 'subscription')),
  record_id  text        NOT NULL CHECK (length(record_id) BETWEEN 1 AND 256),
  namespace  text        NOT NULL,
  name       text        NOT NULL,
  uid        text        NOT NULL CHECK (length(uid) BETWEEN 1 AND 256),
  claimed_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (kind, record_id, uid)
);
-- One owner per delegation and per agreement.
CREATE UNIQUE INDEX record_owners_one_owner_idx ON record_owners (kind, record_id) WHERE kind <> 'subscription';
-- A resource's claims (a subscription resource whose spec changed releases its old ones).
CREATE INDEX record_owners_uid_idx ON record_owners (uid, kind);

-- Down Migration
DROP TABLE record_owners;
