/**
 * Approvals with a passkey in a real browser (headless Debian Chromium through playwright-core,
 * with the DevTools Protocol's virtual authenticator: `WebAuthn.addVirtualAuthenticator`,
 * internal, user verification): the principal signs in, registers a passkey, sees the pending
 * approval with exactly its confirmation text, approves; the agent's retry is ALLOW and the
 * ledger has its entry. Declining gives DENY. Refused with a reason, nothing spent: another
 * principal's approval, an assertion of another principal's passkey, an assertion without
 * user verification. Screenshot: docs/screenshots/portal-approval.png (WRIT_UPDATE_SCREENSHOTS=1).
 *
 * The page is opened at http://localhost:<port> (WebAuthn needs a host name, not an address):
 * the service's principal-facing URL on a loopback listener (src/api/routes/approvals).
 */
import type { CDPSession } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchBrowser, type TestBrowser } from "../helpers/browser.js";
import { action, mandate, startVerifyWorld, storeAgreement, type VerifyWorld } from "../helpers/verify-world.js";

let w: VerifyWorld;
let browser: TestBrowser;
let cdp: CDPSession;
let authenticatorId: string;
let base: string;

beforeAll(async () => {
  w = await startVerifyWorld({ BUR_DEV_MAILBOX: "1" });
  base = w.server.url.replace("127.0.0.1", "localhost");
  browser = await launchBrowser();
  cdp = await browser.context.newCDPSession(browser.page);
  await cdp.send("WebAuthn.enable");
  ({ authenticatorId } = await cdp.send("WebAuthn.addVirtualAuthenticator", {
    options: {
      protocol: "ctap2",
      transport: "internal",
      hasResidentKey: true,
      hasUserVerification: true,
      isUserVerified: true,
      automaticPresenceSimulation: true,
    },
  }));
});
afterAll(async () => {
  await browser?.close();
  await w?.close();
});

/** Signs `email` in, in the browser tab (through the dev mailbox's link); its principal id and session. */
async function signIn(email: string): Promise<{ principalId: string; session: string }> {
  const { page } = browser;
  expect((await w.call("POST", "/v1/portal/magic-link", null, { email })).status).toBe(200);
  // Mail is sent after the answer: wait (bounded) until the mailbox holds this address's link.
  await expect.poll(async () => (await w.call("GET", "/v1/dev/mailbox")).body.email, { timeout: 10_000 }).toBe(email);
  const link = (await w.call("GET", "/v1/dev/mailbox")).body.link as string;
  await page.goto(link.replace(w.server.url, base));
  await page.getByRole("button", { name: "Continue signing in" }).click();
  await page.waitForURL(`${base}/portal/`);
  const session = (await page.evaluate<string | null>('sessionStorage.getItem("writ.session")')) ?? "";
  const me = await w.call("GET", "/v1/portal/me", session);
  return { principalId: me.body.principal_id as string, session };
}

/** A new agent of `principalId` whose grant needs the principal above 20 USD; verify for it. */
async function agentOf(
  principalId: string,
): Promise<{ agentId: string; agreementId: string; verify: (a: Record<string, unknown>) => ReturnType<VerifyWorld["verify"]> }> {
  const { agent_id: agentId } = await w.registerAgent(w.operatorKey, { principal_id: principalId });
  const { agreementId } = await storeAgreement(w, {
    mandates: [mandate(agentId, "i1", { cumulative_maximum: 100 })],
    delegation: { scope: { maximum_amount: 100 }, over: { conditions: [{ type: "principal_present", above_amount: 20, currency: "USD" }] as never } },
  });
  return { agentId, agreementId, verify: (a) => w.verify({ agent_id: agentId, action: a }) };
}

const ledgerCount = async (agreementId: string) =>
  Number((await w.db.pool.query("SELECT count(*)::int AS n FROM ledger_entries WHERE agreement_id = $1", [agreementId])).rows[0].n);

async function registerPasskey(): Promise<void> {
  const { page } = browser;
  await page.goto(`${base}/portal/approvals`);
  await page.getByRole("button", { name: "Register a passkey" }).click();
  await expect.poll(() => page.getByRole("status").textContent(), { timeout: 10_000 }).toBe("Your passkey is registered.");
}

