/**
 * Changing a signed agreement: amending one intent or adding another. Both return a new
 * agreement (the input is never changed), sign the new mandate as the principal (so it has a
 * new mandate hash) and append a hash-chained event.
 *
 * Rules: the event log must be intact and allow the move (`amended`/`added` only in accepted or
 * active); the signer must be the principal key the live mandates already name; an amendment
 * keeps the `intent_id`, moves the old version to the end of `mandate_history`, and may not
 * change the currency of an intent that has ledger entries; an added intent needs a new
 * `intent_id`, and cannot be added while ledger entries rely on "the only mandate" (no
 * `intent_id`). Acknowledgements of the old hash stay in the record and no longer count.
 */
import type { HashString } from "../canonical/index.js";
import type { Signer } from "../jose/index.js";
import { AgreementError } from "./errors.js";
import { buildEvent, verifyEventChain } from "./events.js";
import { entryIntent } from "./ledger.js";
import { mandateHash, signMandate } from "./mandate.js";
import { assertSignerIsPrincipal } from "./principal.js";
import { nextStatus, statusFromEvents } from "./state.js";
import type { Actor, AgreementStatus, EventType, IntentAgreement, Mandate } from "./types.js";

/** Who records the change, when, and the new event's id. */
export interface ChangeOptions {
  at: string;
  actor: Actor;
  event_id: string;
}

/** Fields an amendment may change (the intent id, signature and algorithm are not among them). */
export type MandateChanges = Partial<Omit<Mandate, "intent_id" | "signature" | "algorithm">>;

function statusAfter(agreement: IntentAgreement, type: EventType): AgreementStatus {
  const chain = verifyEventChain(agreement.events, agreement.agreement_id);
  if (chain !== undefined) throw new AgreementError("EVENT_LOG_INVALID", chain);
  const current = statusFromEvents(agreement.events);
  if ("problem" in current) throw new AgreementError("EVENT_LOG_INVALID", current.problem);
  const next = nextStatus(current.status, type);
  if (next === undefined) throw new AgreementError("ILLEGAL_TRANSITION", `an ${type} event is not allowed in status ${current.status}`);
  return next;
}

function withEvent(
  agreement: IntentAgreement,
  type: EventType,
  mandateHashValue: HashString,
  detail: Record<string, unknown>,
  opts: ChangeOptions,
): IntentAgreement["events"] {
  if (agreement.events.some((e) => e.event_id === opts.event_id)) {
    throw new AgreementError("EVENT_LOG_INVALID", `event_id ${JSON.stringify(opts.event_id)} is already in the log`);
  }
  const event = buildEvent(agreement.events[agreement.events.length - 1], {
    event_id: opts.event_id,
    type,
    at: opts.at,
    actor: opts.actor,
    agreement_id: agreement.agreement_id,
    mandate_hash: mandateHashValue,
    detail,
  });
  return [...agreement.events, event];
}

/**
 * Amends intent `intentId`: applies `changes`, signs the result with `signer`, keeps the old
 * version in `mandate_history` and appends an `amended` event whose detail names the intent,
 * the previous and the new mandate hash. Throws AgreementError.
 */
export async function amendMandate(
  agreement: IntentAgreement,
  intentId: string,
  changes: MandateChanges,
  signer: Signer,
  opts: ChangeOptions,
): Promise<IntentAgreement> {
  const status = statusAfter(agreement, "amended");
  const index = agreement.mandates.findIndex((m) => m.intent_id === intentId);
  const old = agreement.mandates[index];
  if (!old) throw new AgreementError("INTENT_NOT_FOUND", `no live intent ${JSON.stringify(intentId)}`);
  const smuggled = (changes as Partial<Mandate>).intent_id;
  if (smuggled !== undefined && smuggled !== intentId) throw new AgreementError("INTENT_ID_CHANGED", "an amendment keeps the intent_id");
  assertSignerIsPrincipal(agreement.mandates, signer);
  const { signature: _s, algorithm: _a, ...changed } = { ...old, ...changes, intent_id: intentId } as Mandate;
  if (changed.currency !== old.currency && (agreement.ledger ?? []).some((e) => entryIntent(e, agreement.mandates) === intentId)) {
    throw new AgreementError("CURRENCY_CHANGE_WITH_SPEND", `intent ${intentId} has ledger entries in ${old.currency}; its currency cannot change`);
  }
  const signed = await signMandate(changed, signer);
  const oldHash = mandateHash(old);
  const newHash = mandateHash(signed);
  const mandates = agreement.mandates.map((m, i) => (i === index ? signed : m));
  return {
    ...agreement,
    status,
    updated_at: opts.at,
    mandates,
    mandate_history: [...(agreement.mandate_history ?? []), old],
    events: withEvent(agreement, "amended", newHash, { intent_id: intentId, previous_mandate_hash: oldHash, mandate_hash: newHash }, opts),
  };
}

/**
 * Adds a new intent: signs `mandate` with `signer` and appends it with an `added` event whose
 * detail names the intent and its mandate hash. Throws AgreementError.
 */
export async function addMandate(agreement: IntentAgreement, mandate: Mandate, signer: Signer, opts: ChangeOptions): Promise<IntentAgreement> {
  const status = statusAfter(agreement, "added");
  if (agreement.mandates.some((m) => m.intent_id === mandate.intent_id)) {
    throw new AgreementError("INTENT_DUPLICATE", `intent ${JSON.stringify(mandate.intent_id)} already exists`);
  }
  if ((agreement.ledger ?? []).some((e) => e.intent_id === undefined)) {
    throw new AgreementError("LEDGER_ENTRIES_UNATTRIBUTED", "ledger entries without intent_id would no longer name their intent");
  }
  assertSignerIsPrincipal(agreement.mandates, signer);
  const signed = await signMandate(mandate, signer);
  const hash = mandateHash(signed);
  return {
    ...agreement,
    status,
    updated_at: opts.at,
    mandates: [...agreement.mandates, signed],
    events: withEvent(agreement, "added", hash, { intent_id: signed.intent_id, mandate_hash: hash }, opts),
  };
}
