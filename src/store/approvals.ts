/**
 * Approvals of a STEP_UP and the principals' passkeys (tables `approvals`, `principal_passkeys`,
 * migrations/0300_approvals.sql; docs/reference/approvals.md).
 *
 * Promises:
 * - One approval per (agent, action_id): `openApproval` inserts it, or returns the one already
 *   there (whatever its request hash: the caller compares). Opening one also stores its STEP_UP
 *   as the action's verify decision (so the action id stays bound to this request, as every
 *   answered action is) and writes the "approval waiting" alert fan-out, in the same
 *   transaction; an action id already answered for another request opens nothing (`reused`).
 * - `releaseStepUp` removes that stored STEP_UP (only a STEP_UP of the same request hash), so
 *   the decided approval's final answer can be stored in its place.
 * - A decision is taken once: `decideApproval` changes a pending approval that has not expired
 *   at `at` and nothing else (a second decision, a late one, an unknown id: `undefined`).
 * - `markApprovalUsed` sets `used_at` once; an approval is used by one ALLOW only.
 */
import { randomBytes } from "node:crypto";
import type { Pool } from "pg";
import type { ApprovalContent, ApprovalDecision } from "../core/approvals/index.js";
import type { Alert } from "../core/alerts/index.js";
import type { HashString } from "../core/canonical/index.js";
import { enqueueFanout } from "./alert-fanout.js";
import { withTransaction, type Queryable } from "./pool.js";
import { saveVerifyDecision } from "./verify-decisions.js";

/** A stored approval. */
export interface StoredApproval {
  approvalId: string;
  agentId: string;
  actionId: string;
  orgId: string;
  principalId: string;
  agreementId: string;
  requestHash: HashString;
  content: ApprovalContent;
  /** Public JWKs of the grant's principal that may sign a decision (`writ approval sign`). */
  principalKeys: Record<string, unknown>[];
  status: "pending" | "approved" | "declined";
  createdAt: Date;
  expiresAt: Date;
  decidedAt: Date | null;
  decidedWith: Record<string, unknown> | null;
  usedAt: Date | null;
}

interface Row {
  approval_id: string;
  agent_id: string;
  action_id: string;
  org_id: string;
  principal_id: string;
  agreement_id: string;
  request_hash: HashString;
  content: ApprovalContent;
  principal_keys: Record<string, unknown>[];
  status: StoredApproval["status"];
  created_at: Date;
  expires_at: Date;
  decided_at: Date | null;
  decided_with: Record<string, unknown> | null;
  used_at: Date | null;
}

const COLUMNS =
  "approval_id, agent_id, action_id, org_id, principal_id, agreement_id, request_hash, content, principal_keys, status, created_at, expires_at, decided_at, decided_with, used_at";

function toStored(r: Row): StoredApproval {
  return {
    approvalId: r.approval_id,
    agentId: r.agent_id,
    actionId: r.action_id,
    orgId: r.org_id,
    principalId: r.principal_id,
    agreementId: r.agreement_id,
    requestHash: r.request_hash,
    content: r.content,
    principalKeys: r.principal_keys,
    status: r.status,
    createdAt: r.created_at,
    expiresAt: r.expires_at,
    decidedAt: r.decided_at,
    decidedWith: r.decided_with,
    usedAt: r.used_at,
  };
}

/** A new approval id (`apr_` and 24 hex digits). */
export function newApprovalId(): string {
  return `apr_${randomBytes(12).toString("hex")}`;
}

/** The approval of (agentId, actionId), or undefined. */
export async function findApprovalOfAction(q: Queryable, agentId: string, actionId: string): Promise<StoredApproval | undefined> {
  const { rows } = await q.query<Row>(`SELECT ${COLUMNS} FROM approvals WHERE agent_id = $1 AND action_id = $2`, [agentId, actionId]);
  return rows[0] ? toStored(rows[0]) : undefined;
}

/** The approval `approvalId`, or undefined. */
export async function findApproval(q: Queryable, approvalId: string): Promise<StoredApproval | undefined> {
  const { rows } = await q.query<Row>(`SELECT ${COLUMNS} FROM approvals WHERE approval_id = $1`, [approvalId]);
  return rows[0] ? toStored(rows[0]) : undefined;
}

/** The principal id the agent is registered with, or undefined. */
export async function principalOfAgent(q: Queryable, agentId: string): Promise<string | undefined> {
  const { rows } = await q.query<{ principal_id: string }>("SELECT principal_id FROM agents WHERE agent_id = $1", [agentId]);
  return rows[0]?.principal_id;
}

/** What `openApproval` stores. */
export interface NewApproval {
  content: ApprovalContent;
  orgId: string;
  principalKeys: Record<string, unknown>[];
  createdAt: Date;
  /** The "approval waiting" alert to the agent's subscribers. */
  alert: Alert;
  /** The STEP_UP answer, stored as the action's verify decision. */
  decision: Record<string, unknown>;
}

/** Thrown inside the opening transaction to roll it back when the action id answered another request. */
class ActionReused extends Error {}

/**
 * Stores a pending approval (and its alert fan-out) unless (agent, action_id) has one: the
 * stored approval and whether it was this call that created it (with its fan-out id).
 */
export async function openApproval(pool: Pool, a: NewApproval): Promise<{ created: boolean; approval: StoredApproval; fanoutId?: string } | { reused: true }> {
  try {
    return await openIn(pool, a);
  } catch (e) {
    if (e instanceof ActionReused) return { reused: true };
    throw e;
  }
}

