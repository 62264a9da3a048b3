/**
 * Approvals of a STEP_UP over real HTTP (issue 32; docs/reference/approvals.md): a grant whose
 * principal must be present above 20 USD ("human present"); a payment of 30 steps up and
 * opens an approval bound to its request; the principal decides with its key (`writ approval
 * sign`'s JWS); the agent's retry of the same request completes. Refusals each say why and
 * spend nothing. (Passkey decisions: test/e2e/approvals-browser.test.ts.)
 */
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { APPROVAL_TYP, decisionPayload, type ApprovalContent, type ApprovalDecision } from "../../src/core/approvals/index.js";
import { canonicalJson } from "../../src/core/canonical/index.js";
import { signJws, signRecord, type Signer } from "../../src/core/jose/index.js";
import { approvalGroup } from "../../src/cli/approval/index.js";
import { otherKey, principalKey } from "../fixtures/records.js";
import { runVerb } from "../unit/cli/capture.js";
import { keyFiles, tempDir, writeDoc } from "../unit/cli/fixtures.js";
import { action, mandate, startVerifyWorld, storeAgreement, type VerifyWorld } from "../helpers/verify-world.js";

let w: VerifyWorld;
let agentId: string;
let agreementId: string;

const PRESENT_ABOVE_20 = [{ type: "principal_present", above_amount: 20, currency: "USD" }];

beforeAll(async () => {
  w = await startVerifyWorld();
  agentId = (await w.registerAgent(w.operatorKey, { principal_id: "prn_approvals" })).agent_id;
  ({ agreementId } = await storeAgreement(w, {
    mandates: [mandate(agentId, "i1", { cumulative_maximum: 1000 })],
    delegation: { scope: { maximum_amount: 100 }, over: { conditions: PRESENT_ABOVE_20 as never } },
  }));
  // A subscriber of the agent (the principal's wallet app, say).
  const sub = await w.call("POST", "/v1/subscriptions", w.psp.key, { agent_id: agentId, webhook_url: "http://localhost:9/hook" });
  expect(sub.status).toBe(201);
});
afterAll(async () => w?.close());

const pay = (over: Record<string, unknown> = {}) => action({ amount: 30, merchant: "Corner Market", ...over });
const verify = (a: Record<string, unknown>) => w.verify({ agent_id: agentId, action: a });
const approval = (id: string, token: string | null = w.operatorKey) => w.call("GET", `/v1/approvals/${id}`, token);
const sign = async (content: ApprovalContent, decision: ApprovalDecision, signer: Signer = principalKey) =>
  signRecord(decisionPayload(content, decision), signer, APPROVAL_TYP);
const decide = (id: string, decision: ApprovalDecision, signature: unknown) => w.call("POST", `/v1/approvals/${id}/decision`, null, { decision, signature });
const spentRows = async () => Number((await w.db.pool.query("SELECT count(*)::int AS n FROM ledger_entries WHERE agreement_id = $1", [agreementId])).rows[0].n);

/** Opens an approval for a new 30 USD payment; the action and the pending approval. */
async function opened(over: Record<string, unknown> = {}): Promise<{ act: Record<string, unknown>; id: string; content: ApprovalContent }> {
  const act = pay(over);
  const r = await verify(act);
  expect(r.status).toBe(200);
  expect(r.body).toMatchObject({ verdict: "STEP_UP", svc_decision: "STEP_UP", required_action: "PRINCIPAL_CONFIRMATION", approval_status: "pending" });
  const id = r.body.approval_id as string;
  const got = await approval(id);
  expect(got.status).toBe(200);
  return { act, id, content: got.body.content as ApprovalContent };
}

