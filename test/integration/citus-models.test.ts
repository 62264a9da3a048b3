/**
 * The money model's sequences and the adversary model (test/helpers/money-model.ts,
 * adversary-model.ts) on a real Citus cluster (hack/citus/cluster.ts: a coordinator and two
 * workers; docs/scale.md), each on a cluster of its own, bounded so that the file stays within a
 * few minutes:
 * - the money model drives two `writ serve` processes over HTTP, pointed at the coordinator
 *   (verify, retries, outcomes, hold steps, the expiry sweep, revocations through
 *   DELETE /svc/delegations/{id}, concurrent bursts), every invariant checked after every step;
 * - the adversary model drives the in-process service and the in-process controller (its
 *   declarations through the local object store, a deleted declaration revoked by the
 *   controller's finalizer), as it does on one Postgres.
 * Both then show that revocations were made on the cluster (markers in `delegation_revocations`).
 * `WRIT_TEST_CITUS=1` (set below, for this file's process only) makes every test database of
 * the helpers a fresh cluster (test/helpers/pg.ts).
 */
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { provisionCitus } from "../../hack/citus/cluster.js";
import { adversaryCommands, enabledKinds, runAdversaryModel, startAdversarySystem, type AdversarySystem } from "../helpers/adversary-model.js";
import { checkMoneyModel, startMoneySystem, type ModelSystem } from "../helpers/money-model.js";
import type { VerifyWorld } from "../helpers/verify-world.js";

// Skipped only when Citus is neither installed nor buildable here (its source folder is not
// beside the repository, WRIT_CITUS_SOURCE): .ci/run builds it, so in CI these tests run.
const tools = provisionCitus();
// Vitest runs each test file in a process of its own (pool: forks); the setting is restored
// after this file all the same.
const before = process.env.WRIT_TEST_CITUS;
process.env.WRIT_TEST_CITUS = "1";
afterAll(() => {
  if (before === undefined) delete process.env.WRIT_TEST_CITUS;
  else process.env.WRIT_TEST_CITUS = before;
});

/** Bounds of each model here: runs, commands per run, seconds. */
const MONEY = { runs: 6, commands: 30, seconds: 45 };
const ADVERSARY = { runs: 10, commands: 30, seconds: 45 };

const revocationMarkers = async (w: VerifyWorld) =>
  (await w.db.pool.query<{ n: number }>("SELECT count(*)::int AS n FROM delegation_revocations")).rows[0]?.n ?? 0;

describe.skipIf(tools === null)("the money model on a Citus cluster (two writ serve processes)", () => {
  let sys: ModelSystem;
  let stop: (() => Promise<void>) | undefined;

  beforeAll(async () => {
    ({ sys, stop } = await startMoneySystem());
  }, 240_000);

  afterAll(async () => {
    await stop?.();
  }, 60_000);

  it(
    "no sequence of verify, retry, outcome, hold step, expiry, revocation and burst beats a budget or answers an ALLOW that does not count",
    async () => {
      const { runs, commands, steps } = await checkMoneyModel(sys, MONEY);
      expect(runs).toBeGreaterThanOrEqual(3);
      expect(commands).toBeGreaterThan(0);
      // Delegations were revoked on the cluster (the model revokes through DELETE /svc/delegations/{id}).
      expect(await revocationMarkers(sys.w)).toBeGreaterThan(0);
      console.log(`money model on Citus: ${runs} runs, ${commands} verify actions, hold steps ${JSON.stringify(steps)}`);
    },
    (MONEY.seconds + 90) * 1000,
  );
});

describe.skipIf(tools === null)("the adversary model on a Citus cluster (the service and the controller in-process)", () => {
  let sys: AdversarySystem;

  beforeAll(async () => {
    sys = await startAdversarySystem();
  }, 240_000);

  afterAll(async () => {
    await sys?.stop();
  }, 60_000);

  it(
    "no sequence of agent calls, operator declarations (deletions revoked by the controller) and payment-side outcomes beats a budget the principal signed",
    async () => {
      let runs = 0;
      let allows = 0;
      await fc.assert(
        fc.asyncProperty(adversaryCommands(ADVERSARY.commands, enabledKinds(undefined)), async (cmds) => {
          const model = await runAdversaryModel(sys, cmds);
          runs++;
          allows += model.allows.length;
        }),
        { numRuns: ADVERSARY.runs, interruptAfterTimeLimit: ADVERSARY.seconds * 1000, markInterruptAsFailure: false, endOnFailure: true },
      );
      expect(runs).toBeGreaterThanOrEqual(3);
      expect(allows).toBeGreaterThan(0);
      // The controller revoked deleted declarations on the cluster.
      expect(await revocationMarkers(sys.w)).toBeGreaterThan(0);
      console.log(`adversary model on Citus: ${runs} runs, ${allows} ALLOWs`);
    },
    (ADVERSARY.seconds + 90) * 1000,
  );
});
