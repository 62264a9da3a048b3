-- The `sha256:<64 hex>` check of every hash column: a length and a one-state loop. The regex
-- `^sha256:[0-9a-f]{64}$` costs about 11 us of CPU per value (Postgres builds its DFA state by
-- state), this under 1 us. A plain SQL expression, inlined where it is used. The CHECK
-- constraints write the same test out (migration 0601): a constraint calling it had every
-- statement writing its table inline it again.
CREATE OR REPLACE FUNCTION writ_is_sha256(v text) RETURNS boolean LANGUAGE sql IMMUTABLE PARALLEL SAFE
  AS $$ SELECT length(v) = 71 AND v ~ '^sha256:[0-9a-f]+$' $$;
