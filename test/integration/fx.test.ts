import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { rateFor, fxSourceFor, lookupRate } from "../../src/fx/index.js";
import { startFrankfurter, type FrankfurterStandIn } from "../helpers/frankfurter.js";
import { createTestDatabase, type TestDatabase } from "../helpers/pg.js";
import { startTestServer, type TestServer } from "../helpers/server.js";

// "Today" for every server here: Wednesday 2025-01-08, 12:00 UTC.
const NOW = new Date("2025-01-08T12:00:00Z");
const clock = () => NOW;

let db: TestDatabase;
let fx: FrankfurterStandIn;
let server: TestServer;

async function get(query: string, url = server.url) {
  const r = await fetch(`${url}/v1/fx${query}`);
  return { status: r.status, body: (await r.json()) as Record<string, string> };
}

beforeAll(async () => {
  db = await createTestDatabase();
  fx = await startFrankfurter();
  server = await startTestServer({ DATABASE_URL: db.url, SVC_FX_SOURCE_URL: fx.url, SVC_FX_TIMEOUT_MS: "400" }, { pool: db.pool, clock });
  fx.setRate("2025-01-02", "EUR", "USD", "1.0321");
  fx.setRate("2025-01-03", "EUR", "USD", "1.0299");
  fx.setRate("2025-01-03", "GBP", "CHF", "1.1364");
  fx.setRate("2025-01-06", "JPY", "USD", "6.1e-05");
  fx.setRate("2025-01-06", "EUR", "GBP", "0.83130");
  fx.setRate("2025-01-07", "EUR", "USD", "1.0393");
});

afterAll(async () => {
  await server?.close();
  await fx?.close();
  await db?.drop();
});

beforeEach(() => {
  fx.setMode("normal");
  fx.resetCalls();
});

describe("GET /v1/fx: answers", () => {
  it("answers the source's rate as its exact decimal text, asking base=currency&symbols=reference", async () => {
    const r = await get("?currency=EUR&reference=USD&day=2025-01-02");
    expect(r).toEqual({ status: 200, body: { currency: "EUR", reference_currency: "USD", day: "2025-01-02", rate: "1.0321" } });
    expect(fx.requests).toEqual(["/2025-01-02?base=EUR&symbols=USD"]);
  });

  it("keeps trailing zeros of the source's text and expands an exponent without float arithmetic", async () => {
    expect((await get("?currency=EUR&reference=GBP&day=2025-01-06")).body.rate).toBe("0.83130");
    expect((await get("?currency=JPY&day=2025-01-06")).body.rate).toBe("0.000061");
  });

  it("answers rate 1 for the same currency without asking the source", async () => {
    const r = await get("?currency=CHF&reference=CHF&day=2024-12-31");
    expect(r).toEqual({ status: 200, body: { currency: "CHF", reference_currency: "CHF", day: "2024-12-31", rate: "1" } });
    expect(fx.calls).toBe(0);
  });

  it("defaults reference to USD and day to the current UTC day of the app clock", async () => {
    fx.setRate("2025-01-08", "EUR", "USD", "1.0350");
    const r = await get("?currency=EUR");
    expect(r).toEqual({ status: 200, body: { currency: "EUR", reference_currency: "USD", day: "2025-01-08", rate: "1.0350" } });
  });

  it("accepts reference_currency as the alias of reference, and both when they agree", async () => {
    const alias = await get("?currency=GBP&reference_currency=CHF&day=2025-01-03");
    expect(alias).toEqual({ status: 200, body: { currency: "GBP", reference_currency: "CHF", day: "2025-01-03", rate: "1.1364" } });
    const both = await get("?currency=GBP&reference=CHF&reference_currency=CHF&day=2025-01-03");
    expect(both.body.rate).toBe("1.1364");
  });

  it("serves a stored day without asking the source again", async () => {
    await get("?currency=EUR&reference=USD&day=2025-01-07");
    fx.resetCalls();
    fx.setMode("fail");
    const again = await get("?currency=EUR&reference=USD&day=2025-01-07");
    expect(again).toEqual({ status: 200, body: { currency: "EUR", reference_currency: "USD", day: "2025-01-07", rate: "1.0393" } });
    expect(fx.calls).toBe(0);
  });

  it("gives a weekend day the previous business day's rate and stores it under the day asked", async () => {
    const sat = await get("?currency=EUR&reference=USD&day=2025-01-04");
    expect(sat.body).toEqual({ currency: "EUR", reference_currency: "USD", day: "2025-01-04", rate: "1.0299" });
    const { rows } = await db.pool.query(
      "SELECT rate, source_day::text AS source_day FROM fx_rates WHERE currency = 'EUR' AND reference_currency = 'USD' AND day = '2025-01-04'",
    );
    expect(rows).toEqual([{ rate: "1.0299", source_day: "2025-01-03" }]);
  });

  it("serves but does not store today's rate carried forward from an earlier day (it may still be published)", async () => {
    fx.setMode({ raw: '{"amount":1.0,"base":"USD","date":"2025-01-07","rates":{"CHF":0.9071}}' });
    const first = await get("?currency=USD&reference=CHF");
    expect(first.body).toEqual({ currency: "USD", reference_currency: "CHF", day: "2025-01-08", rate: "0.9071" });
    fx.setMode({ raw: '{"amount":1.0,"base":"USD","date":"2025-01-08","rates":{"CHF":0.9102}}' });
    const second = await get("?currency=USD&reference=CHF");
    expect(second.body.rate).toBe("0.9102");
    expect(fx.calls).toBe(2);
    fx.setMode("fail");
    expect((await get("?currency=USD&reference=CHF")).body.rate).toBe("0.9102"); // now stored
  });

  it("shares one source request between concurrent identical lookups", async () => {
    fx.setRate("2025-01-06", "SEK", "USD", "0.0901");
    const [a, b] = await Promise.all([get("?currency=SEK&day=2025-01-06"), get("?currency=SEK&day=2025-01-06")]);
    expect(a.body.rate).toBe("0.0901");
    expect(b.body.rate).toBe("0.0901");
    expect(fx.calls).toBe(1);
  });
});

