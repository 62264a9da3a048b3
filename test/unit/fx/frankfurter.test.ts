/**
 * The rate source client against a local stand-in (127.0.0.1): the outbound policy, and the
 * memory of "no rate" answers (SVC_FX_NO_RATE_TTL_MS).
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { createFrankfurterSource, FxSourceError } from "../../../src/fx/index.js";
import { LOOPBACK_OUTBOUND, STRICT_OUTBOUND } from "../../../src/http/outbound-address.js";
import type { Connect, Resolve } from "../../../src/http/outbound.js";
import { startFrankfurter, type FrankfurterStandIn } from "../../helpers/frankfurter.js";

let source: FrankfurterStandIn;
beforeAll(async () => {
  source = await startFrankfurter();
  source.setRate("2026-03-02", "EUR", "USD", "1.0842");
});
afterAll(() => source.close());
beforeEach(() => {
  source.setMode("normal");
  source.resetCalls();
});

describe("createFrankfurterSource", () => {
  it("asks the source where the policy allows it", async () => {
    const s = createFrankfurterSource({ url: source.url, timeoutMs: 2000, policy: LOOPBACK_OUTBOUND });
    expect(await s.fetchRate("EUR", "USD", "2026-03-02")).toEqual({ kind: "rate", rate: "1.0842", sourceDay: "2026-03-02" });
    expect(source.calls).toBe(1);
  });

  it("refuses a loopback source under the default (strict) policy: REFUSED, nothing sent", async () => {
    const s = createFrankfurterSource({ url: source.url, timeoutMs: 2000 });
    const err = await s.fetchRate("EUR", "USD", "2026-03-02").catch((e: unknown) => e);
    expect(err).toBeInstanceOf(FxSourceError);
    expect((err as FxSourceError).code).toBe("REFUSED");
    expect(source.calls).toBe(0);
  });

  it.each(["10.0.0.5", "169.254.169.254", "::ffff:127.0.0.1"])("refuses a source name that resolves to %s without opening a socket", async (address) => {
    const resolve = vi.fn<Resolve>(async () => [{ address, family: address.includes(":") ? 6 : 4 }]);
    const connect = vi.fn<Connect>(() => {
      throw new Error("no socket may be opened");
    });
    const s = createFrankfurterSource({ url: "https://rates.example.test/v1", timeoutMs: 2000, policy: STRICT_OUTBOUND, net: { resolve, connect } });
    const err = await s.fetchRate("EUR", "USD", "2026-03-02").catch((e: unknown) => e);
    expect((err as FxSourceError).code).toBe("REFUSED");
    expect(resolve).toHaveBeenCalledWith("rates.example.test");
    expect(connect).not.toHaveBeenCalled();
  });

  it('remembers a "no rate" answer for noRateTtlMs, then asks again', async () => {
    let now = 1_000_000;
    const s = createFrankfurterSource({ url: source.url, timeoutMs: 2000, policy: LOOPBACK_OUTBOUND, noRateTtlMs: 60_000, clock: () => now });
    source.setMode("notFound");
    expect(await s.fetchRate("EUR", "JPY", "2026-03-02")).toEqual({ kind: "none" });
    expect(await s.fetchRate("EUR", "JPY", "2026-03-02")).toEqual({ kind: "none" });
    expect(source.calls).toBe(1);
    now += 59_999;
    expect(await s.fetchRate("EUR", "JPY", "2026-03-02")).toEqual({ kind: "none" });
    expect(source.calls).toBe(1);
    now += 2;
    source.setMode("normal");
    source.setRate("2026-03-02", "EUR", "JPY", "162.5");
    expect(await s.fetchRate("EUR", "JPY", "2026-03-02")).toEqual({ kind: "rate", rate: "162.5", sourceDay: "2026-03-02" });
    expect(source.calls).toBe(2);
  });

  it("does not remember failures or rates, and remembers nothing with noRateTtlMs 0", async () => {
    const s = createFrankfurterSource({ url: source.url, timeoutMs: 2000, policy: LOOPBACK_OUTBOUND, noRateTtlMs: 0 });
    source.setMode("notFound");
    await s.fetchRate("GBP", "USD", "2026-03-02");
    await s.fetchRate("GBP", "USD", "2026-03-02");
    expect(source.calls).toBe(2);
    const t = createFrankfurterSource({ url: source.url, timeoutMs: 2000, policy: LOOPBACK_OUTBOUND, noRateTtlMs: 60_000 });
    source.setMode("fail");
    await expect(t.fetchRate("CHF", "USD", "2026-03-02")).rejects.toBeInstanceOf(FxSourceError);
    await expect(t.fetchRate("CHF", "USD", "2026-03-02")).rejects.toBeInstanceOf(FxSourceError);
    expect(source.calls).toBe(4);
  });
});
