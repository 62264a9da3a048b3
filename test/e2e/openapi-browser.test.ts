/**
 * The interactive API documentation in a real browser (headless Debian Chromium through
 * playwright-core): open /docs/openapi, Authorize with the PUBLIC demo operator key, Try it out
 * on POST /v1/verify with its example (the demo agent's payment), and see ALLOW. Screenshot:
 * docs/screenshots/openapi-verify.png (written with WRIT_UPDATE_SCREENSHOTS=1).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchBrowser, type TestBrowser } from "../helpers/browser.js";
import { startRegistryWorld, type RegistryWorld } from "../helpers/registry-client.js";

let w: RegistryWorld;
let browser: TestBrowser;
let operatorKey: string;

beforeAll(async () => {
  w = await startRegistryWorld({ BUR_ALLOW_DEMO_SEED: "1" });
  operatorKey = (await w.call("POST", "/v1/admin/seed-demo", w.admin)).body.operator_key as string;
  browser = await launchBrowser({ height: 1000 });
});
afterAll(async () => {
  await browser?.close();
  await w?.close();
});

describe("/docs/openapi in a browser", () => {
  it("Authorize with the demo key, Try it out on verify with its example: ALLOW, recorded in the ledger", async () => {
    const { page } = browser;
    await page.goto(`${w.server.url}/docs/openapi`);
    // Verify is the first operation shown.
    const first = page.locator(".opblock").first();
    await first.waitFor();
    expect(await first.locator(".opblock-summary-path").textContent()).toBe("/v1/verify");

    // Authorize: the apiKey scheme's bearer field.
    await page.getByRole("button", { name: "Authorize" }).first().click();
    const apiKeyForm = page.locator(".auth-container", { has: page.locator("h4", { hasText: "apiKey" }) });
    await apiKeyForm.getByLabel("auth-bearer-value").fill(operatorKey);
    await apiKeyForm.getByRole("button", { name: "Apply credentials" }).click();
    await apiKeyForm.getByRole("button", { name: "Remove authorization" }).waitFor();
    await page.getByRole("button", { name: "Close" }).first().click();

    // Try it out with the example body as it stands (the demo agent's 12.50 USD at Corner Market).
    const verify = page.locator("#operations-verify-post_v1_verify");
    await verify.locator(".opblock-summary").click();
    await verify.getByRole("button", { name: "Try it out" }).click();
    const body = JSON.parse(await verify.locator("textarea.body-param__text").inputValue()) as { agent_id: string; action: { amount: number } };
    expect(body).toMatchObject({ agent_id: "agent_demo", action: { amount: 12.5, currency: "USD" } });
    await verify.getByRole("button", { name: "Execute" }).click();

    const live = verify.locator(".live-responses-table");
    const response = live.locator("tr.response").first();
    await response.waitFor();
    expect((await response.locator(".response-col_status").textContent())?.trim()).toBe("200");
    const answer = JSON.parse((await response.locator(".response-col_description pre").first().textContent()) ?? "{}") as Record<string, unknown>;
    expect(answer).toMatchObject({ verdict: "ALLOW", svc_decision: "ALLOW", reasons: [], agent_id: "agent_demo", agreement_id: "agr_demo" });
    // The request carried the key entered with Authorize.
    expect(await verify.locator(".curl-command").textContent()).toContain(`Authorization: Bearer ${operatorKey}`);
    await live.scrollIntoViewIfNeeded();
    await browser.screenshot("openapi-verify");

    // A real authorization: the spend is in the demo agreement's ledger.
    const ledger = await w.call("GET", "/v1/agreements/agr_demo/ledger", operatorKey);
    expect(ledger.body).toMatchObject({ ledger_sequence: 1, entries: [{ outcome: "allowed", amount: 12.5 }] });
  });
});
