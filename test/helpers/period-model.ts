/**
 * The money model's periods (test/integration/money-model.test.ts): random sequences of verify,
 * concurrent bursts, releases (`failed`), voids, final partial captures (half the hold: the
 * rest goes back, the payment stays counted) and FAKE CLOCK moves (minutes, hours, and jumps to
 * just before, at and after the next local midnight, Monday, 1st of the month of Europe/Berlin
 * and midnight of America/New_York, across the DST changes) against one in-process service
 * whose clock is the fake one, checked after every step against a reference model:
 *
 * - every limit of every period window holds: for each calendar window (keyed by the LOCAL
 *   date, ISO week or month of the instants, computed here with Intl independently of the
 *   service's window starts) and each rolling window ending at a counted payment, the counted
 *   spend (allowed, not released) is at most the limit and the payments at most the count;
 * - a single verify is answered ALLOW exactly when the model says the payment fits every
 *   window of `now` (else DENY with PERIOD_LIMIT_EXCEEDED / PERIOD_COUNT_EXCEEDED);
 * - what the read API shows (GET /v1/agreements/{id}: each period's spent, count, remaining,
 *   window_start and resets_at) equals the model's windows at the fake `now`, the windows the
 *   spend transaction checks; a calendar window's start and reset are the first instants of
 *   the local day/week/month and of the next one (DST-correct).
 */
import fc from "fast-check";
import { expect } from "vitest";
import { mandate, storeAgreement, uid, type VerifyWorld } from "./verify-world.js";

/** The fake clock the service reads (AppDeps.clock). */
export class FakeClock {
  ms: number;
  constructor(ms: number) {
    this.ms = ms;
  }
  readonly now = (): Date => new Date(this.ms);
}

const BERLIN = "Europe/Berlin";
const NEW_YORK = "America/New_York";
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

type Cal = "day" | "week" | "month";
interface ModelLimit {
  period?: Cal;
  rolling?: string;
  rollingMs?: number;
  amount?: number;
  count?: number;
}

/** The intent's limits (Europe/Berlin) and the delegation's (America/New_York); amounts in USD. */
export const INTENT_LIMITS: ModelLimit[] = [
  { period: "day", amount: 60, count: 4 },
  { period: "week", amount: 150 },
  { period: "month", amount: 400 },
  { rolling: "PT6H", rollingMs: 6 * HOUR, amount: 45 },
];
export const DELEGATION_LIMITS: ModelLimit[] = [
  { period: "day", amount: 80 },
  { rolling: "P1D", rollingMs: 24 * HOUR, count: 6 },
];

const parts = new Map<string, Intl.DateTimeFormat>();
function localDate(ms: number, tz: string): { y: number; m: number; d: number } {
  let f = parts.get(tz);
  if (!f) parts.set(tz, (f = new Intl.DateTimeFormat("en-CA", { timeZone: tz, year: "numeric", month: "2-digit", day: "2-digit" })));
  const [y, m, d] = f.format(new Date(ms)).split("-").map(Number) as [number, number, number];
  return { y, m, d };
}

/** The calendar window of `ms` in `tz` as a key of local dates (independent of the service's window arithmetic). */
export function windowKey(period: Cal, ms: number, tz: string): string {
  const { y, m, d } = localDate(ms, tz);
  if (period === "day") return `${y}-${m}-${d}`;
  if (period === "month") return `${y}-${m}`;
  // ISO week: the Monday on or before the local date.
  const utc = Date.UTC(y, m - 1, d);
  const monday = new Date(utc - ((new Date(utc).getUTCDay() + 6) % 7) * 86_400_000);
  return `w${monday.toISOString().slice(0, 10)}`;
}

interface Payment {
  atMs: number;
  amountMinor: bigint;
  actionId: string;
  released: boolean;
  /** Its hold is closed by a final capture: it stays counted with the captured amount and cannot be released. */
  closed?: boolean;
}

/** The reference model of one run. */
export class PeriodModel {
  readonly payments: Payment[] = [];
  agentId = "";
  agreementId = "";
  verifies = 0;
  /** The delegation expires here (a grant of at most seven days is not "standing"): the clock never moves past it. */
  untilMs = 0;
  constructor(readonly clock: FakeClock) {}

  counted(): Payment[] {
    return this.payments.filter((p) => !p.released);
  }

  /** The payments whose hold is open: a release, a void or a capture may still close it. */
  open(): Payment[] {
    return this.payments.filter((p) => !p.released && p.closed !== true);
  }