describe("GET /v1/fx: 400", () => {
  const cases: [string, string][] = [
    ["", "currency is required"],
    ["?reference=USD", "currency is required"],
    ["?currency=eur", "currency must be three upper-case letters (an ISO 4217 code such as EUR)"],
    ["?currency=EURO", "currency must be three upper-case letters (an ISO 4217 code such as EUR)"],
    ["?currency=E1R", "currency must be three upper-case letters (an ISO 4217 code such as EUR)"],
    ["?currency=", "currency must be three upper-case letters (an ISO 4217 code such as EUR)"],
    ["?currency=EUR&reference=us", "reference must be three upper-case letters (an ISO 4217 code such as EUR)"],
    ["?currency=EUR&reference_currency=Usd", "reference_currency must be three upper-case letters (an ISO 4217 code such as EUR)"],
    ["?currency=EUR&reference=USD&reference_currency=GBP", "reference and reference_currency differ"],
    ["?currency=EUR&currency=GBP", "currency must be given once"],
    ["?currency=EUR&day=2025-1-5", "day must be a UTC date YYYY-MM-DD"],
    ["?currency=EUR&day=20250105", "day must be a UTC date YYYY-MM-DD"],
    ["?currency=EUR&day=2025-01-05T00:00:00Z", "day must be a UTC date YYYY-MM-DD"],
    ["?currency=EUR&day=2025-02-30", "day 2025-02-30 is not a calendar date"],
    ["?currency=EUR&day=2025-13-01", "day 2025-13-01 is not a calendar date"],
    ["?currency=QQQ", "currency QQQ is not an ISO 4217 currency code"],
    ["?currency=EUR&reference=ZZZ", "reference ZZZ is not an ISO 4217 currency code"],
    ["?currency=EUR&reference_currency=QQQ", "reference_currency QQQ is not an ISO 4217 currency code"],
  ];
  for (const [query, error] of cases) {
    it(`${query || "(no query)"} -> ${error}`, async () => {
      expect(await get(query)).toEqual({ status: 400, body: { error } });
    });
  }

  it("never asks the source for a refused query, an unknown ISO 4217 code included", async () => {
    await get("?currency=eur");
    await get("?currency=QQQ&day=2025-01-06");
    expect(fx.calls).toBe(0);
  });
});