describe("a STEP_UP the principal approves with its key", () => {
  it("opens an approval bound to the request, the principal signs it, and the retry is ALLOWed once with its ledger entry", async () => {
    // Human not present: 10 USD needs nobody.
    expect((await verify(action({ amount: 10 }))).body.verdict).toBe("ALLOW");
    const before = await spentRows();
    const act = pay();
    const first = await verify(act);
    // The STEP_UP as before (reasons and required_action unchanged), plus the approval's members.
    expect(first.body.reasons).toEqual(["PRINCIPAL_NOT_PRESENT"]);
    expect(first.body.approval_id).toMatch(/^apr_[0-9a-f]{24}$/);
    expect(first.body.approval_url).toBe(`${w.server.url.replace("127.0.0.1", "localhost")}/portal/approvals#${String(first.body.approval_id)}`);
    expect(first.body.confirmation_text).toBe(`Approve purchase of 30 USD to Corner Market by agent ${agentId} (action ${String(act.action_id)})?`);
    const id = first.body.approval_id as string;

    // The agent polls; a retry while pending is the same STEP_UP and the same approval.
    const polled = await approval(id);
    expect(polled.body).toMatchObject({
      status: "pending",
      agent_id: agentId,
      agreement_id: agreementId,
      amount: 30,
      currency: "USD",
      merchant: "Corner Market",
      used: false,
    });
    expect((await verify(act)).body).toMatchObject({ verdict: "STEP_UP", approval_id: id });
    expect(await spentRows()).toBe(before);

    // The subscribers are told an approval waits.
    const { rows } = await w.db.pool.query("SELECT payload FROM webhook_outbox WHERE event_id = $1", [`evt_${id}`]);
    expect(rows.map((r) => (r as { payload: Record<string, unknown> }).payload)).toEqual([
      expect.objectContaining({
        type: "approval_waiting",
        agent_id: agentId,
        details: expect.objectContaining({ approval_id: id, confirmation_text: first.body.confirmation_text }),
      }),
    ]);

    // The principal approves with the grant's principal key.
    const content = polled.body.content as ApprovalContent;
    const decided = await decide(id, "approve", await sign(content, "approve"));
    expect(decided.status).toBe(200);
    expect(decided.body).toMatchObject({ status: "approved", decided_with: { method: "principal_key" } });
    // The decision is a transparency-log entry of the agreement.
    const entry = await w.call("GET", `/v1/log/entries/${String(decided.body.log_sequence)}`);
    expect(entry.body.entry).toMatchObject({
      kind: "agreement",
      body: {
        event: "approval",
        decision: "approved",
        approval_id: id,
        agreement_id: agreementId,
        request_hash: content.request_hash,
        method: "principal_key",
      },
    });

    // The retry completes: ALLOW with its ledger entry; the approval is used; a retry gets the same answer.
    const allowed = await verify(act);
    expect(allowed.body).toMatchObject({ verdict: "ALLOW", approval_id: id, ledger_entry: { sequence: expect.any(Number) } });
    expect(await spentRows()).toBe(before + 1);
    expect((await approval(id)).body).toMatchObject({ status: "approved", used: true });
    expect((await verify(act)).body.ledger_entry).toEqual(allowed.body.ledger_entry);
    expect(await spentRows()).toBe(before + 1);
    // A second decision is refused.
    expect((await decide(id, "decline", await sign(content, "decline"))).status).toBe(409);
  });

  it("declined: the retry is DENY APPROVAL_DECLINED and nothing is spent", async () => {
    const { act, id, content } = await opened();
    const before = await spentRows();
    expect((await decide(id, "decline", await sign(content, "decline"))).body).toMatchObject({ status: "declined" });
    const r = await verify(act);
    expect(r.body).toMatchObject({ verdict: "DENY", svc_decision: "BLOCK", reasons: ["APPROVAL_DECLINED"], approval_id: id, approval_status: "declined" });
    expect(await spentRows()).toBe(before);
  });
});

