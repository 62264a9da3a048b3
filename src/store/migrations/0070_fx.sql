-- Up Migration
-- Reference-currency rates (GET /v1/fx, src/fx/rates.ts, docs/fx.md): units of
-- reference_currency per one currency on a UTC day, as the source's exact decimal text.
-- source_day is the day the source published the rate (a weekend or holiday carries the
-- previous business day's rate). The first row stored for a key is kept.
CREATE TABLE fx_rates (
  currency           text        NOT NULL CHECK (currency ~ '^[A-Z]{3}$'),
  reference_currency text        NOT NULL CHECK (reference_currency ~ '^[A-Z]{3}$'),
  day                date        NOT NULL,
  rate               text        NOT NULL CHECK (rate ~ '^[0-9]+(\.[0-9]+)?$' AND rate ~ '[1-9]' AND length(rate) <= 64),
  source_day         date        NOT NULL,
  fetched_at         timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (currency, reference_currency, day),
  CHECK (currency <> reference_currency),
  CHECK (source_day <= day)
);

-- Down Migration
DROP TABLE fx_rates;