describe("GET /v1/fx: 404", () => {
  it("answers the spec's text when the source has no rate, and remembers the miss for SVC_FX_NO_RATE_TTL_MS (0: not at all)", async () => {
    const miss = await get("?currency=XAU&reference=EUR&day=2025-01-06");
    expect(miss).toEqual({ status: 404, body: { error: "no EUR rate for XAU on 2025-01-06" } });
    const calls = fx.calls;
    fx.setRate("2025-01-06", "XAU", "EUR", "2541.5");
    expect(await get("?currency=XAU&reference=EUR&day=2025-01-06")).toEqual(miss); // remembered: the source is not asked
    expect(fx.calls).toBe(calls);
    const forgetful = await startTestServer({ DATABASE_URL: db.url, SVC_FX_SOURCE_URL: fx.url, SVC_FX_NO_RATE_TTL_MS: "0" }, { pool: db.pool, clock });
    try {
      expect((await get("?currency=XAU&reference=EUR&day=2025-01-06", forgetful.url)).body.rate).toBe("2541.5");
    } finally {
      await forgetful.close();
    }
  });

  it("answers 404 when the source answers 404 (unknown currency) or 422", async () => {
    fx.setMode("notFound");
    expect(await get("?currency=ZWG&day=2025-01-06")).toEqual({ status: 404, body: { error: "no USD rate for ZWG on 2025-01-06" } });
    fx.setMode({ raw: '{"message":"bad currency pair"}', status: 422 });
    expect(await get("?currency=SLE&day=2025-01-06")).toEqual({ status: 404, body: { error: "no USD rate for SLE on 2025-01-06" } });
  });

  it("answers 404 for a day after today without asking the source", async () => {
    expect(await get("?currency=EUR&day=2025-01-09")).toEqual({ status: 404, body: { error: "no USD rate for EUR on 2025-01-09" } });
    expect(fx.calls).toBe(0);
  });

  it("answers 404 when the source's latest publication is more than 14 days before the day", async () => {
    fx.setMode({ raw: '{"amount":1.0,"base":"NOK","date":"2024-12-01","rates":{"USD":0.0881}}' });
    expect((await get("?currency=NOK&day=2025-01-06")).status).toBe(404);
  });
});