describe("an approval never authorizes more than its request", () => {
  it("is not replayed for a second payment: the same request with a new action_id opens its own approval", async () => {
    const { act, id, content } = await opened();
    expect((await decide(id, "approve", await sign(content, "approve"))).status).toBe(200);
    const before = await spentRows();
    const second = await verify({ ...act, action_id: `${String(act.action_id)}-again` });
    expect(second.body).toMatchObject({ verdict: "STEP_UP", approval_status: "pending" });
    expect(second.body.approval_id).not.toBe(id);
    expect(await spentRows()).toBe(before);
  });

  it("refuses another amount or merchant under the approved action_id (409, nothing spent), and then still ALLOWs only the approved request", async () => {
    const { act, id, content } = await opened();
    expect((await decide(id, "approve", await sign(content, "approve"))).status).toBe(200);
    const before = await spentRows();
    for (const changed of [
      { ...act, amount: 31 },
      { ...act, merchant: "Other Shop" },
    ]) {
      const r = await verify(changed);
      expect(r.status).toBe(409);
      expect(r.body.error).toContain("was already used by a different request");
    }
    expect(await spentRows()).toBe(before);
    expect((await verify(act)).body.verdict).toBe("ALLOW");
  });

  it("refuses a decision after expiry (409) and the retry is DENY APPROVAL_EXPIRED", async () => {
    const { act, id, content } = await opened();
    await w.db.pool.query("UPDATE approvals SET expires_at = now() - interval '1 second' WHERE approval_id = $1", [id]);
    const late = await decide(id, "approve", await sign(content, "approve"));
    expect(late.status).toBe(409);
    expect(late.body.error).toBe(`approval ${id} is expired: it can no longer be decided`);
    const before = await spentRows();
    expect((await verify(act)).body).toMatchObject({ verdict: "DENY", reasons: ["APPROVAL_EXPIRED"] });
    expect(await spentRows()).toBe(before);
  });

  it("refuses signatures by another key, over another amount or decision, of another typ, or over a non-canonical payload (401, each saying why)", async () => {
    const { id, content } = await opened();
    const cases: Array<[unknown, ApprovalDecision, string]> = [
      [await sign(content, "approve", otherKey), "approve", "JWS kid does not name the verifying key"],
      [await sign({ ...content, amount: 3 }, "approve"), "approve", "JWS payload is not the canonical bytes of the signed record"],
      [await sign(content, "decline"), "approve", "JWS payload is not the canonical bytes of the signed record"],
      [await signRecord(decisionPayload(content, "approve"), principalKey, "writ-other+jws"), "approve", "typ"],
      [
        await signJws(Buffer.from(JSON.stringify(decisionPayload(content, "approve"), null, 1)), principalKey, APPROVAL_TYP),
        "approve",
        "not the RFC 8785 canonical form",
      ],
    ];
    // The canonical text differs from the indented one (so the last case is a real non-canonical payload).
    expect(canonicalJson(decisionPayload(content, "approve"))).not.toBe(JSON.stringify(decisionPayload(content, "approve"), null, 1));
    for (const [signature, decision, why] of cases) {
      const r = await decide(id, decision, signature);
      expect(r.status, why).toBe(401);
      expect(r.body.error).toContain("approval signature did not verify");
      expect(r.body.error).toContain(why);
    }
    expect((await approval(id)).body.status).toBe("pending");
  });

  it("checks the budget again at the retry: spent meanwhile, the approved payment is DENY and nothing is spent", async () => {
    const { agent_id } = await w.registerAgent(w.operatorKey, { principal_id: "prn_budget" });
    const { agreementId: agr } = await storeAgreement(w, {
      mandates: [mandate(agent_id, "i1", { cumulative_maximum: 40 })],
      delegation: { scope: { maximum_amount: 100 }, over: { conditions: PRESENT_ABOVE_20 as never } },
    });
    const act = pay();
    const id = (await w.verify({ agent_id, action: act })).body.approval_id as string;
    const content = (await approval(id)).body.content as ApprovalContent;
    expect((await decide(id, "approve", await sign(content, "approve"))).status).toBe(200);
    // Meanwhile the agent spends 15 alone (below the threshold): 30 more would pass 40.
    expect((await w.verify({ agent_id, action: action({ amount: 15 }) })).body.verdict).toBe("ALLOW");
    const r = await w.verify({ agent_id, action: act });
    expect(r.body).toMatchObject({ verdict: "DENY", svc_decision: "BLOCK", approval_id: id });
    expect(r.body.reasons).toContain("CUMULATIVE_BUDGET_EXCEEDED");
    // A further retry gets that stored answer, still naming the approval.
    expect((await w.verify({ agent_id, action: act })).body).toMatchObject({ verdict: "DENY", approval_id: id });
    const n = (await w.db.pool.query("SELECT count(*)::int AS n FROM ledger_entries WHERE agreement_id = $1", [agr])).rows[0] as { n: number };
    expect(n.n).toBe(1);
  });

  it("never ALLOWs a request that differs from the approved one in any member (property)", async () => {
    const { act, id, content } = await opened();
    expect((await decide(id, "approve", await sign(content, "approve"))).status).toBe(200);
    const before = await spentRows();
    const change = fc.oneof(
      fc.record({ amount: fc.oneof(fc.constant(30.01), fc.constant(29.99), fc.integer({ min: 0, max: 99 })) }),
      fc.record({ merchant: fc.string({ minLength: 1, maxLength: 12 }) }),
      fc.record({ currency: fc.constantFrom("EUR", "GBP") }),
      fc.record({ category: fc.string({ minLength: 1, maxLength: 8 }) }),
      fc.record({ item: fc.string({ minLength: 1, maxLength: 8 }) }),
      fc.record({ action_type: fc.constantFrom("refund", "subscribe") }),
      fc.record({ proposed_at: fc.integer({ min: 1, max: 120 }).map((s) => new Date(Date.parse(String(act.proposed_at)) + s * 1000).toISOString()) }),
    );
    await fc.assert(
      fc.asyncProperty(change, async (c) => {
        fc.pre(Object.entries(c).some(([k, v]) => act[k] !== v));
        const r = await verify({ ...act, ...c });
        expect(r.body.verdict).not.toBe("ALLOW");
        expect(r.status).toBe(409);
      }),
      { numRuns: 25 },
    );
    expect(await spentRows()).toBe(before);
    // The approved request itself still completes, once.
    expect((await verify(act)).body.verdict).toBe("ALLOW");
    expect(await spentRows()).toBe(before + 1);
  });

  it("answers 404 to another organization polling the approval", async () => {
    const { id } = await opened();
    const other = await w.createOrg("agent_operator");
    const { token } = await w.issueKey(other);
    expect((await approval(id, token)).status).toBe(404);
  });
});

