/**
 * What /openapi.json says beyond the route schemas, in one table per concern, so that a route
 * missing from one is a failing test (test/unit/api/openapi-examples.test.ts), not a silent gap:
 *
 * - the bearer security schemes (an organization API key `bur_…`, the admin token, the log's
 *   append token, a portal session `bps_…`) and which of them each operation accepts;
 * - what each operation's success answer is (its response description);
 * - what each error status means, and its example when the capture has none;
 * - the tags, in the order the documentation shows them (verify first).
 *
 * The examples themselves are captured from the real demo data into ./openapi-examples.json
 * (`npm run gen:openapi-examples`, hack/openapi/capture-examples.ts).
 */

/** The security schemes: every credential is `Authorization: Bearer <token>`. */
export const SECURITY_SCHEMES = {
  apiKey: {
    type: "http",
    scheme: "bearer",
    bearerFormat: "bur_…",
    description:
      "An organization's API key (`bur_…`, returned once by POST /v1/orgs/{org_id}/keys) with the scope the operation needs. " +
      "Against `writ dev` the PUBLIC demo operator key `bur_f-sGsUrJQHACja5SyeafOMFOnvA8ues53Q_7k-FPJl4` may verify for agent_demo (docs/demo.md).",
  },
  adminToken: { type: "http", scheme: "bearer", description: "The service operator's admin token (BUR_ADMIN_TOKEN)." },
  appendToken: { type: "http", scheme: "bearer", description: "The transparency log's append token (SVC_APPEND_TOKEN)." },
  portalSession: {
    type: "http",
    scheme: "bearer",
    bearerFormat: "bps_…",
    description: "A principal's portal session (`bps_…`, from POST /v1/sessions after a sign-in link; docs/portal.md).",
  },
} as const;

/** A security scheme's name. */
export type SecurityName = keyof typeof SECURITY_SCHEMES;

/** What the document says about one operation. */
export interface OperationDoc {
  /** Credentials it accepts (any one of them); empty: none is needed. */
  security: readonly SecurityName[];
  /** True when it also answers without a credential (the principal's signed revocation). */
  anonymousToo?: boolean;
  /** What a success answer is. */
  ok: string;
}

const KEY = ["apiKey"] as const;
const NONE = [] as const;
const SESSION = ["portalSession"] as const;
const ADMIN_OR_KEY = ["adminToken", "apiKey"] as const;
const READER = ["apiKey", "portalSession"] as const;