describe("GET /v1/fx: 502", () => {
  const failed = { status: 502, body: { error: "FX source did not answer" } };

  it("answers 502 when the source hangs past SVC_FX_TIMEOUT_MS", async () => {
    fx.setMode("hang");
    const t0 = Date.now();
    expect(await get("?currency=DKK&day=2025-01-06")).toEqual(failed);
    expect(Date.now() - t0).toBeLessThan(5000);
  });

  it("answers 502 when the source fails (500) or answers something that is not a rate", async () => {
    fx.setMode("fail");
    expect(await get("?currency=DKK&day=2025-01-06")).toEqual(failed);
    const bodies = [
      "not json",
      '{"amount":1.0,"base":"DKK","date":"2025-01-06","rates":{"USD":"0.14"}}',
      '{"amount":1.0,"base":"DKK","date":"2025-01-06","rates":{"USD":0}}',
      '{"amount":1.0,"base":"DKK","date":"2025-01-06","rates":{"USD":-0.14}}',
      '{"amount":1.0,"base":"DKK","date":"2025-01-07","rates":{"USD":0.14}}',
      '{"amount":1.0,"base":"EUR","date":"2025-01-06","rates":{"USD":0.14}}',
      '{"amount":100.0,"base":"DKK","date":"2025-01-06","rates":{"USD":14.0}}',
      '{"amount":1.0,"base":"DKK","date":"2025-01-06"}',
      '{"amount":1.0,"base":"DKK","date":"2025-01-06","rates":{"USD":0.14,"USD":0.15}}',
    ];
    for (const raw of bodies) {
      fx.setMode({ raw });
      expect(await get("?currency=DKK&day=2025-01-06"), raw).toEqual(failed);
    }
  });

  it("answers 502 when the source is down, yet still serves days already stored", async () => {
    await get("?currency=EUR&reference=USD&day=2025-01-02"); // stored (by now, or here)
    const gone = await startFrankfurter();
    await gone.close();
    const down = await startTestServer({ DATABASE_URL: db.url, SVC_FX_SOURCE_URL: gone.url }, { pool: db.pool, clock });
    try {
      expect(await get("?currency=EUR&reference=USD&day=2025-01-02", down.url)).toEqual({
        status: 200,
        body: { currency: "EUR", reference_currency: "USD", day: "2025-01-02", rate: "1.0321" },
      });
      expect(await get("?currency=CAD&day=2025-01-06", down.url)).toEqual(failed);
    } finally {
      await down.close();
    }
  });

  it("answers 502 when the outbound policy refuses the source's address, without a request to it", async () => {
    const strict = await startTestServer({ DATABASE_URL: db.url, SVC_FX_SOURCE_URL: fx.url, WRIT_OUTBOUND_ALLOW_LOOPBACK: "0" }, { pool: db.pool, clock });
    try {
      fx.resetCalls();
      expect(await get("?currency=NOK&day=2025-01-06", strict.url)).toEqual(failed);
      expect(fx.calls).toBe(0);
    } finally {
      await strict.close();
    }
  });

  it("answers 502 when no source is configured (stored days still answer)", async () => {
    const none = await startTestServer({ DATABASE_URL: db.url }, { pool: db.pool, clock });
    try {
      expect(await get("?currency=CAD&day=2025-01-06", none.url)).toEqual(failed);
      expect((await get("?currency=EUR&reference=USD&day=2025-01-02", none.url)).body.rate).toBe("1.0321");
    } finally {
      await none.close();
    }
  });
});

describe("GET /v1/fx: 503", () => {
  it("answers 503 DATABASE_URL is not set without storage (after the query checks)", async () => {
    const nodb = await startTestServer({ SVC_FX_SOURCE_URL: fx.url }, { clock });
    try {
      expect(await get("?currency=EUR&reference=USD&day=2025-01-02", nodb.url)).toEqual({ status: 503, body: { error: "DATABASE_URL is not set" } });
      expect(await get("?currency=EUR&reference=EUR", nodb.url)).toEqual({ status: 503, body: { error: "DATABASE_URL is not set" } });
      expect((await get("?currency=eur", nodb.url)).status).toBe(400);
      expect(fx.calls).toBe(0);
    } finally {
      await nodb.close();
    }
  });
});

describe("rateFor (the verify path's lookup)", () => {
  const ctx = () => ({ source: fxSourceFor(server.settings.fx, server.settings.outbound), now: NOW });

  it("gives an exact Rate from the same store and source", async () => {
    expect(await rateFor(db.pool, "EUR", "GBP", "2025-01-06", ctx())).toEqual({ num: 83130n, den: 100000n });
    expect(await rateFor(db.pool, "USD", "USD", "2025-01-06", ctx())).toEqual({ num: 1n, den: 1n });
  });

  it("is undefined when no rate is known, the source fails, or the input is unusable", async () => {
    expect(await rateFor(db.pool, "QQQ", "USD", "2025-01-06", ctx())).toBeUndefined();
    fx.setMode("fail");
    expect(await rateFor(db.pool, "HUF", "USD", "2025-01-06", ctx())).toBeUndefined();
    expect(await rateFor(db.pool, "eur", "USD", "2025-01-06", ctx())).toBeUndefined();
    expect(await rateFor(db.pool, "EUR", "USD", "2025-02-30", ctx())).toBeUndefined();
    expect(await rateFor(db.pool, "HUF", "USD", "2025-01-06", { source: null, now: NOW })).toBeUndefined();
  });

  it("shares the stored rates with GET /v1/fx", async () => {
    fx.setMode("fail");
    expect(await lookupRate(db.pool, "EUR", "USD", "2025-01-04", ctx())).toEqual({ found: true, rate: "1.0299" });
  });
});
