/**
 * The merchant's example (docs/examples/merchant-check.ts, shown in
 * docs/how-to/merchant-verify-agent.md as it is) runs against a server with the demo data: the
 * demo agent signs an order, the merchant checks it offline against the signed key directory,
 * then online (status and a live grant, nothing spent), and a replay is refused.
 */
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startRegistryWorld, type RegistryWorld } from "../helpers/registry-client.js";

const REPO = fileURLToPath(new URL("../../", import.meta.url));
const EXAMPLE = "docs/examples/merchant-check.ts";
let w: RegistryWorld;
let seeded: Record<string, unknown>;

beforeAll(async () => {
  w = await startRegistryWorld({ BUR_ALLOW_DEMO_SEED: "1" });
  seeded = (await w.call("POST", "/v1/admin/seed-demo", w.admin)).body;
});
afterAll(async () => {
  await w?.close();
});

describe("the merchant's check of an agent's request", () => {
  it("is in docs/how-to/merchant-verify-agent.md as it is in docs/examples/merchant-check.ts", () => {
    const page = readFileSync(`${REPO}docs/how-to/merchant-verify-agent.md`, "utf8");
    const example = readFileSync(`${REPO}${EXAMPLE}`, "utf8");
    expect(page).toContain(`\`\`\`ts\n${example.split("\n").slice(2).join("\n")}\`\`\``);
  });

  it("verifies offline and online, sees a live grant, spends nothing, and refuses the replay", async () => {
    const { stdout } = await promisify(execFile)(process.execPath, ["--conditions=writ-source", "--import", "tsx", EXAMPLE], {
      cwd: REPO,
      env: { ...process.env, WRIT_SERVER: w.server.url, WRIT_API_KEY: seeded.merchant_key as string },
      timeout: 60_000,
    });
    expect(stdout.split("\n")).toEqual([
      "offline: signed by agent_demo",
      "online: agent_demo is active; grant live (agr_demo)",
      "again: REQUEST_NONCE_REPLAYED",
      "",
    ]);
    const ledger = await w.call("GET", "/v1/agreements/agr_demo/ledger", seeded.operator_key as string);
    expect(ledger.body).toMatchObject({ ledger_sequence: 0, entries: [] });
  });
});