  /** Usage of `l` (in `tz`) in the window holding `ms`. */
  usage(l: ModelLimit, tz: string, ms: number): { spent: bigint; count: number } {
    const inWindow =
      l.rollingMs !== undefined
        ? (p: Payment) => p.atMs > ms - (l.rollingMs as number) && p.atMs <= ms
        : (p: Payment) => windowKey(l.period as Cal, p.atMs, tz) === windowKey(l.period as Cal, ms, tz);
    const ps = this.counted().filter(inWindow);
    return { spent: ps.reduce((s, p) => s + p.amountMinor, 0n), count: ps.length };
  }

  /** Whether one more payment of `amountMinor` at `ms` fits every limit. */
  fits(amountMinor: bigint, ms: number): boolean {
    const ok = (ls: ModelLimit[], tz: string) =>
      ls.every((l) => {
        const u = this.usage(l, tz, ms);
        return (l.count === undefined || u.count + 1 <= l.count) && (l.amount === undefined || u.spent + amountMinor <= BigInt(l.amount * 100));
      });
    return ok(INTENT_LIMITS, BERLIN) && ok(DELEGATION_LIMITS, NEW_YORK);
  }
}

/** The invariant: every window of every counted payment holds every limit. */
function checkWindows(m: PeriodModel): void {
  for (const [ls, tz, who] of [
    [INTENT_LIMITS, BERLIN, "intent"],
    [DELEGATION_LIMITS, NEW_YORK, "delegation"],
  ] as const) {
    for (const p of m.counted()) {
      for (const l of ls) {
        const u = m.usage(l, tz, p.atMs);
        const name = `${who} ${l.period ?? l.rolling ?? ""} window of ${new Date(p.atMs).toISOString()}`;
        if (l.amount !== undefined) expect(u.spent <= BigInt(l.amount * 100), `${name}: spent ${u.spent} over ${l.amount}`).toBe(true);
        if (l.count !== undefined) expect(u.count <= l.count, `${name}: ${u.count} payments over ${l.count}`).toBe(true);
      }
    }
  }
}

interface PeriodLineJson {
  period?: string;
  rolling?: string;
  spent: string;
  count: number;
  limit?: string;
  remaining?: string;
  count_limit?: number;
  count_remaining?: number;
  window_start?: string;
  resets_at?: string;
  time_zone?: string;
}

const minorOf = (s: string) => BigInt(s.replace(".", ""));

/** What the read API shows equals the model's windows at `now`. */
async function checkReadApi(m: PeriodModel, w: VerifyWorld): Promise<void> {
  const r = await w.call("GET", `/v1/agreements/${m.agreementId}`, w.operatorKey);
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  const budget = r.body.budget as { intents: { periods?: PeriodLineJson[] }[]; delegation?: { periods?: PeriodLineJson[] } };
  const now = m.clock.ms;
  for (const [ls, tz, lines] of [
    [INTENT_LIMITS, BERLIN, budget.intents[0]?.periods],
    [DELEGATION_LIMITS, NEW_YORK, budget.delegation?.periods],
  ] as const) {
    expect(lines?.length).toBe(ls.length);
    ls.forEach((l, i) => {
      const line = (lines as PeriodLineJson[])[i] as PeriodLineJson;
      const u = m.usage(l, tz, now);
      const ctx = `${tz} ${l.period ?? l.rolling ?? ""} at ${new Date(now).toISOString()}: ${JSON.stringify(line)}`;
      expect(minorOf(line.spent), ctx).toBe(u.spent);
      expect(line.count, ctx).toBe(u.count);
      if (l.amount !== undefined) {
        const left = BigInt(l.amount * 100) - u.spent;
        expect(minorOf(line.remaining as string), ctx).toBe(left > 0n ? left : 0n);
      }
      if (l.count !== undefined) expect(line.count_remaining, ctx).toBe(Math.max(0, l.count - u.count));
      if (l.period !== undefined) {
        const start = Date.parse(line.window_start as string);
        const end = Date.parse(line.resets_at as string);
        const key = windowKey(l.period, now, tz);
        expect(start <= now && now < end, ctx).toBe(true);
        // The window is exactly the local day/week/month: its first instant and the next one's.
        expect(windowKey(l.period, start, tz), ctx).toBe(key);
        expect(windowKey(l.period, start - 1, tz), ctx).not.toBe(key);
        expect(windowKey(l.period, end - 1, tz), ctx).toBe(key);
        expect(windowKey(l.period, end, tz), ctx).not.toBe(key);
      }
    });
  }
}

