/**
 * `npm run gen:openapi-examples`: captures the examples of /openapi.json from the real demo data.
 * Starts an embedded Postgres in a temporary folder and the data plane with fresh secrets, seeds
 * the public demo data (as `writ dev` does), then makes one real call per operation and records
 * its request and answer (and a few refusals) into src/api/plugins/openapi-examples.json, keyed by
 * `METHOD /path/{param}`. The plugin (src/api/plugins/openapi.ts) puts them into the document;
 * test/unit/api/openapi-examples.test.ts checks each against its route's schema.
 *
 * The rate source is a local stand-in (test/helpers/frankfurter.ts) publishing one EUR rate; the
 * one answer a repeat would hide (DELETE /svc/delegations/{id} after the portal revoked) is the
 * portal's revocation answer, which has the same shape. Ids, times and tokens come from this run's
 * throwaway database: only the PUBLIC demo keys are real, and they are public anyway.
 */
import { chmod, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { loadSettings } from "../../src/api/settings.js";
import { startServer } from "../../src/api/server.js";
import { signRevocation, type IntentAgreement } from "../../src/core/agreement/index.js";
import { canonicalBytes } from "../../src/core/canonical/index.js";
import { DEMO_PRINCIPAL_EMAIL } from "../../src/core/demo/seed.js";
import { demoAgentSigner, demoPrincipalSigner } from "../../src/core/demo/index.js";
import { generateSigner, keyId, signJws, signerFromJwk } from "../../src/core/jose/index.js";
import { signAgentPop } from "../../src/core/registry/index.js";
import { DIRECTORY_PATH, signRequest } from "../../src/core/httpsig/index.js";
import { PUSH_TYP } from "../../src/core/agreement/index.js";
import { seedDevDemo } from "../../src/dev/demo-seed.js";
import { devSecretsEnv, generateDevSecrets } from "../../src/dev/dev-settings.js";
import { freePort } from "../../src/dev/free-port.js";
import { startPostgres } from "../../src/dev/postgres.js";
import { findKeyByToken } from "../../src/store/keys.js";
import { startFrankfurter } from "../../test/helpers/frankfurter.js";
import { APPROVAL_TYP, decisionPayload, type ApprovalContent } from "../../src/core/approvals/index.js";
import { buildSignedAgreement } from "../../src/core/agreement/index.js";
import { demoDelegation, demoMandate } from "../../src/core/demo/build.js";
import { seededDemoIntent } from "../../src/core/demo/seed.js";
import type { Delegation } from "../../src/core/delegation/index.js";
import { signRecord } from "../../src/core/jose/index.js";
import { upsertDelegation } from "../../src/store/delegations.js";
import { withTransaction } from "../../src/store/pool.js";
import { openPaymentMandateClaims, presentMandate } from "../../test/helpers/ap2-mandates.js";

/** Where the examples go. */
export const EXAMPLES_FILE = fileURLToPath(new URL("../../src/api/plugins/openapi-examples.json", import.meta.url));

interface Example {
  params?: Record<string, unknown>;
  query?: Record<string, unknown>;
  request?: unknown;
  responses: Record<string, unknown>;
}

const examples: Record<string, Example> = {};

async function main(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), "writ-examples-"));
  // As root, Postgres runs as the postgres user, which must be able to enter the folder.
  await chmod(dir, 0o711);
  const secrets = generateDevSecrets();
  // A local rate source (the Frankfurter protocol) publishing today's EUR rate.
  const fx = await startFrankfurter();
  fx.setRate(new Date().toISOString().slice(0, 10), "EUR", "USD", "1.0842");
  const pg = await startPostgres({ dataDir: join(dir, "pg"), port: await freePort(), password: secrets.postgres_password });
  try {
    await pg.ensureDatabase("writ");
    const settings = loadSettings({
      LOG_LEVEL: "silent",
      HOST: "127.0.0.1",
      PORT: "0",
      BUR_DEV_MAILBOX: "1",
      BUR_ALLOW_DEMO_SEED: "1",
      WRIT_KUBE_WATCH: "off",
      BUR_WEBHOOK_WORKER: "0",
      WRIT_OUTBOUND_ALLOW_LOOPBACK: "1",
      SVC_FX_SOURCE_URL: fx.url,
      ...devSecretsEnv(secrets),
      DATABASE_URL: pg.url("writ"),
    });
    const server = await startServer(settings);
    await server.migrated;
    try {
      await capture(server.url, server, secrets);
    } finally {
      await server.close();
    }
  } finally {
    await pg.stop();
    await fx.close();
    await rm(dir, { recursive: true, force: true });
  }
  const sorted = Object.fromEntries(Object.entries(examples).sort(([a], [b]) => a.localeCompare(b)));
  await writeFile(EXAMPLES_FILE, `${JSON.stringify(sorted, null, 2)}\n`);
  console.log(`openapi examples: ${Object.keys(sorted).length} operations written to ${EXAMPLES_FILE}`);
}