/** Every operation of the API, by `METHOD /path/{param}`. */
export const OPERATIONS: Readonly<Record<string, OperationDoc>> = {
  // verify
  "POST /v1/verify": {
    security: KEY,
    ok: "The decision: verdict ALLOW, DENY or STEP_UP with its reasons; an ALLOW is recorded in the ledger (ledger_entry); the same action_id answers the same",
  },
  "GET /v1/approvals/{approval_id}": {
    security: KEY,
    ok: "The approval a STEP_UP opened: its content, the text the principal signs, and its state (pending, approved, declined, expired)",
  },
  "POST /v1/approvals/{approval_id}/decision": {
    security: NONE,
    ok: "The decision, signed with the grant principal's key, is recorded and logged (log_sequence)",
  },
  "POST /v1/verify/outcomes": { security: KEY, ok: "The outcome is recorded in the agreement's ledger (replayed: true when the action already had it)" },
  "POST /v1/mandates": { security: KEY, ok: "The payment mandate verified and recorded as a delegation (201; 200 when it was recorded before)" },
  "DELETE /svc/delegations/{id}": {
    security: ADMIN_OR_KEY,
    anonymousToo: true,
    ok: "Revoked with everything below it, logged and alerted (or already revoked: revoked false)",
  },
  // records
  "GET /v1/delegations/{delegation_id}": { security: READER, ok: "The delegation as stored, with its state and revocation" },
  "GET /v1/agents/{agent_id}/delegations": { security: READER, ok: "The agent's delegations, newest grant first" },
  "GET /v1/agreements/{agreement_id}": { security: READER, ok: "The agreement record, its state and its remaining budget" },
  "GET /v1/agreements/{agreement_id}/ledger": { security: READER, ok: "A page of the hash-chained ledger and the remaining budget" },
  // portal
  "POST /v1/portal/magic-link": { security: NONE, ok: "Always {sent: true}: a link went to the address if it may sign in" },
  "POST /v1/sessions": { security: NONE, ok: "A portal session for the link's principal" },
  "GET /v1/portal/me": { security: SESSION, ok: "The signed-in principal and its e-mail" },
  "DELETE /v1/sessions/current": { security: SESSION, ok: "Signed out: the session ended for good" },
  "GET /v1/portal/agents": { security: SESSION, ok: "The agents registered with the session's principal" },
  "GET /v1/portal/delegations": { security: SESSION, ok: "The principal's delegations, each with what is left of its budget" },
  "GET /v1/portal/agreements": { security: SESSION, ok: "The principal's agreements, each with its state and remaining budget" },
  "POST /v1/portal/delegations/{delegation_id}/revoke": {
    security: SESSION,
    ok: "Revoked by the principal, logged and alerted (or already revoked: revoked false)",
  },
  "GET /v1/portal/approvals": { security: SESSION, ok: "The principal's approvals, newest first, and how many passkeys it registered" },
  "GET /v1/dev/mailbox": { security: NONE, ok: "The latest sign-in link this process sent (development only)" },
  // registry
  "POST /v1/orgs": { security: ["adminToken"], ok: "The new organization" },
  "POST /v1/orgs/{org_id}/keys": { security: ADMIN_OR_KEY, ok: "The new API key; its token is shown this once" },
  "GET /v1/orgs/{org_id}/keys": { security: ADMIN_OR_KEY, ok: "The organization's keys, without tokens" },
  "DELETE /v1/orgs/{org_id}/keys/{key_id}": { security: ADMIN_OR_KEY, ok: "The key, now revoked" },
  "POST /v1/orgs/{org_id}/issuer-keys": { security: ADMIN_OR_KEY, ok: "The wallet's new trusted issuer key" },
  "GET /v1/orgs/{org_id}/issuer-keys": { security: ADMIN_OR_KEY, ok: "The wallet's issuer keys" },
  "DELETE /v1/orgs/{org_id}/issuer-keys/{kid}": { security: ADMIN_OR_KEY, ok: "The issuer key, now revoked" },
  "POST /v1/orgs/{org_id}/ack-keys": { security: ADMIN_OR_KEY, ok: "The organization's new acknowledgement key" },
  "GET /v1/orgs/{org_id}/ack-keys": { security: ADMIN_OR_KEY, ok: "The organization's acknowledgement keys" },
  "DELETE /v1/orgs/{org_id}/ack-keys/{thumbprint}": { security: ADMIN_OR_KEY, ok: "The acknowledgement key, now revoked" },
  "POST /v1/agents": { security: KEY, ok: "The registered agent (logged as a registration entry)" },
  "GET /v1/agents/{agent_id}": { security: KEY, ok: "The agent (principal_id only for its operator)" },
  "PATCH /v1/agents/{agent_id}": { security: KEY, ok: "The agent with its new status" },
  "POST /v1/agents/verify-request": {
    security: KEY,
    ok: "Whether the request is signed by a registered, active agent (verified, or reason), who it is, and with a payment whether a live grant could pay it now",
  },
  "GET /.well-known/http-message-signatures-directory": {
    security: NONE,
    ok: "The key directory of active agents (JWKS), signed by the log key (public, max-age 300)",
  },
  "POST /v1/inquiries": { security: KEY, ok: "The inquiry's answer: identity, verification, trust score with reasons, authorizations, revocations, incidents" },
  "POST /v1/reports": { security: KEY, ok: "The filed report" },
  "POST /v1/subscriptions": { security: KEY, ok: "The subscription (201 new; 200 the same one already held)" },
  "GET /v1/subscriptions": { security: KEY, ok: "The organization's active subscriptions" },
  "DELETE /v1/subscriptions/{subscription_id}": { security: KEY, ok: "The subscription, now ended" },
  // log
  "POST /v1/log/entries": { security: ["appendToken"], ok: "The appended entry and the new signed tree head" },
  "GET /v1/log/entries/{sequence}": { security: NONE, ok: "The log entry" },
  "GET /v1/log/entries/by-hash/{entry_hash}": { security: NONE, ok: "The log entry with that entry_hash" },
  "GET /v1/log/entries/{sequence}/proof": { security: NONE, ok: "The RFC 6962 inclusion proof of the entry against the signed head" },
  "GET /v1/log/head": { security: NONE, ok: "The latest signed tree head" },
  "GET /v1/log/checkpoint": { security: NONE, ok: "c2sp.org/tlog-checkpoint, Ed25519 signed note under the log origin" },
  "GET /v1/log/consistency": { security: NONE, ok: "The RFC 6962 consistency proof between two tree sizes" },
  // revocations
  "GET /v1/revocations": { security: NONE, ok: "Stored principal revocations, in order (public, max-age 300)" },
  "POST /v1/revocations/push": { security: NONE, ok: "Stored (stored: true with its sequence), or a repeat (stored: false)" },
  // rates, demo, keys, admin, health
  "GET /v1/fx": { security: NONE, ok: "Reference-currency units for one unit of the currency on that UTC day" },
  "POST /demo/check": { security: NONE, ok: "The evaluation of one payment against a sample agreement signed with the public demo keys" },
  "GET /.well-known/svc-keys.json": { security: NONE, ok: "The log's public key and the published keys" },
  "POST /v1/admin/seed-demo": { security: ["adminToken"], ok: "The public demo data and its PUBLIC keys (already_present on a repeat)" },
  "GET /healthz": { security: NONE, ok: "The process is alive" },
  "GET /readyz": { security: NONE, ok: "Ready: the database is reachable and the revocation index is loaded" },
};