describe("approving a payment with a passkey", () => {
  it("signs in, registers a passkey, shows the approval's text, approves: the retry is ALLOW with its ledger entry; declining gives DENY", async () => {
    const { page } = browser;
    const alice = await signIn("alice@example.test");
    await registerPasskey();
    await expect.poll(() => page.locator("#passkeys").textContent()).toBe("You have 1 passkey.");
    const { agentId, agreementId, verify } = await agentOf(alice.principalId);

    const act = action({ amount: 30, merchant: "Corner Market" });
    const stepUp = await verify(act);
    expect(stepUp.body).toMatchObject({ verdict: "STEP_UP", approval_status: "pending" });
    const url = stepUp.body.approval_url as string;
    expect(url.startsWith(`${base}/portal/approvals#apr_`)).toBe(true);

    // The page shows exactly the text the approval signs.
    await page.goto(url);
    const item = page.locator(`li#${String(stepUp.body.approval_id)}`);
    await item.waitFor();
    expect(await item.locator("blockquote").textContent()).toBe(stepUp.body.confirmation_text);
    expect(stepUp.body.confirmation_text).toBe(`Approve purchase of 30 USD to Corner Market by agent ${agentId} (action ${String(act.action_id)})?`);
    await browser.screenshot("portal-approval", { fullPage: true });

    const before = await ledgerCount(agreementId);
    await item.getByRole("button", { name: `Approve ${String(stepUp.body.approval_id)}` }).click();
    await expect
      .poll(() => page.getByRole("status").textContent())
      .toMatch(new RegExp(`^Approval ${String(stepUp.body.approval_id)} is approved \\(transparency log entry \\d+\\)\\.$`));
    const polled = await w.call("GET", `/v1/approvals/${String(stepUp.body.approval_id)}`, w.operatorKey);
    expect(polled.body).toMatchObject({ status: "approved", decided_with: { method: "passkey" } });

    const allowed = await verify(act);
    expect(allowed.body).toMatchObject({ verdict: "ALLOW", approval_id: stepUp.body.approval_id, ledger_entry: { sequence: expect.any(Number) } });
    expect(await ledgerCount(agreementId)).toBe(before + 1);
    const ledger = await w.call("GET", `/v1/agreements/${agreementId}/ledger`, w.operatorKey);
    expect(ledger.status).toBe(200);
    expect(ledger.body.entries).toContainEqual(
      expect.objectContaining({
        action_id: act.action_id,
        amount: 30,
        outcome: "allowed",
        sequence: (allowed.body.ledger_entry as { sequence: number }).sequence,
      }),
    );

    // Declined: DENY, nothing spent.
    const act2 = action({ amount: 25, merchant: "Corner Market" });
    const second = await verify(act2);
    await page.goto(second.body.approval_url as string);
    const item2 = page.locator(`li#${String(second.body.approval_id)}`);
    await item2.getByRole("button", { name: `Decline ${String(second.body.approval_id)}` }).click();
    await expect.poll(() => page.getByRole("status").textContent()).toMatch(/ is declined /);
    expect((await verify(act2)).body).toMatchObject({ verdict: "DENY", reasons: ["APPROVAL_DECLINED"] });
    expect(await ledgerCount(agreementId)).toBe(before + 1);
  });

  it("refuses another principal, another principal's passkey and an assertion without user verification; nothing is spent", async () => {
    const { page } = browser;
    // Bob has a passkey on the same authenticator; Carol's approval is not his.
    const bob = await signIn("bob@example.test");
    await registerPasskey();
    const bobKeys = (await w.db.pool.query("SELECT credential_id FROM principal_passkeys WHERE principal_id = $1", [bob.principalId])).rows as Array<{
      credential_id: string;
    }>;
    const carol = await signIn("carol@example.test");
    const { agreementId, verify } = await agentOf(carol.principalId);
    const act = action({ amount: 40, merchant: "Corner Market" });
    const id = (await verify(act)).body.approval_id as string;
    expect((await w.call("POST", `/v1/portal/approvals/${id}/options`, bob.session, { decision: "approve" })).status).toBe(404);

    await page.goto(`${base}/portal/approvals#${id}`);
    await page.locator(`li#${id}`).waitFor();
    /** Asks the service for Carol's options, changes them as told, asserts in the browser, and posts the assertion. */
    const attempt = (change: string) =>
      page.evaluate(
        async ({ id, change, bobKey }) => {
          const session = (globalThis as unknown as { sessionStorage: { getItem(k: string): string | null } }).sessionStorage.getItem("writ.session");
          const call = async (path: string, body: unknown) => {
            const r = await fetch(path, {
              method: "POST",
              headers: { authorization: `Bearer ${String(session)}`, "content-type": "application/json" },
              body: JSON.stringify(body),
            });
            return { status: r.status, body: (await r.json()) as Record<string, unknown> };
          };
          const options = (await call(`/v1/portal/approvals/${id}/options`, { decision: "approve" })).body;
          if (change === "bob") options.allowCredentials = [{ id: bobKey, type: "public-key" }];
          if (change === "no-uv") options.userVerification = "discouraged";
          const lib = (globalThis as unknown as { SimpleWebAuthnBrowser: { startAuthentication(o: unknown): Promise<unknown> } }).SimpleWebAuthnBrowser;
          const response = await lib.startAuthentication({ optionsJSON: options });
          return call(`/v1/portal/approvals/${id}/passkey-decision`, { decision: "approve", response });
        },
        { id, change, bobKey: bobKeys[0]?.credential_id ?? "" },
      );

    // Bob's passkey (on this very authenticator) is not Carol's.
    await registerPasskey();
    const byBob = await attempt("bob");
    expect(byBob.status).toBe(401);
    expect(byBob.body.error).toBe("the assertion is not from a passkey of this principal");

    await cdp.send("WebAuthn.setUserVerified", { authenticatorId, isUserVerified: false });
    const noUv = await attempt("no-uv");
    await cdp.send("WebAuthn.setUserVerified", { authenticatorId, isUserVerified: true });
    expect(noUv.status).toBe(401);
    expect(noUv.body.error).toMatch(/^passkey assertion refused: .*user/i);

    const before = await ledgerCount(agreementId);
    expect((await w.call("GET", `/v1/approvals/${id}`, w.operatorKey)).body.status).toBe("pending");
    expect((await verify(act)).body.verdict).toBe("STEP_UP");
    expect(await ledgerCount(agreementId)).toBe(before);
  });
});
