/**
 * What the controller checks of a delegation, and what its status says. Pure (no I/O).
 *
 * `checkDelegationSpec`: the spec mapped to its record (`delegationFromSpec`) and validated with
 * the JSON Schema (SPEC_INVALID naming the spec path and rule); then prepared
 * (`prepareDelegation`): malformed conditions (CONDITION_INVALID), a record that fails closed
 * (times that do not parse or end before they start, an unusable scope: SPEC_INVALID), the
 * chain's continuity (CHAIN_BROKEN) and narrowing (CHAIN_SCOPE_WIDENED, naming the link and the
 * field), and an embedded `intent_agreement`'s integrity and binding.
 *
 * `delegationView`: the effective status (`effectiveStatus` at `now` with the stored
 * revocations), why it is suspended when it is (`suspensionReason`), the effective expiry (the
 * earliest of the grant's and every chain link's), and when to look again (the next expiry or
 * the next minute a time condition can change).
 */
import { prepareAgreement } from "../../core/agreement/index.js";
import { delegationFromSpec } from "../../core/crd/index.js";
import {
  chainCopyProblems,
  prepareDelegation,
  validateCondition,
  withStoredChain,
  type Delegation,
  type DelegationStatus,
  type PreparedDelegationWithProblems,
  type StoredAncestor,
} from "../../core/delegation/index.js";
import {
  type Finding,
  DEFAULT_POLICY,
  effectiveStatus,
  evaluateChain,
  evaluateCondition,
  suspensionReason,
  type EvalContext,
  type PreparedDelegation,
} from "../../core/evaluate/index.js";
import { validate } from "../../core/schemas/index.js";
import { privateKeyRefusals, schemaRefusal, type Refusal } from "../spec-errors.js";
import { bindingRefusals, integrityRefusals } from "./agreement-checks.js";

/** The outcome of `checkDelegationSpec`. */
export interface DelegationCheck {
  record?: Delegation;
  prepared?: PreparedDelegationWithProblems;
  refusals: Refusal[];
}

/** Validates and prepares a Delegation's spec at `now` (epoch ms); see the module comment. */
export async function checkDelegationSpec(spec: unknown, now: number): Promise<DelegationCheck> {
  const secrets = privateKeyRefusals(spec);
  if (secrets.length > 0) return { refusals: secrets };
  const v = validate<Delegation>("delegation", delegationFromSpec(spec));
  if (!v.ok) return { refusals: [schemaRefusal(v.errors)] };
  const record = v.value;
  const prepared = prepareDelegation(record);
  const refusals: Refusal[] = [];
  record.conditions.forEach((c, i) => {
    const why = validateCondition(c);
    if (why !== undefined) refusals.push({ condition: "Valid", code: "CONDITION_INVALID", message: `spec.conditions[${i}]: ${why}` });
  });
  const granted = Date.parse(record.granted_at);
  const expires = Date.parse(record.expires_at);
  if (Number.isFinite(granted) && Number.isFinite(expires) && expires <= granted) {
    refusals.push({
      condition: "Valid",
      code: "SPEC_INVALID",
      message: `spec.expires_at (${record.expires_at}) must be after spec.granted_at (${record.granted_at}): this grant would end before it starts`,
    });
  } else if (prepared.expiresAtMs === 0 && (prepared.problems ?? []).length > 0) {
    refusals.push({ condition: "Valid", code: "SPEC_INVALID", message: `the grant cannot bound authority: ${prepared.problems.join("; ")}` });
  }
  if (prepared.chainBroken !== undefined)
    refusals.push({ condition: "ChainValid", code: "CHAIN_BROKEN", message: `spec.delegation_chain: ${prepared.chainBroken}` });
  if (prepared.chainWidened !== undefined) {
    refusals.push({ condition: "ChainValid", code: "CHAIN_SCOPE_WIDENED", message: `spec.delegation_chain: ${prepared.chainWidened}` });
  }
  if (record.intent_agreement !== undefined) {
    const pa = await prepareAgreement(record.intent_agreement, { now });
    refusals.push(...integrityRefusals(pa, "spec.intent_agreement"), ...bindingRefusals(pa, prepared, "spec.intent_agreement"));
  }
  return { record, prepared, refusals };
}

/**
 * The chain of `prepared` judged against the delegations its links cite as stored
 * (`ancestors[i]` for link i, undefined when not stored; `orgId` the namespace's organization):
 * CHAIN_BROKEN for a link that is not stored, another organization's, filed under other
 * ancestors, of another root principal, or whose declared copy differs from the stored record;
 * CHAIN_SCOPE_WIDENED when the grant widens its stored parent. Findings the declared copy
 * already gave (`checkDelegationSpec`) are not repeated.
 */
