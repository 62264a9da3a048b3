/**
 * The quick start (README.md, and docs/getting-started/index.md word for word), as a reader runs
 * it after `npm start`: the curl `writ dev` prints answers ALLOW with a ledger entry, the same
 * action_id again the same answer without a second entry, and the amount raised above the
 * ceiling answers exactly the DENY both show (verdict, svc_decision and every reason).
 */
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { seedDevDemo } from "../../src/dev/demo-seed.js";
import { startVerifyWorld, type VerifyWorld } from "../helpers/verify-world.js";

let w: VerifyWorld;
const README = readFileSync(new URL("../../README.md", import.meta.url), "utf8");
const GETTING_STARTED = readFileSync(new URL("../../docs/getting-started/index.md", import.meta.url), "utf8");
const DENY_SHOWN =
  /raise `amount` above the ceiling, with a new `action_id`\s+\(the same one with another amount is a 409\), and you get\s+`"verdict":"(\w+)","svc_decision":"(\w+)","reasons":(\[[^\]]*\])`/;

beforeAll(async () => {
  w = await startVerifyWorld({ BUR_ALLOW_DEMO_SEED: "1" });
});
afterAll(async () => {
  await w?.close();
});

describe("the README quick start", () => {
  it("the printed curl answers ALLOW, again the same, and above the ceiling the DENY shown", async () => {
    const lines = await seedDevDemo(w.server.app, w.server.url, new Date());
    const curl = lines.find((l) => l.trim().startsWith("curl -s"));
    const key = /Bearer (bur_\S+)'/.exec(curl ?? "")?.[1] as string;
    const body = JSON.parse(/-d '(.+)'$/.exec(curl ?? "")?.[1] ?? "{}") as { action: Record<string, unknown> };

    const first = await w.call("POST", "/v1/verify", key, body);
    expect(first.body).toMatchObject({ verdict: "ALLOW", svc_decision: "ALLOW", reasons: [], ledger_entry: { sequence: 1 } });
    expect((await w.call("POST", "/v1/verify", key, body)).body).toEqual(first.body);

    const shown = DENY_SHOWN.exec(README);
    expect(shown, "the README's DENY example").not.toBeNull();
    expect(DENY_SHOWN.exec(GETTING_STARTED)?.slice(1), "docs/getting-started/index.md shows the same DENY").toEqual(shown?.slice(1));
    const above = await w.call("POST", "/v1/verify", key, { ...body, action: { ...body.action, action_id: "act_readme_above", amount: 75 } });
    expect(above.body).toMatchObject({ verdict: shown?.[1], svc_decision: shown?.[2], reasons: JSON.parse(shown?.[3] ?? "null") });
    // The same action_id with another amount is a conflict, as the README says.
    expect((await w.call("POST", "/v1/verify", key, { ...body, action: { ...body.action, amount: 75 } })).status).toBe(409);
  });
});