type Server = Awaited<ReturnType<typeof startServer>>;

async function capture(base: string, server: Server, secrets: ReturnType<typeof generateDevSecrets>): Promise<void> {
  /** Calls `METHOD path` (the template names the operation) and records the answer under its status. */
  async function call(
    op: string,
    path: string,
    opts: { bearer?: string; body?: unknown; params?: Record<string, unknown>; query?: Record<string, unknown>; record?: boolean } = {},
  ): Promise<{ status: number; body: Record<string, unknown> }> {
    const [method] = op.split(" ");
    const qs = opts.query ? `?${new URLSearchParams(Object.entries(opts.query).map(([k, v]): [string, string] => [k, String(v)])).toString()}` : "";
    const headers: Record<string, string> = {};
    if (opts.bearer) headers.authorization = `Bearer ${opts.bearer}`;
    if (opts.body !== undefined) headers["content-type"] = "application/json";
    const r = await fetch(`${base}${path}${qs}`, { method, headers, ...(opts.body !== undefined ? { body: JSON.stringify(opts.body) } : {}) });
    const text = await r.text();
    const body = (text.startsWith("{") ? JSON.parse(text) : text) as Record<string, unknown>;
    if (opts.record !== false) {
      const e = (examples[op] ??= { responses: {} });
      if (opts.params) e.params = { ...e.params, ...opts.params };
      if (opts.query && r.status < 300) e.query = { ...e.query, ...opts.query };
      if (opts.body !== undefined && r.status < 300) e.request = opts.body;
      e.responses[String(r.status)] ??= body;
    }
    return { status: r.status, body };
  }
  const expect2xx = (what: string, r: { status: number; body: unknown }) => {
    if (r.status >= 300) throw new Error(`${what}: ${r.status} ${JSON.stringify(r.body)}`);
    return r.body as Record<string, unknown>;
  };

  // Verify answers only once this process's revocation index is loaded (/readyz 200).
  for (let i = 0; (await fetch(`${base}/readyz`)).status !== 200; i++) {
    if (i === 100) throw new Error("the server did not become ready");
    await new Promise((r) => setTimeout(r, 100));
  }
  const now = new Date();
  await seedDevDemo(server.app, base, now);
  const admin = secrets.admin_token;
  const seeded = expect2xx("seed", await call("POST /v1/admin/seed-demo", "/v1/admin/seed-demo", { bearer: admin }));
  const operator = seeded.operator_key as string;
  const wallet = seeded.wallet_key as string;
  const merchant = seeded.merchant_key as string;

  await call("GET /healthz", "/healthz");
  await call("GET /readyz", "/readyz");
  await call("GET /.well-known/svc-keys.json", "/.well-known/svc-keys.json");

  // Verify first: what an agent asks.
  const action = {
    action_id: "act_7f3c2e1a",
    action_type: "purchase",
    amount: 12.5,
    currency: "USD",
    proposed_at: now.toISOString(),
    merchant: "Corner Market",
  };
  const allowed = expect2xx("verify", await call("POST /v1/verify", "/v1/verify", { bearer: operator, body: { agent_id: "agent_demo", action } }));
  if (allowed.verdict !== "ALLOW") throw new Error(`verify: ${JSON.stringify(allowed)}`);
  await call("POST /v1/verify", "/v1/verify", {
    bearer: operator,
    body: { agent_id: "agent_demo", action: { ...action, action_id: "act_other", amount: 80 } },
    record: false,
  });
  await call("POST /v1/verify", "/v1/verify", { body: { agent_id: "agent_demo", action } });
  await call("POST /v1/verify", "/v1/verify", { bearer: wallet, body: { agent_id: "agent_demo", action } });
  await call("POST /v1/verify", "/v1/verify", { bearer: operator, body: { agent_id: "agent_demo", action: { ...action, currency: "US" } } });
  await call("POST /v1/verify", "/v1/verify", { bearer: operator, body: { agent_id: "agent_demo", action: { ...action, amount: 13 } } });
  expect2xx(
    "outcome",
    await call("POST /v1/verify/outcomes", "/v1/verify/outcomes", {
      bearer: wallet,
      body: { agreement_id: "agr_demo", action_id: action.action_id, outcome: "captured", amount: 10, final: true, idempotency_key: "cap_0001" },
    }),
  );
  // A capture after the final one (a 409 with the hold's state).
  await call("POST /v1/verify/outcomes", "/v1/verify/outcomes", {
    bearer: wallet,
    body: { agreement_id: "agr_demo", action_id: action.action_id, outcome: "captured", amount: 1, idempotency_key: "cap_0002" },
  });
  await call("POST /v1/verify/outcomes", "/v1/verify/outcomes", {
    bearer: operator,
    body: { agreement_id: "agr_demo", action_id: action.action_id, outcome: "authorized" },
  });
  await call("POST /v1/verify/outcomes", "/v1/verify/outcomes", {
    bearer: wallet,
    body: { agreement_id: "agr_demo", action_id: "act_unknown", outcome: "authorized" },
  });

  // The records and their budgets.
  await call("GET /v1/agreements/{agreement_id}", "/v1/agreements/agr_demo", { bearer: operator, params: { agreement_id: "agr_demo" } });
  await call("GET /v1/agreements/{agreement_id}", "/v1/agreements/agr_unknown", { bearer: operator, params: { agreement_id: "agr_demo" } });
  await call("GET /v1/agreements/{agreement_id}/ledger", "/v1/agreements/agr_demo/ledger", {
    bearer: operator,
    params: { agreement_id: "agr_demo" },
    query: { after: 0, limit: 100 },
  });
  await call("GET /v1/delegations/{delegation_id}", "/v1/delegations/del_demo", { bearer: operator, params: { delegation_id: "del_demo" } });
  await call("GET /v1/agents/{agent_id}/delegations", "/v1/agents/agent_demo/delegations", {
    bearer: operator,
    params: { agent_id: "agent_demo" },
    query: { limit: 50 },
  });

  // The registry.
  await call("GET /v1/agents/{agent_id}", "/v1/agents/agent_demo", { bearer: operator, params: { agent_id: "agent_demo" } });
  // A request the demo agent signed (RFC 9421, Web Bot Auth), checked by the merchant; then the same again (a replay).
  await call("GET /.well-known/http-message-signatures-directory", "/.well-known/http-message-signatures-directory");
  const cart = { method: "GET", url: "https://shop.example/cart/1042", headers: { accept: "application/json" } };
  const signedCart = {
    ...cart,
    headers: {
      ...cart.headers,
      ...(await signRequest(cart, { signer: demoAgentSigner(), directoryUrl: `${base}${DIRECTORY_PATH}`, components: ["@method", "@path"] })),
    },
  };
  const checkBody = { request: signedCart, payment: { amount: 12.5, currency: "USD", merchant: "Corner Market" } };
  expect2xx("verify-request", await call("POST /v1/agents/verify-request", "/v1/agents/verify-request", { bearer: merchant, body: checkBody }));
  await call("POST /v1/agents/verify-request", "/v1/agents/verify-request", { body: checkBody });
  await call("POST /v1/agents/verify-request", "/v1/agents/verify-request", { bearer: merchant, body: { request: { ...signedCart, url: "/cart/1042" } } });
  await call("POST /v1/inquiries", "/v1/inquiries", { bearer: wallet, body: { agent_id: "agent_demo", purpose_code: "payment_authorization" } });
  await call("POST /v1/inquiries", "/v1/inquiries", { bearer: wallet, body: { agent_id: "agent_demo" } });
  await call("POST /v1/reports", "/v1/reports", {
    bearer: merchant,
    body: { agent_id: "agent_demo", kind: "transaction_outcome", evidence_hash: `sha256:${"5e".repeat(32)}`, summary: "order 1042 delivered and paid" },
  });
  await call("POST /v1/reports", "/v1/reports", {
    bearer: merchant,
    body: { agent_id: "agent_demo", kind: "transaction_outcome", evidence_hash: `sha256:${"5e".repeat(32)}`, summary: "order 1042 delivered and paid" },
  });
  const sub = expect2xx(
    "subscribe",
    await call("POST /v1/subscriptions", "/v1/subscriptions", {
      bearer: wallet,
      body: { agent_id: "agent_demo", webhook_url: "https://wallet.example/writ/alerts" },
    }),
  );
  await call("POST /v1/subscriptions", "/v1/subscriptions", {
    bearer: wallet,
    body: { agent_id: "agent_demo", webhook_url: "http://wallet.example/writ/alerts" },
  });
  await call("GET /v1/subscriptions", "/v1/subscriptions", { bearer: wallet });
  await call("DELETE /v1/subscriptions/{subscription_id}", `/v1/subscriptions/${String(sub.subscription_id)}`, {
    bearer: wallet,
    params: { subscription_id: sub.subscription_id },
  });

  const org = expect2xx("org", await call("POST /v1/orgs", "/v1/orgs", { bearer: admin, body: { name: "Example Books Ltd", org_type: "agent_operator" } }));
  await call("POST /v1/orgs", "/v1/orgs", { bearer: operator, body: { name: "Example Books Ltd", org_type: "agent_operator" } });
  const orgId = org.org_id as string;
  const key = expect2xx(
    "key",
    await call("POST /v1/orgs/{org_id}/keys", `/v1/orgs/${orgId}/keys`, { bearer: admin, params: { org_id: orgId }, body: { name: "platform team" } }),
  );
  const spare = expect2xx(
    "key",
    await call("POST /v1/orgs/{org_id}/keys", `/v1/orgs/${orgId}/keys`, {
      bearer: key.token as string,
      params: { org_id: orgId },
      body: { name: "read only", scopes: ["registry:read"] },
      record: false,
    }),
  );
  await call("GET /v1/orgs/{org_id}/keys", `/v1/orgs/${orgId}/keys`, { bearer: key.token as string, params: { org_id: orgId } });
  await call("DELETE /v1/orgs/{org_id}/keys/{key_id}", `/v1/orgs/${orgId}/keys/${String(spare.key_id)}`, {
    bearer: key.token as string,
    params: { org_id: orgId, key_id: spare.key_id },
  });
  const agentKey = generateSigner();
  const newAgent = { agent_id: "agent_books", principal_id: "prn_acme", verification_level: "operator_verified", public_key: agentKey.publicJwk };
  const keyProof = await signAgentPop({ org_id: orgId, agent_id: "agent_books", fingerprint: keyId(agentKey.publicJwk), at: now.toISOString() }, agentKey);
  expect2xx("agent", await call("POST /v1/agents", "/v1/agents", { bearer: key.token as string, body: { ...newAgent, key_proof: keyProof } }));
  await call("POST /v1/agents", "/v1/agents", { bearer: key.token as string, body: newAgent });
  await call("PATCH /v1/agents/{agent_id}", "/v1/agents/agent_books", {
    bearer: key.token as string,
    params: { agent_id: "agent_books" },
    body: { status: "suspended" },
  });

  const walletOrgId = await orgOfKey(server, wallet);
  const issuer = generateSigner();
  const issuerKey = expect2xx(
    "issuer key",
    await call("POST /v1/orgs/{org_id}/issuer-keys", `/v1/orgs/${walletOrgId}/issuer-keys`, {
      bearer: wallet,
      params: { org_id: walletOrgId },
      body: { public_key: issuer.publicJwk },
    }),
  );
  await call("GET /v1/orgs/{org_id}/issuer-keys", `/v1/orgs/${walletOrgId}/issuer-keys`, { bearer: wallet, params: { org_id: walletOrgId } });

  // An acknowledgement key of the wallet (its acknowledgements name it as a party).
  const ackSigner = generateSigner();
  const ackKey = expect2xx(
    "ack key",
    await call("POST /v1/orgs/{org_id}/ack-keys", `/v1/orgs/${walletOrgId}/ack-keys`, {
      bearer: wallet,
      params: { org_id: walletOrgId },
      body: { public_key: ackSigner.publicJwk },
    }),
  );
  await call("GET /v1/orgs/{org_id}/ack-keys", `/v1/orgs/${walletOrgId}/ack-keys`, { bearer: wallet, params: { org_id: walletOrgId } });
  await call("DELETE /v1/orgs/{org_id}/ack-keys/{thumbprint}", `/v1/orgs/${walletOrgId}/ack-keys/${encodeURIComponent(String(ackKey.thumbprint))}`, {
    bearer: wallet,
    params: { org_id: walletOrgId, thumbprint: ackKey.thumbprint },
  });

  // A payment mandate (AP2) issued by that wallet key to the demo agent.
  const nowSec = Math.floor(now.getTime() / 1000);
  const sdJwt = await presentMandate({
    issuer,
    holder: demoAgentSigner(),
    claims: openPaymentMandateClaims(demoAgentSigner(), { iatSec: nowSec, expSec: nowSec + 3600 }),
    audience: "writ",
    nonce: "n-8c1f",
    kbIatSec: nowSec,
  });
  await call("POST /v1/mandates", "/v1/mandates", { bearer: operator, body: { agent_id: "agent_demo", sd_jwt: sdJwt, nonce: "n-8c1f" } });
  await call("POST /v1/mandates", "/v1/mandates", { bearer: operator, body: { agent_id: "agent_demo", sd_jwt: sdJwt, nonce: "n-other" } });
  await call("DELETE /v1/orgs/{org_id}/issuer-keys/{kid}", `/v1/orgs/${walletOrgId}/issuer-keys/${encodeURIComponent(String(issuerKey.kid))}`, {
    bearer: wallet,
    params: { org_id: walletOrgId, kid: issuerKey.kid },
  });

  // The transparency log.
  expect2xx(
    "append",
    await call("POST /v1/log/entries", "/v1/log/entries", {
      bearer: secrets.append_token,
      body: {
        kind: "incident",
        body: { agent_id: "agent_demo", summary: "card testing pattern seen at checkout", evidence_hash: `sha256:${"9a".repeat(32)}` },
      },
    }),
  );
  await call("POST /v1/log/entries", "/v1/log/entries", { bearer: "apt_wrong", body: { kind: "incident", body: {} } });
  const head = expect2xx("head", await call("GET /v1/log/head", "/v1/log/head"));
  const entry = expect2xx("entry", await call("GET /v1/log/entries/{sequence}", "/v1/log/entries/1", { params: { sequence: "1" } }));
  await call("GET /v1/log/entries/{sequence}", `/v1/log/entries/${Number(head.tree_size) + 100}`, { params: { sequence: "1" } });
  const hash = (entry.entry as { entry_hash: string }).entry_hash;
  await call("GET /v1/log/entries/by-hash/{entry_hash}", `/v1/log/entries/by-hash/${hash}`, { params: { entry_hash: hash } });
  await call("GET /v1/log/entries/{sequence}/proof", "/v1/log/entries/1/proof", { params: { sequence: "1" } });
  await call("GET /v1/log/consistency", "/v1/log/consistency", { query: { first: 1, second: Number(head.tree_size) } });
  await call("GET /v1/log/checkpoint", "/v1/log/checkpoint");

  // Rates and the demo check.
  await call("GET /v1/fx", "/v1/fx", { query: { currency: "EUR", reference: "USD", day: now.toISOString().slice(0, 10) } });
  await call("GET /v1/fx", "/v1/fx", { query: { currency: "EURO" } });
  await call("POST /demo/check", "/demo/check", {
    body: {
      intent: {
        maximum_amount: 50,
        currency: "USD",
        purpose: "books",
        category: "books",
        natural_language: "buy a book",
        include_expiry: true,
        time_limit: "2030-01-01",
      },
      payment: { amount: 20, currency: "USD", merchant: "m-books", item: "novel" },
    },
  });
  await call("POST /demo/check", "/demo/check", { body: { intent: { maximum_amount: -1, currency: "USD" }, payment: { amount: 20, currency: "USD" } } });

  // The portal: the demo principal's public address.
  await call("POST /v1/portal/magic-link", "/v1/portal/magic-link", { body: { email: DEMO_PRINCIPAL_EMAIL } });
  const mail = expect2xx("mailbox", await call("GET /v1/dev/mailbox", "/v1/dev/mailbox"));
  const s = expect2xx("session", await call("POST /v1/sessions", "/v1/sessions", { body: { token: mail.token } }));
  await call("POST /v1/sessions", "/v1/sessions", { body: { token: mail.token } });
  const session = s.session_token as string;
  await call("GET /v1/portal/me", "/v1/portal/me", { bearer: session });
  await call("GET /v1/portal/me", "/v1/portal/me");
  await call("GET /v1/portal/agents", "/v1/portal/agents", { bearer: session, query: { limit: 100 } });
  await call("GET /v1/portal/delegations", "/v1/portal/delegations", { bearer: session, query: { limit: 100 } });
  await call("GET /v1/portal/agreements", "/v1/portal/agreements", { bearer: session, query: { limit: 100 } });

  // Approvals: a second grant of the demo agent needs the principal above 20 USD ("human present").
  const approvalGrant = await approvalDemoGrant(now.getTime());
  if (!server.app.pool) throw new Error("the capture server has no database");
  const pool = server.app.pool;
  await withTransaction(pool, async (c) => {
    await upsertDelegation(c, approvalGrant, { orgId: await orgOfKey(server, operator) });
  });
  const stepUpAction = { ...action, action_id: "act_9b21d4c0", amount: 30, proposed_at: new Date().toISOString() };
  const stepUp = expect2xx(
    "step-up",
    await call("POST /v1/verify", "/v1/verify", {
      bearer: operator,
      body: { agent_id: "agent_demo", agreement_id: "agr_demo_approvals", action: stepUpAction },
      record: false,
    }),
  );
  const approvalId = stepUp.approval_id as string;
  const pending = expect2xx(
    "approval",
    await call("GET /v1/approvals/{approval_id}", `/v1/approvals/${approvalId}`, { bearer: operator, params: { approval_id: approvalId } }),
  );
  await call("GET /v1/approvals/{approval_id}", "/v1/approvals/apr_000000000000000000000000", { bearer: operator, params: { approval_id: approvalId } });
  await call("GET /v1/portal/approvals", "/v1/portal/approvals", { bearer: session });
  const content = pending.content as ApprovalContent;
  const signature = await signRecord(decisionPayload(content, "approve"), demoPrincipalSigner(), APPROVAL_TYP);
  await call("POST /v1/approvals/{approval_id}/decision", `/v1/approvals/${approvalId}/decision`, {
    body: { decision: "approve", signature: await signRecord(decisionPayload(content, "decline"), demoPrincipalSigner(), APPROVAL_TYP) },
    params: { approval_id: approvalId },
    record: true,
  });
  expect2xx(
    "decision",
    await call("POST /v1/approvals/{approval_id}/decision", `/v1/approvals/${approvalId}/decision`, {
      body: { decision: "approve", signature },
      params: { approval_id: approvalId },
    }),
  );
  await call("POST /v1/approvals/{approval_id}/decision", `/v1/approvals/${approvalId}/decision`, {
    body: { decision: "approve", signature },
    params: { approval_id: approvalId },
  });

  // Revocations last: they end the demo grant.
  const agreement = expect2xx("agreement", await call("GET /v1/agreements/{agreement_id}", "/v1/agreements/agr_demo", { bearer: operator, record: false }))
    .agreement as IntentAgreement;
  const revocation = await signRevocation(
    agreement,
    { reason: "trip cancelled", at: new Date(now.getTime() + 1000).toISOString().replace(/\.\d+Z$/, "Z") },
    demoPrincipalSigner(),
  );
  const unsignedPush = { at: new Date(now.getTime() + 2000).toISOString().replace(/\.\d+Z$/, "Z"), svc_revocation_push: "1", revocation };
  const notifier = signerFromJwk(secrets.notifier.private_jwk);
  const push = { ...unsignedPush, signature: await signJws(canonicalBytes(unsignedPush), notifier, PUSH_TYP) };
  await call("POST /v1/revocations/push", "/v1/revocations/push", { body: push });
  await call("POST /v1/revocations/push", "/v1/revocations/push", { body: { ...push, at: "2030-01-01T00:00:00Z" } });
  await call("GET /v1/revocations", "/v1/revocations", { query: { after: 0, limit: 100 } });
  const revoked = expect2xx(
    "portal revoke",
    await call("POST /v1/portal/delegations/{delegation_id}/revoke", "/v1/portal/delegations/del_demo/revoke", {
      bearer: session,
      params: { delegation_id: "del_demo" },
      body: { reason: "lost my card" },
    }),
  );
  await call("POST /v1/portal/delegations/{delegation_id}/revoke", "/v1/portal/delegations/del_other/revoke", {
    bearer: session,
    params: { delegation_id: "del_demo" },
    body: {},
  });
  await call("DELETE /svc/delegations/{id}", "/svc/delegations/del_unknown", { bearer: operator, params: { id: "del_demo" } });
  // The same revocation through DELETE (what it answered here is the repeat: the portal revoked first).
  examples["DELETE /svc/delegations/{id}"] = {
    ...examples["DELETE /svc/delegations/{id}"],
    params: { id: "del_demo" },
    request: { reason: "card reported stolen" },
    responses: { ...examples["DELETE /svc/delegations/{id}"]?.responses, 200: revoked },
  };
  await call("DELETE /v1/sessions/current", "/v1/sessions/current", { bearer: session });
  await call("DELETE /v1/sessions/current", "/v1/sessions/current", { bearer: session });
}

/** A second demo grant (agreement agr_demo_approvals) that needs the demo principal's approval above 20 USD. */
async function approvalDemoGrant(nowMs: number): Promise<Delegation> {
  const intent = seededDemoIntent(nowMs);
  const agreement = await buildSignedAgreement(
    { agreement_id: "agr_demo_approvals", mandates: [demoMandate(intent, nowMs)], at: new Date(nowMs).toISOString(), status: "active" },
    demoPrincipalSigner(),
  );
  const base = demoDelegation(intent, nowMs);
  return {
    ...base,
    delegation_id: "del_demo_approvals",
    purpose: "public demo purchases, the principal approves above 20 USD",
    scope: { ...base.scope, maximum_amount: 50, cumulative_maximum: 500 },
    conditions: [{ type: "principal_present", above_amount: 20, currency: "USD" }],
    intent_agreement: agreement,
  };
}

/** The organization of an API key. */
async function orgOfKey(server: Server, token: string): Promise<string> {
  const found = server.app.pool ? await findKeyByToken(server.app.pool, token) : undefined;
  if (!found) throw new Error("the demo wallet key is not stored");
  return found.org_id;
}

try {
  await main();
} catch (e) {
  console.error(`openapi examples: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
  process.exitCode = 1;
}
