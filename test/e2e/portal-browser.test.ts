/**
 * The principal's portal in a real browser (headless Debian Chromium through playwright-core):
 * the demo principal asks for a sign-in link with the keyboard, opens it from the dev mailbox,
 * continues, sees the demo agreement with its remaining budget and its ledger, revokes the demo
 * delegation (a dialog asks first; at phone width too), and a verify then answers DENY; signing out ends the session.
 * Screenshots: docs/screenshots/portal-*.png (written with WRIT_UPDATE_SCREENSHOTS=1).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEMO_PRINCIPAL_EMAIL } from "../../src/core/demo/seed.js";
import { launchBrowser, type TestBrowser } from "../helpers/browser.js";
import { startRegistryWorld, type RegistryWorld } from "../helpers/registry-client.js";

let w: RegistryWorld;
let browser: TestBrowser;
let operatorKey: string;

beforeAll(async () => {
  w = await startRegistryWorld({ BUR_ALLOW_DEMO_SEED: "1", BUR_DEV_MAILBOX: "1" });
  operatorKey = (await w.call("POST", "/v1/admin/seed-demo", w.admin)).body.operator_key as string;
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
  await w?.close();
});

const verify = (actionId: string) =>
  w.call("POST", "/v1/verify", operatorKey, {
    agent_id: "agent_demo",
    action: { action_id: actionId, action_type: "purchase", amount: 12.5, currency: "USD", proposed_at: new Date().toISOString(), merchant: "Corner Market" },
  });

describe("the portal in a browser", () => {
  it("signs in through the dev mailbox, shows the demo agreement and what is left, revokes, and verify then answers DENY", async () => {
    expect((await verify("act_browser_1")).body.verdict).toBe("ALLOW");
    const { page } = browser;

    // Sign in: a labelled e-mail field, submitted with Enter.
    await page.goto(`${w.server.url}/portal/sign-in`);
    await page.getByLabel("E-mail address").fill(DEMO_PRINCIPAL_EMAIL);
    await page.keyboard.press("Enter");
    await expect.poll(() => page.getByRole("status").textContent()).toContain(`If ${DEMO_PRINCIPAL_EMAIL} can sign in, a sign-in link is on its way`);
    const mailboxLink = page.getByRole("link", { name: "open the sign-in link it holds" });
    await mailboxLink.waitFor();
    // The link the page offers is the one the dev mailbox holds.
    const mail = await w.call("GET", "/v1/dev/mailbox");
    expect(mail.body.email).toBe(DEMO_PRINCIPAL_EMAIL);
    expect(await mailboxLink.getAttribute("href")).toBe(mail.body.link);
    await browser.screenshot("portal-sign-in");
    await mailboxLink.click();
    // The token left the address bar; the focused Continue button takes Enter.
    const proceed = page.getByRole("button", { name: "Continue signing in" });
    await proceed.waitFor();
    expect(page.url()).toBe(`${w.server.url}/portal/sign-in`);
    await expect.poll(() => page.evaluate<string | undefined>("document.activeElement?.id")).toBe("continue");
    await page.keyboard.press("Enter");

    // The portal: the demo agreement with its state and remaining budget.
    await page.waitForURL(`${w.server.url}/portal/`);
    const agreementRow = page.locator("#agreements tbody tr", { hasText: "agr_demo" });
    await agreementRow.waitFor();
    expect(await page.locator("#who").textContent()).toBe(`Signed in as ${DEMO_PRINCIPAL_EMAIL} (prn_demo)`);
    const agreementText = await agreementRow.textContent();
    expect(agreementText).toContain("active");
    expect(agreementText).toContain("delegation del_demo: 487.50 of 500.00 USD left, at most 50.00 a payment");
    const delegationRow = page.locator("#delegations tbody tr", { hasText: "del_demo" });
    expect(await delegationRow.textContent()).toContain("487.50 of 500.00 USD left");
    expect(await page.locator("#agents tbody tr", { hasText: "agent_demo" }).textContent()).toContain("self_declared");
    await browser.screenshot("portal-records", { fullPage: true });

    // The ledger: the allowed payment.
    await page.getByRole("button", { name: "Show the ledger of agr_demo" }).click();
    const entry = page.locator("#ledger-entries tbody tr", { hasText: "act_browser_1" });
    await entry.waitFor();
    expect(await entry.textContent()).toContain("12.5 USD");
    expect(await page.locator("#ledger-summary").textContent()).toMatch(/^1 entry; head sha256:[0-9a-f]{64}\.$/);
    await browser.screenshot("portal-ledger", { fullPage: true });

    // A phone (390 px): nothing overflows sideways, and Revoke is on the screen.
    await page.setViewportSize({ width: 390, height: 844 });
    expect(await page.evaluate<number>("document.documentElement.scrollWidth")).toBeLessThanOrEqual(390);
    const revokeButton = page.getByRole("button", { name: "Revoke delegation del_demo" });
    await revokeButton.scrollIntoViewIfNeeded();
    const box = await revokeButton.boundingBox();
    expect(box && box.x >= 0 && box.x + box.width <= 390).toBe(true);
    expect(await delegationRow.locator("td", { hasText: "487.50" }).getAttribute("data-label")).toBe("Remaining budget");
    await browser.screenshot("portal-phone", { fullPage: true });

    // Revoke asks first: "Keep it" (focused, so Enter keeps it) changes nothing, and says so.
    await revokeButton.click();
    const dialog = page.getByRole("dialog", { name: "Revoke this delegation?" });
    await dialog.waitFor();
    expect(await dialog.textContent()).toContain("Revoke delegation del_demo? Every payment under it");
    await page.keyboard.press("Enter");
    await expect.poll(() => page.getByRole("status").textContent()).toBe("Delegation del_demo was not revoked.");
    expect(await dialog.isVisible()).toBe(false);
    expect((await verify("act_browser_kept")).body.verdict).toBe("ALLOW");
    await page.setViewportSize({ width: 1280, height: 860 });

    // Confirmed, it revokes; the page says so and the row shows it.
    await revokeButton.click();
    await dialog.getByRole("button", { name: "Revoke" }).click();
    await expect
      .poll(() => page.getByRole("status").textContent())
      .toMatch(/^Delegation del_demo is revoked; agreements agr_demo allow no more payments \(transparency log entry \d+\)\.$/);
    await expect.poll(() => delegationRow.textContent()).toContain("revoked by principal");
    expect(await agreementRow.textContent()).toContain("revoked through delegation del_demo");
    expect(await page.getByRole("button", { name: "Revoke delegation del_demo" }).isDisabled()).toBe(true);
    await browser.screenshot("portal-revoked", { fullPage: true });

    const refused = await verify("act_browser_2");
    expect(refused.body).toMatchObject({ verdict: "DENY", svc_decision: "BLOCK" });
    expect(refused.body.reasons).toContain("DELEGATION_REVOKED");
    expect((await w.call("GET", "/v1/delegations/del_demo", operatorKey)).body).toMatchObject({ status: "revoked", revocation: { by: "principal" } });

    // Sign out: the session ends for good.
    const session = await page.evaluate<string | null>('sessionStorage.getItem("writ.session")');
    expect(session).toMatch(/^bps_/);
    await page.getByRole("button", { name: "Sign out" }).click();
    await expect.poll(() => page.getByRole("status").textContent()).toBe("You are signed out.");
    expect(await page.evaluate<string | null>('sessionStorage.getItem("writ.session")')).toBeNull();
    expect((await w.call("GET", "/v1/portal/me", session)).status).toBe(401);
  });
});