describe("writ approval sign", () => {
  it("signs the approval's content with the principal's ES256 key, shows the text, and submits: the retry is ALLOWed", async () => {
    const dir = tempDir();
    const principal = keyFiles(dir, "principal", "ES256");
    const { agent_id } = await w.registerAgent(w.operatorKey, { principal_id: "prn_system" });
    await storeAgreement(w, {
      mandates: [mandate(agent_id, "i1")],
      signer: principal.signer,
      delegation: { scope: { maximum_amount: 100 }, over: { conditions: PRESENT_ABOVE_20 as never } },
    });
    const act = pay();
    const first = await w.verify({ agent_id, action: act });
    const id = first.body.approval_id as string;
    const file = writeDoc(dir, "approval.json", (await approval(id)).body);

    // Offline: the body to post, over exactly the canonical content plus the decision.
    const offline = await runVerb(approvalGroup, ["sign", "--in", file, "--key-file", principal.privateFile]);
    expect(offline.code).toBe(0);
    expect(offline.err).toContain(`approving ${id}: ${String(first.body.confirmation_text)}`);
    const body = JSON.parse(offline.out) as { decision: string; signature: { protected: string } };
    expect(body.decision).toBe("approve");
    expect(JSON.parse(Buffer.from(body.signature.protected, "base64url").toString())).toMatchObject({ alg: "ES256", typ: APPROVAL_TYP });

    // Not an approval: refused.
    const wrong = await runVerb(approvalGroup, ["sign", "--in", writeDoc(dir, "x.json", { hello: 1 }), "--key-file", principal.privateFile]);
    expect(wrong.code).toBe(1);
    expect(wrong.err).toContain("not an approval's content");

    const submitted = await runVerb(approvalGroup, ["sign", "--in", file, "--key-file", principal.privateFile, "--server", w.server.url]);
    expect(submitted.code, submitted.err).toBe(0);
    expect(JSON.parse(submitted.out)).toMatchObject({ approval_id: id, status: "approved", decided_with: { method: "principal_key" } });
    expect((await w.verify({ agent_id, action: act })).body).toMatchObject({ verdict: "ALLOW", approval_id: id });
    // A second submission: the server refuses, the verb says why.
    const again = await runVerb(approvalGroup, ["sign", "--in", file, "--key-file", principal.privateFile, "--server", w.server.url, "--decline"]);
    expect(again.code).toBe(1);
    expect(again.err).toContain(`409 approval ${id} is approved: it can no longer be decided`);
  });
});
