/**
 * Stored reference-currency rates, one row per (currency, reference_currency, day): the rate
 * text exactly as the source gave it (a positive plain decimal) and the day the source
 * published it (on or before `day`).
 *
 * Promise: the first rate stored for a key stays; a later store of the same key changes
 * nothing and returns the rate already stored, so every answer for a key is the same.
 */
import type { Queryable } from "./pool.js";

/** One stored rate. */
export interface StoredRate {
  currency: string;
  reference: string;
  /** `YYYY-MM-DD`. */
  day: string;
  /** Units of `reference` per one `currency`, a plain decimal string. */
  rate: string;
  /** The source's publication day (`YYYY-MM-DD`), on or before `day`. */
  sourceDay: string;
}

/** The stored rate text for the key, or undefined. */
export async function readStoredRate(db: Queryable, currency: string, reference: string, day: string): Promise<string | undefined> {
  const { rows } = await db.query<{ rate: string }>("SELECT rate FROM fx_rates WHERE currency = $1 AND reference_currency = $2 AND day = $3::date", [
    currency,
    reference,
    day,
  ]);
  return rows[0]?.rate;
}

/** Stores a rate unless the key is stored already; returns the rate now stored for the key. */
export async function storeRate(db: Queryable, r: StoredRate): Promise<string> {
  const { rows } = await db.query<{ rate: string }>(
    `INSERT INTO fx_rates (currency, reference_currency, day, rate, source_day)
     VALUES ($1, $2, $3::date, $4, $5::date)
     ON CONFLICT (currency, reference_currency, day) DO NOTHING
     RETURNING rate`,
    [r.currency, r.reference, r.day, r.rate, r.sourceDay],
  );
  const inserted = rows[0]?.rate;
  if (inserted !== undefined) return inserted;
  return (await readStoredRate(db, r.currency, r.reference, r.day)) ?? r.rate;
}