type Cmd = fc.AsyncCommand<PeriodModel, VerifyWorld>;
const AMOUNTS = [5, 10, 20];

function actionBody(m: PeriodModel, amount: number) {
  return {
    agent_id: m.agentId,
    action: { action_id: uid("act"), action_type: "purchase", amount, currency: "USD", proposed_at: new Date(m.clock.ms).toISOString() },
  };
}

function record(m: PeriodModel, body: ReturnType<typeof actionBody>, r: { status: number; body: Record<string, unknown> }, amount: number): void {
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  m.verifies++;
  if (r.body.verdict === "ALLOW") m.payments.push({ atMs: m.clock.ms, amountMinor: BigInt(amount * 100), actionId: body.action.action_id, released: false });
  else expect(r.body.reasons, JSON.stringify(r.body)).toEqual(expect.arrayContaining([expect.stringMatching(/^PERIOD_(LIMIT|COUNT)_EXCEEDED$/)]));
}

class Verify implements Cmd {
  constructor(readonly amount: number) {}
  check = () => true;
  async run(m: PeriodModel, w: VerifyWorld): Promise<void> {
    const fits = m.fits(BigInt(this.amount * 100), m.clock.ms);
    const body = actionBody(m, this.amount);
    const r = await w.verify(body);
    record(m, body, r, this.amount);
    expect(r.body.verdict, `model says ${fits ? "fits" : "does not fit"} at ${new Date(m.clock.ms).toISOString()}: ${JSON.stringify(r.body)}`).toBe(
      fits ? "ALLOW" : "DENY",
    );
  }
  toString = () => `verify(${this.amount})`;
}

class Burst implements Cmd {
  constructor(readonly amounts: number[]) {}
  check = () => true;
  async run(m: PeriodModel, w: VerifyWorld): Promise<void> {
    const bodies = this.amounts.map((a) => actionBody(m, a));
    const answers = await Promise.all(bodies.map((b) => w.verify(b)));
    answers.forEach((r, i) => record(m, bodies[i] as ReturnType<typeof actionBody>, r, this.amounts[i] as number));
  }
  toString = () => `burst(${this.amounts.join(",")})`;
}

class Release implements Cmd {
  /** `failed` (the payment did not happen) or `voided` (its hold voided before any capture): both give back the amount and the payment. */
  constructor(
    readonly pick: number,
    readonly outcome: "failed" | "voided" = "failed",
  ) {}
  check = (m: Readonly<PeriodModel>) => m.payments.some((p) => !p.released && p.closed !== true);
  async run(m: PeriodModel, w: VerifyWorld): Promise<void> {
    const live = m.open();
    const p = live[this.pick % live.length] as Payment;
    const r = await w.outcome({ agreement_id: m.agreementId, action_id: p.actionId, outcome: this.outcome });
    expect(r.status, JSON.stringify(r.body)).toBeLessThan(300);
    p.released = true;
  }
  toString = () => `${this.outcome === "failed" ? "release" : "void"}(${this.pick})`;
}

/** A final partial capture of half an open hold: the rest goes back to every window, the payment stays counted. */
class Capture implements Cmd {
  constructor(readonly pick: number) {}
  check = (m: Readonly<PeriodModel>) => m.payments.some((p) => !p.released && p.closed !== true);
  async run(m: PeriodModel, w: VerifyWorld): Promise<void> {
    const live = m.open();
    const p = live[this.pick % live.length] as Payment;
    const half = p.amountMinor / 2n;
    const r = await w.outcome({
      agreement_id: m.agreementId,
      action_id: p.actionId,
      outcome: "captured",
      amount: Number(half) / 100,
      final: true,
      idempotency_key: uid("cap"),
    });
    expect(r.status, JSON.stringify(r.body)).toBeLessThan(300);
    p.amountMinor = half;
    p.closed = true;
  }
  toString = () => `capture(${this.pick})`;
}

/** The next instant at which the local date/week/month of `tz` changes after `ms` (found by bisection on the model's own keys). */
function nextBoundary(period: Cal, tz: string, ms: number): number {
  const key = windowKey(period, ms, tz);
  let lo = ms;
  let hi = ms + 6 * HOUR;
  while (windowKey(period, hi, tz) === key) hi += 6 * HOUR * (period === "day" ? 1 : 8);
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    if (windowKey(period, mid, tz) === key) lo = mid;
    else hi = mid;
  }
  return hi;
}

