/**
 * An approval as the routes answer it: its JSON schema and body, the principal-facing URL,
 * and recording a decision (stored with its evidence and written to the transparency log).
 */
import type { FastifyInstance } from "fastify";
import { approvalStatus, decisionPayload, type ApprovalDecision } from "../../../core/approvals/index.js";
import { canonicalBytes, sha256Hash } from "../../../core/canonical/index.js";
import { decideApproval, findApproval, type DecisionEvidence, type StoredApproval, appendLogEntries, withTransaction } from "../../../store/index.js";
import type { ApprovalOptions } from "../../../verify/index.js";
import { ApiError } from "../../errors.js";
import { logAppendOptions, logSignerOf } from "../shared/registry-log.js";
import { listeningBaseUrl } from "../portal/magic-link.js";

/** The page where the principal decides (`#<approval_id>` names the approval). */
export const APPROVALS_PAGE = "/portal/approvals";

/** The service's public base URL (WRIT_PUBLIC_BASE_URL), else `http://localhost:<port>` for a loopback listener (WebAuthn needs a host name). */
export function principalBaseUrl(app: FastifyInstance): string {
  const set = app.settings.portal.publicBaseUrl;
  if (set !== null) return set;
  return listeningBaseUrl(app.server.address()).replace(/^http:\/\/(127\.0\.0\.1|\[::1\])(?=[:/]|$)/, "http://localhost");
}

/** What verify needs to open approvals (the verify route passes it). */
export function approvalOptionsOf(app: FastifyInstance): ApprovalOptions {
  return { ttlSeconds: app.settings.portal.approvalTtlSeconds, urlOf: (id) => `${principalBaseUrl(app)}${APPROVALS_PAGE}#${id}` };
}

const str = { type: "string" } as const;

/** The JSON schema of an approval's answer. */
export const APPROVAL_SCHEMA = {
  type: "object",
  required: [
    "approval_id",
    "status",
    "agent_id",
    "agreement_id",
    "action_id",
    "request_hash",
    "amount",
    "currency",
    "confirmation_text",
    "reasons",
    "created_at",
    "expires_at",
    "approval_url",
    "content",
  ],
  properties: {
    approval_id: str,
    status: { type: "string", enum: ["pending", "approved", "declined", "expired"] },
    agent_id: str,
    agreement_id: str,
    action_id: str,
    request_hash: str,
    amount: { type: "number" },
    currency: str,
    merchant: str,
    confirmation_text: str,
    reasons: { type: "array", items: str },
    created_at: { type: "string", format: "date-time" },
    expires_at: { type: "string", format: "date-time" },
    decided_at: { type: ["string", "null"], format: "date-time" },
    decided_with: {
      type: ["object", "null"],
      properties: { method: str, key_id: str },
      description: "How the decision was signed: passkey (credential id) or principal_key (kid)",
    },
    used: { type: "boolean", description: "The approved request's retry was ALLOWed (an approval is used once)" },
    approval_url: str,
    content: { type: "object", additionalProperties: true, description: "What a decision signs (with `decision`): see docs/reference/approvals.md" },
  },
} as const;

/** The body of an approval at `now`. */
export function approvalBody(app: FastifyInstance, a: StoredApproval, now: Date): Record<string, unknown> {
  const c = a.content;
  return {
    approval_id: a.approvalId,
    status: approvalStatus(a.status, a.expiresAt.getTime(), now.getTime()),
    agent_id: a.agentId,
    agreement_id: a.agreementId,
    action_id: a.actionId,
    request_hash: a.requestHash,
    amount: c.amount,
    currency: c.currency,
    ...(c.merchant !== undefined ? { merchant: c.merchant } : {}),
    confirmation_text: c.confirmation_text,
    reasons: c.reasons,
    created_at: a.createdAt.toISOString(),
    expires_at: c.expires_at,
    decided_at: a.decidedAt?.toISOString() ?? null,
    decided_with: a.decidedWith ? { method: a.decidedWith.method, key_id: a.decidedWith.key_id } : null,
    used: a.usedAt !== null,
    approval_url: approvalOptionsOf(app).urlOf(a.approvalId),
    content: c,
  };
}

/**
 * Records a decision and its transparency-log entry in one transaction; the decided approval.
 * Throws APPROVAL_NOT_PENDING when it was decided already or expired.
 */
export async function recordDecision(
  app: FastifyInstance,
  a: StoredApproval,
  decision: ApprovalDecision,
  evidence: DecisionEvidence,
): Promise<{ approval: StoredApproval; logSequence: number }> {
  const signer = logSignerOf(app);
  const now = app.clock();
  const pool = app.requireDb();
  return withTransaction(pool, async (client) => {
    const decided = await decideApproval(client, a.approvalId, decision, evidence, now);
    if (!decided)
      throw new ApiError(
        "APPROVAL_NOT_PENDING",
        `approval ${a.approvalId} is ${approvalStatus(a.status, a.expiresAt.getTime(), now.getTime())}: it can no longer be decided`,
      );
    const body = {
      event: "approval",
      decision: decided.status,
      approval_id: a.approvalId,
      agreement_id: a.agreementId,
      agent_id: a.agentId,
      action_id: a.actionId,
      request_hash: a.requestHash,
      content_hash: sha256Hash(canonicalBytes(decisionPayload(a.content, decision))),
      confirmation_text: a.content.confirmation_text,
      method: evidence.method,
      key_id: evidence.key_id,
      at: now.toISOString(),
    };
    const logged = await appendLogEntries(client, [{ kind: "agreement", body }], signer, logAppendOptions(app, now));
    return { approval: decided, logSequence: logged.entries[0]?.sequence ?? 0 };
  });
}

/** An approval that exists, or the 404. */
export async function requireApproval(app: FastifyInstance, id: string): Promise<StoredApproval> {
  const a = await findApproval(app.requireDb(), id);
  if (!a) throw new ApiError("APPROVAL_NOT_FOUND");
  return a;
}
