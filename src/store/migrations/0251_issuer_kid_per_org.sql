-- Up Migration
-- An issuer key's kid is unique within its organization, not across tenants: another wallet
-- registering a kid first no longer blocks this one (docs/mandates.md, "Trusted issuers"). A
-- mandate's issuer JWT names a kid; every live key of that kid is tried and the one whose
-- signature verifies is the issuer. A public key (thumbprint) still belongs to one
-- organization, so a verified mandate has exactly one issuer organization.
ALTER TABLE mandates DROP CONSTRAINT mandates_issuer_kid_fkey;
ALTER TABLE issuer_keys DROP CONSTRAINT issuer_keys_pkey;
ALTER TABLE issuer_keys ADD CONSTRAINT issuer_keys_pkey PRIMARY KEY (org_id, kid);
CREATE INDEX issuer_keys_kid_idx ON issuer_keys (kid);
ALTER TABLE mandates ADD CONSTRAINT mandates_issuer_key_fkey FOREIGN KEY (issuer_org_id, issuer_kid) REFERENCES issuer_keys (org_id, kid);

-- Down Migration
ALTER TABLE mandates DROP CONSTRAINT mandates_issuer_key_fkey;
DROP INDEX issuer_keys_kid_idx;
ALTER TABLE issuer_keys DROP CONSTRAINT issuer_keys_pkey;
ALTER TABLE issuer_keys ADD CONSTRAINT issuer_keys_pkey PRIMARY KEY (kid);
ALTER TABLE mandates ADD CONSTRAINT mandates_issuer_kid_fkey FOREIGN KEY (issuer_kid) REFERENCES issuer_keys (kid);
