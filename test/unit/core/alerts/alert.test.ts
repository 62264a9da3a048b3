import { describe, expect, it } from "vitest";
import { canonicalJson } from "../../../../src/core/canonical/index.js";
import { generateSigner, signJws } from "../../../../src/core/jose/index.js";
import { ALERT_TYP, alertPayload, signAlert, verifyAlert, type Alert } from "../../../../src/core/alerts/alert.js";
import { WebhookError } from "../../../../src/core/alerts/errors.js";

const alert: Alert = {
  event_id: "evt_1",
  type: "score_drop",
  agent_id: "agent-1",
  at: "2026-03-01T10:00:00Z",
  details: { from: 700, to: 640, reasons: ["CHARGEBACK"] },
};

async function expectCode(p: Promise<unknown> | (() => unknown), code: string) {
  try {
    await (typeof p === "function" ? p() : p);
  } catch (e) {
    expect(e).toBeInstanceOf(WebhookError);
    expect((e as WebhookError).code).toBe(code);
    return;
  }
  throw new Error("expected a WebhookError");
}

describe("alertPayload", () => {
  it("adds the version marker and the subscription", () => {
    expect(alertPayload("sub_1", alert)).toEqual({ svc_bureau_alert: 1, subscription_id: "sub_1", ...alert });
  });

  it("refuses malformed alerts with ALERT_INVALID", async () => {
    const bad: unknown[] = [
      { ...alert, type: "other" },
      { ...alert, at: "yesterday" },
      { ...alert, event_id: "" },
      { ...alert, event_id: "x".repeat(257) },
      { ...alert, agent_id: 5 },
      { ...alert, details: [] },
      { ...alert, details: { n: Number.NaN } },
      { ...alert, details: { s: "a\u0000b" } },
      { ...alert, details: { big: "x".repeat(70_000) } },
      null,
    ];
    for (const b of bad) await expectCode(() => alertPayload("sub_1", b as Alert), "ALERT_INVALID");
    await expectCode(() => alertPayload("", alert), "ALERT_INVALID");
  });
});

describe("signAlert / verifyAlert", () => {
  const signer = generateSigner();

  it("signs the canonical JSON of the body without signature, typ svc-bureau-alert+jws", async () => {
    const body = await signAlert(alertPayload("sub_1", alert), signer);
    const { signature, ...rest } = body;
    expect(Buffer.from(signature.payload, "base64url").toString("utf8")).toBe(canonicalJson(rest));
    const header = JSON.parse(Buffer.from(signature.protected, "base64url").toString("utf8")) as Record<string, unknown>;
    expect(header).toEqual({ alg: "EdDSA", kid: signer.kid, typ: ALERT_TYP });
    // A round trip through JSON text (what a receiver parses) still verifies, with a kid member on the key.
    const received = JSON.parse(JSON.stringify(body)) as unknown;
    expect(await verifyAlert(received, { ...signer.publicJwk, kid: signer.kid })).toEqual(rest);
  });

  it("is deterministic (every retry carries the same bytes)", async () => {
    const p = alertPayload("sub_1", alert);
    expect(JSON.stringify(await signAlert(p, signer))).toBe(JSON.stringify(await signAlert(p, signer)));
  });

  it("rejects tampering, another key, another typ and non-alerts", async () => {
    const body = await signAlert(alertPayload("sub_1", alert), signer);
    await expectCode(verifyAlert({ ...body, agent_id: "agent-2" }, signer.publicJwk), "ALERT_NOT_VERIFIED");
    await expectCode(verifyAlert({ ...body, details: { ...alert.details, to: 0 } }, signer.publicJwk), "ALERT_NOT_VERIFIED");
    await expectCode(verifyAlert({ ...body, extra: true }, signer.publicJwk), "ALERT_NOT_VERIFIED");
    await expectCode(verifyAlert(body, generateSigner().publicJwk), "ALERT_NOT_VERIFIED");
    const { signature: _s, ...unsigned } = body;
    await expectCode(verifyAlert(unsigned, signer.publicJwk), "ALERT_NOT_VERIFIED");
    const otherTyp = await signJws(canonicalJson(unsigned), signer, "svc-revocation-push+jws");
    await expectCode(verifyAlert({ ...unsigned, signature: otherTyp }, signer.publicJwk), "ALERT_NOT_VERIFIED");
    const notAlert = { hello: "world" };
    const signedNotAlert = { ...notAlert, signature: await signJws(canonicalJson(notAlert), signer, ALERT_TYP) };
    await expectCode(verifyAlert(signedNotAlert, signer.publicJwk), "ALERT_NOT_VERIFIED");
    await expectCode(verifyAlert("nope", signer.publicJwk), "ALERT_NOT_VERIFIED");
  });
});