export function storedChainRefusals(prepared: PreparedDelegationWithProblems, orgId: string, ancestors: readonly (StoredAncestor | undefined)[]): Refusal[] {
  const out: Refusal[] = [];
  const stored = withStoredChain(prepared, orgId, ancestors);
  if (stored.chainBroken !== undefined && stored.chainBroken !== prepared.chainBroken) {
    out.push({ condition: "ChainValid", code: "CHAIN_BROKEN", message: `spec.delegation_chain: ${stored.chainBroken}` });
  }
  if (stored.chainWidened !== undefined && stored.chainWidened !== prepared.chainWidened) {
    out.push({ condition: "ChainValid", code: "CHAIN_SCOPE_WIDENED", message: `spec.delegation_chain (as stored): ${stored.chainWidened}` });
  }
  for (const why of chainCopyProblems(prepared.delegation, ancestors)) {
    out.push({
      condition: "ChainValid",
      code: "CHAIN_BROKEN",
      message: `spec.delegation_chain: ${why}; derive the chain from the stored parent (writ delegation narrow)`,
    });
  }
  return out;
}

/** What the status reports of a stored delegation. */
export interface DelegationView {
  effective: DelegationStatus;
  /** Effective lapse time, epoch ms: the earliest of the grant's and every chain link's expiry. */
  expiresAtMs: number;
  /** Chain findings at `now` (CHAIN_LINK_REVOKED, CHAIN_LINK_EXPIRED; from a stored chain also CHAIN_BROKEN, CHAIN_SCOPE_WIDENED), first first. */
  chainFindings: Finding[];
  /** When the effective status may change next (expiry, a time condition), epoch ms; undefined: never by itself. */
  nextChangeMs?: number;
  /** Why it is suspended, in plain words (`suspended: ...`), when it is. */
  suspended?: string;
}

const TIME_CONDITIONS: ReadonlySet<string> = new Set(["time_window", "business_hours_only"]);
const MINUTE = 60_000;
/** How far ahead a time condition's next change is searched (minute steps). */
const CONDITION_HORIZON_MS = 24 * 3600_000;

function context(now: number, revoked: ReadonlySet<string>): EvalContext {
  return {
    now,
    policy: DEFAULT_POLICY,
    revocations: { isDelegationRevoked: (id) => revoked.has(id), isAgreementRevoked: () => false },
  };
}

/** The next minute at which a time condition's verdict differs from now's, within a day. */
function nextConditionChange(p: PreparedDelegation, now: number): number | undefined {
  const timed = p.conditions.filter((c) => typeof c === "object" && c !== null && TIME_CONDITIONS.has(c.type));
  if (timed.length === 0) return undefined;
  const failing = (t: number) => timed.map((c) => evaluateCondition(c, undefined, context(t, new Set())) !== undefined).join();
  const start = failing(now);
  for (let t = Math.floor(now / MINUTE) * MINUTE + MINUTE; t <= now + CONDITION_HORIZON_MS; t += MINUTE) {
    if (failing(t) !== start) return t;
  }
  return now + CONDITION_HORIZON_MS;
}

/**
 * The effective view of `record` (as stored: its status is `revoked` once revoked) at `now`, with
 * `revoked` the ids among it and its chain that the store lists as revoked. With `stored` (the
 * record's organization and the stored delegations its links cite), the chain is the one the
 * stored parents give (core `withStoredChain`, as verify judges it): their revocation and expiry
 * count, and the findings also say when the chain no longer connects or narrows
 * (CHAIN_BROKEN, CHAIN_SCOPE_WIDENED); without it, the record's own copies of its links.
 */
export function delegationView(
  record: Delegation,
  now: number,
  revoked: ReadonlySet<string>,
  stored?: { orgId: string | null; ancestors: readonly (StoredAncestor | undefined)[] },
): DelegationView {
  const own = prepareDelegation(record);
  const p = stored ? withStoredChain(own, stored.orgId, stored.ancestors) : own;
  const ctx = context(now, revoked);
  const effective = effectiveStatus(p, ctx);
  const expiresAtMs = Math.min(p.expiresAtMs, ...p.chain.map((l) => l.expiresAtMs));
  const kept = new Set(
    stored ? ["CHAIN_LINK_REVOKED", "CHAIN_LINK_EXPIRED", "CHAIN_BROKEN", "CHAIN_SCOPE_WIDENED"] : ["CHAIN_LINK_REVOKED", "CHAIN_LINK_EXPIRED"],
  );
  const chainFindings = evaluateChain(p, ctx).filter((f) => kept.has(f.code));
  const view: DelegationView = { effective, expiresAtMs, chainFindings };
  if (effective === "suspended") view.suspended = suspensionReason(p, ctx);
  if (effective === "active" || effective === "suspended") {
    const candidates = [expiresAtMs > now ? expiresAtMs : undefined, nextConditionChange(p, now)].filter((x): x is number => x !== undefined);
    if (candidates.length > 0) view.nextChangeMs = Math.min(...candidates);
  }
  return view;
}