async function openIn(pool: Pool, a: NewApproval): Promise<{ created: boolean; approval: StoredApproval; fanoutId?: string }> {
  const c = a.content;
  return withTransaction(pool, async (client) => {
    const { rows } = await client.query<Row>(
      `INSERT INTO approvals (approval_id, agent_id, action_id, org_id, principal_id, agreement_id, request_hash, content, principal_keys, created_at, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8::jsonb, $9::jsonb, $10, $11)
       ON CONFLICT (agent_id, action_id) DO NOTHING RETURNING ${COLUMNS}`,
      [
        c.approval_id,
        c.agent_id,
        c.action_id,
        a.orgId,
        c.principal_id,
        c.agreement_id,
        c.request_hash,
        JSON.stringify(c),
        JSON.stringify(a.principalKeys),
        a.createdAt,
        c.expires_at,
      ],
    );
    if (rows[0]) {
      const saved = await saveVerifyDecision(client, {
        agentId: c.agent_id,
        actionId: c.action_id,
        agreementId: c.agreement_id,
        requestHash: c.request_hash,
        decision: a.decision,
      });
      if (!saved.stored && saved.decision.requestHash !== c.request_hash) throw new ActionReused();
      const fanoutId = await enqueueFanout(client, c.agent_id, a.alert);
      return { created: true, approval: toStored(rows[0]), fanoutId };
    }
    const existing = await findApprovalOfAction(client, c.agent_id, c.action_id);
    if (!existing) throw new Error("approval conflict reported but none found");
    return { created: false, approval: existing };
  });
}

/** How a decision was signed (stored as evidence, and in the log entry). */
export interface DecisionEvidence {
  method: "passkey" | "principal_key";
  /** The passkey's credential id, or the signing key's kid. */
  key_id: string;
  /** The signed bytes' evidence: the WebAuthn assertion or the JWS. */
  proof: Record<string, unknown>;
}

/** Records the principal's decision on a pending, unexpired approval; the changed approval, or undefined. */
export async function decideApproval(
  q: Queryable,
  approvalId: string,
  decision: ApprovalDecision,
  evidence: DecisionEvidence,
  at: Date,
): Promise<StoredApproval | undefined> {
  const { rows } = await q.query<Row>(
    `UPDATE approvals SET status = $2, decided_at = $3, decided_with = $4::jsonb
      WHERE approval_id = $1 AND status = 'pending' AND expires_at > $3 RETURNING ${COLUMNS}`,
    [approvalId, decision === "approve" ? "approved" : "declined", at, JSON.stringify(evidence)],
  );
  return rows[0] ? toStored(rows[0]) : undefined;
}

/** Removes the stored STEP_UP of (agent, action) for `requestHash` (see the module comment). */
export async function releaseStepUp(q: Queryable, agentId: string, actionId: string, requestHash: HashString): Promise<void> {
  await q.query("DELETE FROM verify_decisions WHERE agent_id = $1 AND action_id = $2 AND request_hash = $3 AND decision->>'verdict' = 'STEP_UP'", [
    agentId,
    actionId,
    requestHash,
  ]);
}

/** Marks an approved approval used (once); true when this call did. */
export async function markApprovalUsed(q: Queryable, approvalId: string, at: Date): Promise<boolean> {
  const r = await q.query("UPDATE approvals SET used_at = $2 WHERE approval_id = $1 AND status = 'approved' AND used_at IS NULL", [approvalId, at]);
  return (r.rowCount ?? 0) === 1;
}

/** The principal's approvals, newest first (pending and decided; at most `limit`). */
export async function approvalsOfPrincipal(q: Queryable, principalId: string, limit: number): Promise<StoredApproval[]> {
  const { rows } = await q.query<Row>(`SELECT ${COLUMNS} FROM approvals WHERE principal_id = $1 ORDER BY created_at DESC LIMIT $2`, [principalId, limit]);
  return rows.map(toStored);
}

/** A registered passkey. */
export interface StoredPasskey {
  credentialId: string;
  principalId: string;
  publicKey: Uint8Array;
  counter: number;
  transports: string[];
}

interface PasskeyRow {
  credential_id: string;
  principal_id: string;
  public_key: Buffer;
  counter: string;
  transports: string[];
}

const passkey = (r: PasskeyRow): StoredPasskey => ({
  credentialId: r.credential_id,
  principalId: r.principal_id,
  publicKey: new Uint8Array(r.public_key),
  counter: Number(r.counter),
  transports: r.transports,
});

/** Stores a passkey of `principalId`; false when the credential id is already registered. */
export async function addPasskey(q: Queryable, p: Omit<StoredPasskey, "counter"> & { counter: number }): Promise<boolean> {
  const r = await q.query(
    "INSERT INTO principal_passkeys (credential_id, principal_id, public_key, counter, transports) VALUES ($1, $2, $3, $4, $5) ON CONFLICT (credential_id) DO NOTHING",
    [p.credentialId, p.principalId, Buffer.from(p.publicKey), p.counter, p.transports],
  );
  return (r.rowCount ?? 0) === 1;
}

/** The passkeys of `principalId`. */
export async function passkeysOf(q: Queryable, principalId: string): Promise<StoredPasskey[]> {
  const { rows } = await q.query<PasskeyRow>(
    "SELECT credential_id, principal_id, public_key, counter::text AS counter, transports FROM principal_passkeys WHERE principal_id = $1 ORDER BY created_at",
    [principalId],
  );
  return rows.map(passkey);
}

/** Raises a passkey's signature counter (never lowers it). */
export async function raisePasskeyCounter(q: Queryable, credentialId: string, counter: number): Promise<void> {
  await q.query("UPDATE principal_passkeys SET counter = GREATEST(counter, $2) WHERE credential_id = $1", [credentialId, counter]);
}