class Advance implements Cmd {
  constructor(
    readonly kind: "minutes" | "hours" | `${Cal}@${string}`,
    readonly n: number,
  ) {}
  check = () => true;
  async run(m: PeriodModel): Promise<void> {
    let to: number;
    if (this.kind === "minutes") to = m.clock.ms + (1 + this.n) * 7 * MINUTE;
    else if (this.kind === "hours") to = m.clock.ms + (1 + this.n) * 3 * HOUR;
    else {
      const [period, tz] = this.kind.split("@") as [Cal, string];
      // Just before (-1 s), at, or just after (+1 s) the next boundary.
      to = Math.max(m.clock.ms, nextBoundary(period, tz, m.clock.ms) + ((this.n % 3) - 1) * 1000);
    }
    if (to < m.untilMs) m.clock.ms = to;
  }
  toString = () => `advance(${this.kind},${this.n})`;
}

/** The command arbitraries. */
export function periodCommands(maxCommands: number): fc.Arbitrary<Iterable<Cmd>> {
  const amount = fc.constantFrom(...AMOUNTS);
  return fc.commands(
    [
      amount.map((a) => new Verify(a)),
      amount.map((a) => new Verify(a)),
      fc.array(amount, { minLength: 2, maxLength: 6 }).map((as) => new Burst(as)),
      fc.nat(100).map((x) => new Release(x)),
      fc.nat(100).map((x) => new Release(x, "voided")),
      fc.nat(100).map((x) => new Capture(x)),
      fc
        .tuple(
          fc.constantFrom("minutes", "hours", `day@${BERLIN}`, `week@${BERLIN}`, `month@${BERLIN}`, `day@${NEW_YORK}`) as fc.Arbitrary<Advance["kind"]>,
          fc.nat(5),
        )
        .map(([k, n]) => new Advance(k, n)),
    ],
    { maxCommands, size: "max" },
  );
}

/** Fake-clock starts just before DST changes and month ends (2027: Berlin springs forward 28 March, falls back 31 October; New York 14 March, 7 November). */
export const STARTS = [
  "2027-03-27T20:00:00Z",
  "2027-03-13T22:00:00Z",
  "2027-10-30T21:00:00Z",
  "2027-11-06T20:00:00Z",
  "2027-04-30T19:00:00Z",
  "2027-12-31T18:00:00Z",
].map(Date.parse);

/** A fresh agent and agreement under the fake clock's `start` (so no earlier run's windows count). */
export async function newPeriodModel(w: VerifyWorld, clock: FakeClock, start: number): Promise<PeriodModel> {
  clock.ms = start;
  const m = new PeriodModel(clock);
  const { agent_id } = await w.registerAgent(w.operatorKey);
  m.agentId = agent_id;
  const far = "2099-01-01T00:00:00Z";
  m.untilMs = start + 7 * 24 * HOUR - 2 * HOUR;
  const { agreementId } = await storeAgreement(w, {
    mandates: [
      mandate(agent_id, "i1", {
        maximum_amount: 100,
        cumulative_maximum: 1_000_000,
        expires_at: far,
        time_zone: BERLIN,
        period_limits: INTENT_LIMITS.map(({ period, rolling, amount, count }) => ({
          ...(period ? { period } : {}),
          ...(rolling ? { rolling } : {}),
          ...(amount !== undefined ? { amount } : {}),
          ...(count !== undefined ? { count } : {}),
        })),
      }),
    ],
    delegation: {
      scope: {
        maximum_amount: 100,
        time_zone: NEW_YORK,
        period_limits: DELEGATION_LIMITS.map(({ period, rolling, amount, count }) => ({
          ...(period ? { period } : {}),
          ...(rolling ? { rolling } : {}),
          ...(amount !== undefined ? { amount } : {}),
          ...(count !== undefined ? { count } : {}),
        })),
      },
      over: { granted_at: new Date(start - HOUR).toISOString(), expires_at: new Date(m.untilMs + HOUR).toISOString() },
    },
  });
  m.agreementId = agreementId;
  return m;
}

/** Runs `commands` on a fresh model, checking the windows and the read API after each. */
export async function runPeriodModel(w: VerifyWorld, clock: FakeClock, start: number, commands: Iterable<Cmd>): Promise<PeriodModel> {
  const model = await newPeriodModel(w, clock, start);
  const checked = [...commands].map((c) => ({
    check: (mm: Readonly<PeriodModel>) => c.check(mm),
    run: async (mm: PeriodModel, s: VerifyWorld) => {
      await c.run(mm, s);
      checkWindows(mm);
      await checkReadApi(mm, s);
    },
    toString: () => c.toString(),
  }));
  await fc.asyncModelRun(() => ({ model, real: w }), checked);
  return model;
}
