/**
 * Subscriber alerts: their shape, the checks `enqueueAlert` applies, and the signature.
 *
 * Wire format (the POST body a subscriber receives):
 *   `{svc_bureau_alert: 1, event_id, type, agent_id, at, subscription_id, details, signature}`
 * where `signature` is a flattened JWS by the log signing key (SVC_LOG_SIGNING_SEED, published
 * in `/.well-known/svc-keys.json`) with protected `typ: "svc-bureau-alert+jws"` (and `alg`,
 * `kid`), whose payload is EXACTLY the RFC 8785 canonical JSON (UTF-8) of the body without the
 * `signature` member. Every other member is therefore signed.
 *
 * Promise: `signAlert` and `verifyAlert` are inverse; `verifyAlert` accepts only a body whose
 * signature verifies with the given key, whose payload equals the body, and whose shape is an
 * alert. Signing is deterministic for Ed25519, so every retry carries identical bytes.
 */
import { canonicalBytes } from "../canonical/index.js";
import { signRecord, unsignedPart, verifySignedRecord, type JwsObject, type Signer } from "../jose/index.js";
import { hasNul } from "../schemas/index.js";
import { parseInstant } from "../time/index.js";
import { WebhookError } from "./errors.js";

/** The protected-header typ of an alert signature. */
export const ALERT_TYP = "svc-bureau-alert+jws";

/** The alert types: the spec's (revocation, new incident, score drop of 50 points or more) and an approval waiting for the principal (docs/reference/approvals.md). */
export const ALERT_TYPES = ["revocation", "incident", "score_drop", "approval_waiting"] as const;

/** An alert as the registry raises it. `event_id` names the event; it is the dedup key. */
export interface Alert {
  event_id: string;
  type: (typeof ALERT_TYPES)[number];
  agent_id: string;
  at: string;
  details: Record<string, unknown>;
}

/** What is stored in the outbox and signed: the alert for one subscription, without signature. */
export interface AlertPayload extends Alert {
  svc_bureau_alert: 1;
  subscription_id: string;
}

/** The body a subscriber receives. */
export interface SignedAlert extends AlertPayload {
  signature: JwsObject;
}

/** Longest event, agent and subscription id accepted (characters). */
export const MAX_ID_LENGTH = 256;
/** Largest canonical payload accepted by enqueueAlert (bytes). */
export const MAX_PAYLOAD_BYTES = 64 * 1024;

function invalid(message: string): WebhookError {
  return new WebhookError("ALERT_INVALID", message);
}

function id(v: unknown, name: string): string {
  if (typeof v !== "string" || v.length === 0 || v.length > MAX_ID_LENGTH) {
    throw invalid(`${name} must be a string of 1 to ${MAX_ID_LENGTH} characters`);
  }
  return v;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/**
 * The payload for `subscriptionId` from an untrusted alert; throws WebhookError ALERT_INVALID
 * naming the field. The result is canonical-JSON safe and at most MAX_PAYLOAD_BYTES.
 */
export function alertPayload(subscriptionId: string, alert: Alert): AlertPayload {
  if (!isPlainObject(alert)) throw invalid("alert must be an object");
  const type = alert.type as unknown;
  if (!ALERT_TYPES.includes(type as Alert["type"])) throw invalid(`type must be one of ${ALERT_TYPES.join(", ")}`);
  if (parseInstant(alert.at) === undefined) throw invalid("at must be an RFC 3339 date-time");
  if (!isPlainObject(alert.details)) throw invalid("details must be an object");
  const payload: AlertPayload = {
    svc_bureau_alert: 1,
    event_id: id(alert.event_id, "event_id"),
    type: type as Alert["type"],
    agent_id: id(alert.agent_id, "agent_id"),
    at: alert.at,
    subscription_id: id(subscriptionId, "subscription_id"),
    details: alert.details,
  };
  let bytes: Buffer;
  try {
    bytes = canonicalBytes(payload);
  } catch {
    throw invalid("details must be JSON (no undefined, functions, bigints or non-finite numbers)");
  }
  // Postgres jsonb cannot hold U+0000 in a string; refuse it here rather than fail the caller's commit.
  if (hasNul(payload)) throw invalid("alert must not contain U+0000");
  if (bytes.length > MAX_PAYLOAD_BYTES) throw invalid(`alert must be at most ${MAX_PAYLOAD_BYTES} bytes of canonical JSON`);
  return JSON.parse(bytes.toString("utf8")) as AlertPayload;
}

/** Signs a stored payload: the body to POST. */
export async function signAlert(payload: AlertPayload, signer: Signer): Promise<SignedAlert> {
  const unsigned = unsignedPart(payload as AlertPayload & { signature?: unknown }) as AlertPayload;
  const signature = await signRecord(unsigned, signer, ALERT_TYP);
  return { ...unsigned, signature };
}

/**
 * For receivers: verifies a received alert body (parsed JSON) against the public key from
 * `/.well-known/svc-keys.json` (a JWK; a `kid` member is allowed) and returns the alert
 * without its signature. Throws WebhookError ALERT_NOT_VERIFIED otherwise.
 */
export async function verifyAlert(body: unknown, publicJwk: unknown): Promise<AlertPayload> {
  if (!isPlainObject(body)) throw new WebhookError("ALERT_NOT_VERIFIED", "alert body must be a JSON object");
  const { signature, ...unsigned } = body;
  try {
    await verifySignedRecord(signature, publicJwk, { typ: ALERT_TYP, record: unsigned });
  } catch (e) {
    const why = e instanceof Error ? e.message : String(e);
    throw new WebhookError("ALERT_NOT_VERIFIED", `alert signature does not verify: ${why}`);
  }
  const ok =
    unsigned.svc_bureau_alert === 1 &&
    typeof unsigned.event_id === "string" &&
    ALERT_TYPES.includes(unsigned.type as Alert["type"]) &&
    typeof unsigned.agent_id === "string" &&
    typeof unsigned.at === "string" &&
    typeof unsigned.subscription_id === "string" &&
    isPlainObject(unsigned.details);
  if (!ok) throw new WebhookError("ALERT_NOT_VERIFIED", "signed body is not an alert");
  return unsigned as unknown as AlertPayload;
}
