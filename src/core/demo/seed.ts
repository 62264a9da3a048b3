/**
 * What `POST /v1/admin/seed-demo` (and `writ dev`) puts into a live registry, built purely:
 * three PUBLIC demo organizations with deterministic PUBLIC API keys, the demo agent (the
 * public demo agent key), and a demo delegation binding a demo agreement signed by the public
 * demo principal key (docs/demo.md, "Seeded demo data").
 *
 * The key tokens are `bur_` + base64url(SHA-256(label)): anyone can re-derive them, and
 * re-seeding gives the same tokens. They are public by design: a registry seeded with them
 * must never hold anything but demo data.
 *
 * The grant runs for exactly seven days from the seeding (the longest standard grant, which
 * needs no human approval): per payment at most 50 USD, in all at most 500 USD.
 */
import { mandateHash, signAcknowledgement, type AckRole, type IntentAgreement } from "../agreement/index.js";
import { signerFromSeed, type Signer } from "../jose/index.js";
import { sha256 } from "../canonical/index.js";
import type { Delegation } from "../delegation/index.js";
import { formatKeyToken, type OrgType } from "../registry/index.js";
import { formatInstant } from "../time/index.js";
import { buildDemoAgreement, demoDelegation } from "./build.js";
import type { DemoIntent } from "./request.js";

/** One seeded organization: who it is and the label its public key token derives from. */
export interface DemoSeedOrg {
  role: "operator" | "wallet" | "merchant";
  name: string;
  org_type: OrgType;
  keyLabel: string;
  /** The acknowledgement role it countersigns the demo agreement with (payment-side only). */
  ackRole?: AckRole;
}

/** The seeded organizations, in seeding order. */
export const DEMO_SEED_ORGS: readonly DemoSeedOrg[] = [
  { role: "operator", name: "Writ public demo operator", org_type: "agent_operator", keyLabel: "writ demo operator key" },
  { role: "wallet", name: "Writ public demo wallet", org_type: "wallet", keyLabel: "writ demo wallet key", ackRole: "psp" },
  { role: "merchant", name: "Writ public demo merchant", org_type: "merchant", keyLabel: "writ demo merchant key", ackRole: "merchant" },
];

/**
 * The PUBLIC key a seeded payment-side organization signs its acknowledgements with: the
 * seeding registers it as that organization's acknowledgement key (POST
 * /v1/orgs/{org_id}/ack-keys), without which its acknowledgement would name nobody.
 */
export function demoAckSigner(role: DemoSeedOrg["role"]): Signer {
  return signerFromSeed(sha256(`writ demo ${role}`).toString("hex"));
}

/**
 * `agreement` countersigned by the seeded payment-side organizations (the wallet as `psp`, the
 * merchant as `merchant`; `id` their org ids, which the seeding learns as it creates them), so
 * that their public demo keys may record the outcomes of its payments (docs/verify.md, "Who
 * records outcomes"). The signing keys are public: their Ed25519 seeds are SHA-256 of
 * "writ demo wallet" and "writ demo merchant".
 */
export async function acknowledgedByDemoParties(
  agreement: IntentAgreement,
  orgIds: ReadonlyMap<DemoSeedOrg["role"], string>,
  nowMs: number,
): Promise<IntentAgreement> {
  const acks = [...(agreement.acknowledgements ?? [])];
  for (const o of DEMO_SEED_ORGS) {
    const id = orgIds.get(o.role);
    if (!o.ackRole || id === undefined) continue;
    const signer = demoAckSigner(o.role);
    for (const m of agreement.mandates) {
      acks.push(
        await signAcknowledgement(
          { agreement_id: agreement.agreement_id, mandate_hash: mandateHash(m), role: o.ackRole, id, at: formatInstant(nowMs) },
          signer,
        ),
      );
    }
  }
  return { ...agreement, acknowledgements: acks };
}

/** The pseudonymous principal id the demo agent is registered with. */
export const DEMO_SEED_PRINCIPAL_ID = "prn_demo";
/**
 * The PUBLIC sign-in address of the demo principal: the seeding registers it as `prn_demo`'s
 * portal e-mail, so a sign-in link for it (the dev mailbox shows it to anyone) signs in as the
 * demo principal. Public like the demo keys: a registry seeded with it holds only demo data.
 */
export const DEMO_PRINCIPAL_EMAIL = "demo@writ.dev";
/** Lifetime of the seeded grant: seven days. */
export const DEMO_SEED_LIFETIME_MS = 7 * 24 * 3600_000;
/** Per-payment ceiling and total budget of the seeded grant (USD). */
export const DEMO_SEED_LIMITS = { currency: "USD", maximum_amount: 50, cumulative_maximum: 500 } as const;

/** The 32 bytes a demo key token is made of: SHA-256 of its label. */
export function demoKeyBytes(label: string): Buffer {
  return sha256(label);
}

/** The public demo key token of `label`. */
export function demoKeyToken(label: string): string {
  return formatKeyToken(demoKeyBytes(label));
}

/** The seeded intent at `nowMs`. */
export function seededDemoIntent(nowMs: number): DemoIntent {
  return {
    maximum_amount: DEMO_SEED_LIMITS.maximum_amount,
    currency: DEMO_SEED_LIMITS.currency,
    purpose: "public demo purchases",
    natural_language: "Buy small things for the public demo.",
    include_expiry: true,
    time_limit: formatInstant(nowMs + DEMO_SEED_LIFETIME_MS),
  };
}

/** The seeded delegation, carrying the seeded agreement as its `intent_agreement`. */
export async function seededDemoDelegation(nowMs: number): Promise<Delegation & { intent_agreement: IntentAgreement }> {
  const intent = seededDemoIntent(nowMs);
  const agreement = await buildDemoAgreement(intent, nowMs);
  const base = demoDelegation(intent, nowMs);
  return {
    ...base,
    expires_at: formatInstant(nowMs + DEMO_SEED_LIFETIME_MS),
    purpose: "public demo purchases (seeded)",
    scope: { ...base.scope, maximum_amount: DEMO_SEED_LIMITS.maximum_amount, cumulative_maximum: DEMO_SEED_LIMITS.cumulative_maximum },
    intent_agreement: agreement,
  };
}
