/**
 * The agent loop with the typed client (docs/examples/agent-loop.ts, shown in
 * docs/how-to/agent-developer.md as it is) runs against a server with the demo data: it reads the demo agreement's remaining
 * budget, verifies a payment (ALLOW), and the payment provider (the PUBLIC demo wallet, a party
 * the agreement names) records its outcome; the ledger then holds both entries.
 */
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startRegistryWorld, type RegistryWorld } from "../helpers/registry-client.js";

const REPO = fileURLToPath(new URL("../../", import.meta.url));
const LOOP = "docs/examples/agent-loop.ts";
let w: RegistryWorld;
let seeded: Record<string, unknown>;

beforeAll(async () => {
  w = await startRegistryWorld({ BUR_ALLOW_DEMO_SEED: "1" });
  seeded = (await w.call("POST", "/v1/admin/seed-demo", w.admin)).body;
});
afterAll(async () => {
  await w?.close();
});

describe("the agent developer's loop with the typed client", () => {
  it("is in docs/how-to/agent-developer.md as it is in docs/examples/agent-loop.ts", () => {
    const page = readFileSync(`${REPO}docs/how-to/agent-developer.md`, "utf8");
    const loop = readFileSync(`${REPO}${LOOP}`, "utf8");
    expect(page).toContain(`\`\`\`ts\n${loop.split("\n").slice(2).join("\n")}\`\`\``);
  });

  it("checks the budget, verifies (ALLOW), and the payment provider records the outcome", async () => {
    // `writ/client` resolves to the sources under the condition writ-source (package.json exports).
    const { stdout } = await promisify(execFile)(process.execPath, ["--conditions=writ-source", "--import", "tsx", LOOP], {
      cwd: REPO,
      env: { ...process.env, WRIT_SERVER: w.server.url, WRIT_API_KEY: seeded.operator_key as string, WRIT_PSP_KEY: seeded.wallet_key as string },
      timeout: 60_000,
    });
    expect(stdout.split("\n")).toEqual([
      "agr_demo: active, 500.00 of 500.00 USD left",
      "ALLOW: ledger entry 1 of agr_demo",
      "outcome authorized: ledger entry 2",
      "",
    ]);
    const ledger = await w.call("GET", "/v1/agreements/agr_demo/ledger", seeded.operator_key as string);
    expect(ledger.body).toMatchObject({
      ledger_sequence: 2,
      entries: [{ outcome: "allowed", amount: 12.5 }, { outcome: "authorized" }],
      budget: { delegation: { remaining: "487.50" } },
    });
  });
});
