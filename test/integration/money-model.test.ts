/**
 * The money path's model-based test (test/helpers/money-model.ts): random sequences of verify,
 * retry, outcome (party, operator, stranger), hold steps (captures, voids, refunds, the expiry
 * sweep), revocation and concurrent bursts against two
 * `writ serve` processes on one Postgres, every invariant checked after every step and every
 * ledger chain at the end. Bounded here (WRIT_MODEL_RUNS runs of at most WRIT_MODEL_COMMANDS
 * commands, within WRIT_MODEL_SECONDS); `npm run model:money` runs it longer; WRIT_MODEL_SEED and
 * WRIT_MODEL_PATH replay a failure fast-check printed.
 *
 * Periods (test/helpers/period-model.ts): limits per calendar day, week, month (Europe/Berlin)
 * and rolling windows and counts on the intent, per New York day and a rolling count on the
 * delegation, against one in-process service on a FAKE clock that crosses local midnights,
 * Mondays, month ends and the DST changes; after every step every window of every limit holds
 * and the read API's period lines equal the model's windows at the fake now.
 */
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { moneyCommands, runMoneyModel, type ModelSystem } from "../helpers/money-model.js";
import { FakeClock, periodCommands, runPeriodModel, STARTS } from "../helpers/period-model.js";
import { startServeProcess, type ServeProcess } from "../helpers/serve-process.js";
import { mandate, startVerifyWorld, storeAgreement, untilAllowing, type VerifyWorld } from "../helpers/verify-world.js";

const RUNS = Number(process.env.WRIT_MODEL_RUNS ?? 40);
const COMMANDS = Number(process.env.WRIT_MODEL_COMMANDS ?? 60);
const SECONDS = Number(process.env.WRIT_MODEL_SECONDS ?? 90);

let w: VerifyWorld;
const children: ServeProcess[] = [];
let sys: ModelSystem;

beforeAll(async () => {
  w = await startVerifyWorld();
  const env = { DATABASE_URL: w.db.url, BUR_ADMIN_TOKEN: w.admin, SVC_LOG_SIGNING_SEED: w.seed, BUR_WEBHOOK_WORKER: "0", LOG_LEVEL: "warn" };
  children.push(...(await Promise.all([startServeProcess({ env }), startServeProcess({ env })])));
  const { agent_id } = await w.registerAgent(w.operatorKey);
  await storeAgreement(w, { mandates: [mandate(agent_id, "warm", { maximum_amount: 100, cumulative_maximum: 1_000_000 })] });
  await Promise.all(children.map((c) => untilAllowing(c.url, agent_id, w.operatorKey)));
  const stranger = await w.createOrg("processor_psp");
  sys = { w, urls: children.map((c) => c.url), strangerKey: (await w.issueKey(stranger)).token };
}, 120_000);

afterAll(async () => {
  for (const c of children) await c.stop("SIGTERM", 10_000).catch(() => {});
  await w?.close();
});

describe("the money path against a reference model (two processes, one Postgres)", () => {
  it(
    "no sequence of verify, retry, outcome, revocation and burst beats a budget or answers an ALLOW that does not count",
    async () => {
      let runs = 0;
      let commands = 0;
      const steps = { captured: 0, voided: 0, refunded: 0, expired: 0 };
      await fc.assert(
        fc.asyncProperty(moneyCommands(COMMANDS), async (cmds) => {
          const model = await runMoneyModel(sys, cmds);
          runs++;
          commands += model.actions.length;
          for (const k of Object.keys(steps) as (keyof typeof steps)[]) steps[k] += model.steps[k];
        }),
        {
          numRuns: RUNS,
          interruptAfterTimeLimit: SECONDS * 1000,
          markInterruptAsFailure: false,
          endOnFailure: true,
          // Replays a failure fast-check printed: WRIT_MODEL_SEED=<seed> WRIT_MODEL_PATH=<path>.
          ...(process.env.WRIT_MODEL_SEED
            ? { seed: Number(process.env.WRIT_MODEL_SEED), ...(process.env.WRIT_MODEL_PATH ? { path: process.env.WRIT_MODEL_PATH } : {}) }
            : {}),
        },
      );
      // Bounded in time, but never vacuous: at least a few runs with real traffic.
      expect(runs).toBeGreaterThanOrEqual(Math.min(RUNS, 3));
      expect(commands).toBeGreaterThan(0);
      // Holds were exercised: captures, voids, refunds and expiries were appended, not only refused.
      console.log(`money model: ${runs} runs, ${commands} verify actions, hold steps ${JSON.stringify(steps)}`);
      if (runs >= 3) expect(steps.captured + steps.voided + steps.refunded).toBeGreaterThan(0);
    },
    (SECONDS + 60) * 1000,
  );
});

describe("limits per period against a reference model (a fake clock across days, months and DST)", () => {
  const clock = new FakeClock(STARTS[0] as number);
  let pw: VerifyWorld;
  beforeAll(async () => {
    pw = await startVerifyWorld({ WRIT_DENIED_ATTEMPT_BURST: "0" }, { clock: clock.now });
  }, 60_000);
  afterAll(async () => {
    await pw?.close();
  });

  it(
    "no sequence of verify, burst, release, void, final partial capture and clock moves beats a limit of any period window, and the read API shows what the spend transaction checks",
    async () => {
      let runs = 0;
      let verifies = 0;
      await fc.assert(
        fc.asyncProperty(fc.constantFrom(...STARTS), periodCommands(COMMANDS), async (start, cmds) => {
          const model = await runPeriodModel(pw, clock, start, cmds);
          runs++;
          verifies += model.verifies;
        }),
        {
          numRuns: RUNS,
          interruptAfterTimeLimit: SECONDS * 1000,
          markInterruptAsFailure: false,
          endOnFailure: true,
          ...(process.env.WRIT_MODEL_SEED
            ? { seed: Number(process.env.WRIT_MODEL_SEED), ...(process.env.WRIT_MODEL_PATH ? { path: process.env.WRIT_MODEL_PATH } : {}) }
            : {}),
        },
      );
      expect(runs).toBeGreaterThanOrEqual(Math.min(RUNS, 3));
      expect(verifies).toBeGreaterThan(0);
      console.log(`period model: ${runs} runs, ${verifies} verifies`);
    },
    (SECONDS + 60) * 1000,
  );
});
