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
import { checkMoneyModel, startMoneySystem, type ModelSystem } from "../helpers/money-model.js";
import { FakeClock, periodCommands, runPeriodModel, STARTS } from "../helpers/period-model.js";
import { startVerifyWorld, type VerifyWorld } from "../helpers/verify-world.js";

const RUNS = Number(process.env.WRIT_MODEL_RUNS ?? 40);
const COMMANDS = Number(process.env.WRIT_MODEL_COMMANDS ?? 60);
const SECONDS = Number(process.env.WRIT_MODEL_SECONDS ?? 90);

let sys: ModelSystem;
let stop: (() => Promise<void>) | undefined;

beforeAll(async () => {
  ({ sys, stop } = await startMoneySystem());
}, 120_000);

afterAll(async () => {
  await stop?.();
});

describe("the money path against a reference model (two processes, one Postgres)", () => {
  it(
    "no sequence of verify, retry, outcome, revocation and burst beats a budget or answers an ALLOW that does not count",
    async () => {
      const { runs, commands, steps } = await checkMoneyModel(sys, {
        runs: RUNS,
        commands: COMMANDS,
        seconds: SECONDS,
        // Replays a failure fast-check printed: WRIT_MODEL_SEED=<seed> WRIT_MODEL_PATH=<path>.
        ...(process.env.WRIT_MODEL_SEED
          ? { seed: Number(process.env.WRIT_MODEL_SEED), ...(process.env.WRIT_MODEL_PATH ? { path: process.env.WRIT_MODEL_PATH } : {}) }
          : {}),
      });
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
    // WRIT_PERIOD_HOUR_COUNTERS_FROM 2: a window's first payment is summed by itself, every later
    // one in its hour's counter too (src/store/ledger/periods.ts), so the windows checked mix both.
    pw = await startVerifyWorld({ WRIT_DENIED_ATTEMPT_BURST: "0", WRIT_PERIOD_HOUR_COUNTERS_FROM: "2" }, { clock: clock.now });
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
