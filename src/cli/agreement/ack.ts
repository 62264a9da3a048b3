/**
 * `writ agreement ack`: a merchant, PSP, issuer or agent countersigns the CURRENT mandate
 * hash of each live intent (or of the `--intent`s named). The mandate signatures are verified
 * first: nobody countersigns a mandate that does not verify. Each acknowledgement is added to
 * `acknowledgements` (replacing an earlier one by the same role and id for the same hash) and
 * recorded as an `acknowledged` event; acknowledgements of older hashes stay and count as
 * "outdated".
 */
import {
  buildEvent,
  mandateHash,
  nextStatus,
  signAcknowledgement,
  statusFromEvents,
  verifyMandate,
  type AckRole,
  type IntentAgreement,
  type Mandate,
} from "../../core/agreement/index.js";
import { CliError, usageError } from "../errors.js";
import { readPrivateKeyFile } from "../files.js";
import { atFlag, required } from "../flags.js";
import { outputFormat, renderData } from "../output.js";
import { defineVerb } from "../verb.js";
import { agreementManifest, nextEventId, readAgreementDocument } from "./document.js";

const ROLES: readonly AckRole[] = ["merchant", "psp", "issuer", "agent"];

/** The live mandates `intents` names (all when empty); throws CHECK_FAILED for an unknown intent. */
export function selectMandates(record: IntentAgreement, intents: readonly string[]): Mandate[] {
  if (intents.length === 0) return record.mandates;
  const known = record.mandates.map((m) => m.intent_id);
  for (const id of intents) {
    if (!known.includes(id)) throw new CliError("CHECK_FAILED", `no live intent ${JSON.stringify(id)}; the agreement holds ${known.join(", ")}`);
  }
  return record.mandates.filter((m) => intents.includes(m.intent_id));
}

/** Throws CHECK_FAILED unless the event log allows an event of `type` now. */
export function assertMove(record: IntentAgreement, type: "acknowledged" | "revoked"): void {
  const current = statusFromEvents(record.events);
  if ("problem" in current) throw new CliError("CHECK_FAILED", `the agreement's event log: ${current.problem}`);
  if (nextStatus(current.status, type) === undefined) {
    throw new CliError("CHECK_FAILED", `the agreement is ${current.status}: an ${type} event is not allowed`);
  }
}

/** `writ agreement ack`. */
export const agreementAck = defineVerb({
  name: "agreement ack",
  summary: "countersign the current mandate hash(es) of an IntentAgreement manifest",
  synopsis: "--in agreement.yaml --role merchant|psp|issuer|agent --id ID --key-file K [--domain D] [--intent I ...] [--at TIME] [--output yaml|json]",
  flags: [
    ["--in <file>", "the IntentAgreement manifest"],
    ["--role <role>", "merchant, psp, issuer or agent"],
    ["--id <id>", "who acknowledges (e.g. the merchant id)"],
    ["--key-file <file>", "the acknowledging party's private JWK; its public key goes into the acknowledgement"],
    ["--domain <domain>", "the domain whose published keys vouch for this key (optional)"],
    ["--intent <id>", "acknowledge only this intent (repeatable; default every live intent)"],
    ["--at <time>", "RFC 3339 time of the acknowledgement (default now)"],
    ["--output yaml|json", "manifest format (default yaml)"],
  ],
  notes: ["Exit status: 0 printed; 1 the manifest is invalid, a mandate signature does not verify or the agreement is revoked/expired; 2 bad usage."],
  examples: ["writ agreement ack --in agreement.yaml --role merchant --id merchant_42 --key-file merchant.private.jwk.json --domain shop.example > acked.yaml"],
  options: {
    in: { type: "string" },
    role: { type: "string" },
    id: { type: "string" },
    "key-file": { type: "string" },
    domain: { type: "string" },
    intent: { type: "string", multiple: true },
    at: { type: "string" },
    output: { type: "string" },
  },
  async run(values, io) {
    const input = required(values.in, "in", "the IntentAgreement manifest");
    const role = required(values.role, "role", "merchant, psp, issuer or agent") as AckRole;
    if (!ROLES.includes(role)) throw usageError(`--role must be one of ${ROLES.join(", ")}, not ${JSON.stringify(values.role)}`);
    const id = required(values.id, "id", "who acknowledges");
    const keyFile = required(values["key-file"], "key-file", "the acknowledging party's private JWK file");
    const format = outputFormat(values.output, ["yaml", "json"] as const, "yaml");
    const at = atFlag(values.at, io.now());
    const signer = readPrivateKeyFile(keyFile, io);
    const doc = readAgreementDocument(input);
    let record = doc.record;
    assertMove(record, "acknowledged");
    const targets = selectMandates(record, values.intent ?? []);
    for (const m of targets) {
      const state = await verifyMandate(m);
      if (state !== "valid") throw new CliError("CHECK_FAILED", `intent ${m.intent_id}'s mandate signature is ${state}; refusing to acknowledge it`);
    }
    for (const m of targets) {
      const hash = mandateHash(m);
      const ack = await signAcknowledgement(
        { agreement_id: record.agreement_id, mandate_hash: hash, role, id, at, ...(values.domain !== undefined ? { domain: values.domain } : {}) },
        signer,
      );
      const kept = (record.acknowledgements ?? []).filter((a) => !(a.role === role && a.id === id && a.mandate_hash === hash));
      const event = buildEvent(record.events.at(-1), {
        event_id: nextEventId(record),
        type: "acknowledged",
        at,
        actor: { role, id },
        agreement_id: record.agreement_id,
        mandate_hash: hash,
        detail: { intent_id: m.intent_id, role, id, key: signer.kid },
      });
      record = { ...record, updated_at: at, acknowledgements: [...kept, ack], events: [...record.events, event] };
      if (!(m.required_acknowledgements ?? []).includes(role)) {
        io.stderr(`note: intent ${m.intent_id} does not require a ${role} acknowledgement; it is recorded anyway\n`);
      }
    }
    io.stdout(renderData(agreementManifest({ ...doc, record }), format));
    io.stderr(`acknowledged ${targets.length} mandate hash(es) as ${role} ${id} with ${signer.kid}\n`);
    return 0;
  },
});