/** What each error status means, and its example when the capture has none. */
export const ERROR_STATUSES: Readonly<Record<number, { description: string; example: string }>> = {
  400: { description: "The request is not valid; `error` names the field", example: "body/agent_id must be string" },
  401: {
    description: "No credential, or one that is not recognized, revoked or expired (or a signature that does not verify)",
    example: "bearer token required",
  },
  403: { description: "The credential may not do this: another kind of credential, or a key without the scope", example: "API key lacks the required scope" },
  404: { description: "Not found, or not visible to this caller (the same answer)", example: "not found" },
  409: { description: "Conflicts with what is stored", example: "conflict" },
  422: { description: "A principal's revocation that does not verify against the stored agreement", example: "principal revocation did not verify" },
  429: { description: "Over a limit (the organization's daily report cap)", example: "organization reached its daily report cap" },
  500: { description: "A configured key failed to load, or an internal error", example: "SVC_LOG_SIGNING_SEED failed to load" },
  502: { description: "The rate source did not answer", example: "FX source did not answer" },
  503: { description: "Storage or a required setting is not configured, or the database is unavailable", example: "DATABASE_URL is not set" },
};

/** The tags, in the order the documentation shows them. */
export const TAGS = [
  { name: "verify", description: "May this payment go ahead? Decisions, outcomes, revocation of delegations, payment mandates" },
  { name: "records", description: "Delegations, agreements, ledgers and what is left to spend" },
  { name: "portal", description: "The principal's sign-in, sessions, records and revocation" },
  { name: "registry", description: "Organizations, API keys, agents, inquiries, reports, subscriptions" },
  { name: "log", description: "The transparency log: entries, proofs, signed heads" },
  { name: "revocations", description: "The feed of principal revocations" },
  { name: "rates", description: "Reference-currency rates" },
  { name: "demo", description: "The demo check with the public demo keys" },
  { name: "keys", description: "Published public keys" },
  { name: "admin", description: "The service operator's routes" },
  { name: "health", description: "Liveness and readiness" },
] as const;
