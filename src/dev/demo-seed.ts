/**
 * `writ dev`'s demo data: at start it seeds the public demo organizations, keys, agent and
 * agreement with the same function as `POST /v1/admin/seed-demo` (idempotent: a restart finds
 * them present), and returns the lines to print, including the portal's sign-in page (the
 * demo principal's public address signs in there) and a ready-to-paste curl for
 * `POST /v1/verify` that answers ALLOW while the seven-day demo grant lasts.
 */
import type { FastifyInstance } from "fastify";
import { DEMO_DELEGATION_ID, DEMO_PRINCIPAL_EMAIL, DEMO_SEED_ORGS, DEMO_SEED_PRINCIPAL_ID } from "../core/demo/index.js";
import { defaultScopes } from "../core/registry/index.js";
import { parseInstant } from "../core/time/index.js";
import { loadDelegation } from "../store/index.js";
import { seedDemo } from "../api/routes/admin/seed-demo.js";
import { logAppendOptions } from "../api/routes/shared/registry-log.js";

/** Seeds the demo data of a running dev server at `url`; the lines to print. */
export async function seedDevDemo(app: FastifyInstance, url: string, now: Date): Promise<string[]> {
  if (!app.settings.allowDemoSeed) return ["  demo data: not seeded (BUR_ALLOW_DEMO_SEED is not 1)"];
  if (!app.pool || !app.logSigner) return ["  demo data: not seeded (no database or no log signing key)"];
  const out = await seedDemo(app.pool, { now, signer: app.logSigner, logOptions: logAppendOptions(app, now) });
  const grant = await loadDelegation(app.pool, DEMO_DELEGATION_ID, out.agent_id);
  const expiresAt = parseInstant(grant?.record.expires_at);
  const body = {
    agent_id: out.agent_id,
    agreement_id: out.agreement_id,
    action: {
      action_id: `act_dev_${now.getTime()}`,
      action_type: "purchase",
      amount: 12.5,
      currency: "USD",
      proposed_at: now.toISOString(),
      merchant: "Corner Market",
    },
  };
  const lines = [
    `  demo data: ${out.already_present ? "already present" : "seeded now"} (PUBLIC demo keys, see docs/demo.md)`,
    ...DEMO_SEED_ORGS.map((o) => {
      const key = o.role === "operator" ? out.operator_key : o.role === "wallet" ? out.wallet_key : out.merchant_key;
      return `  demo ${`${o.role} key:`.padEnd(13)} ${key}  (${defaultScopes(o.org_type).join(", ")})`;
    }),
  ];
  const unusable = grant?.revokedAt
    ? "the demo delegation is revoked (after five DENYs within a minute the service revokes the grant: the burst rule, docs/evaluation.md)"
    : expiresAt === undefined || expiresAt <= now.getTime()
      ? `the demo grant expired at ${grant?.record.expires_at ?? "?"}`
      : null;
  if (unusable) lines.push(`  note: ${unusable}; verify answers DENY. \`npm start -- --reset\` starts afresh.`);
  lines.push(
    `  portal: ${url}/portal/sign-in  (sign in as ${DEMO_PRINCIPAL_EMAIL}, the PUBLIC demo principal ${DEMO_SEED_PRINCIPAL_ID}: the page offers the link from the dev mailbox)`,
    unusable
      ? "  a verify (it answers DENY now; a new action_id for each try):"
      : "  a verify that answers ALLOW (the same action_id again returns the same answer; a new action_id for each new try):",
    `  curl -s ${url}/v1/verify -H 'authorization: Bearer ${out.operator_key}' -H 'content-type: application/json' -d '${JSON.stringify(body)}'`,
  );
  return lines;
}
