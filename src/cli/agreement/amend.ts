/**
 * `writ agreement amend`: a new signed version of one intent. The old mandate moves to
 * `mandate_history`, an `amended` event names both hashes, and acknowledgements of the old
 * hash stay but count as "outdated" (`amendMandate`). Only the principal key may amend.
 *
 * Rendering rule: a rendering the CLI generated (equal to `renderMandate` of the old mandate)
 * is regenerated for the new terms, so the principal never signs a text that describes old
 * limits; a hand-written rendering is kept and a warning asks to check it (`--set rendering=`).
 */
import { AgreementError, amendMandate, renderMandate, type Mandate, type MandateChanges } from "../../core/agreement/index.js";
import { CliError, usageError } from "../errors.js";
import { readPrivateKeyFile } from "../files.js";
import { atFlag, required, setPairs } from "../flags.js";
import { outputFormat, renderData } from "../output.js";
import { applySets, typedSets, type FieldType } from "../set-values.js";
import { defineVerb } from "../verb.js";
import { agreementManifest, nextEventId, principalId, readAgreementDocument } from "./document.js";

/** Mandate fields `--set` may change. */
export const MANDATE_FIELDS: Readonly<Record<string, FieldType>> = {
  purpose: "string",
  natural_language: "string",
  currency: "string",
  maximum_amount: "amount",
  cumulative_maximum: "amount",
  categories: "list",
  merchants: "list",
  items: "list",
  action_types: "list",
  not_before: "string",
  expires_at: "string",
  required_acknowledgements: "list",
  rendering: "string",
};

/** `writ agreement amend`. */
export const agreementAmend = defineVerb({
  name: "agreement amend",
  summary: "sign a new version of one intent of an IntentAgreement manifest",
  synopsis: "--in agreement.yaml --intent ID --set field=value [--set ...] --key-file principal.private.jwk.json [--at TIME] [--output yaml|json]",
  flags: [
    ["--in <file>", "the IntentAgreement manifest"],
    ["--intent <id>", "the intent_id to amend"],
    ["--set <field=value>", `repeatable; fields: ${Object.keys(MANDATE_FIELDS).join(", ")} (lists comma-separated)`],
    ["--key-file <file>", "the principal's private JWK (the key the mandates name)"],
    ["--at <time>", "RFC 3339 time of the amendment (default now)"],
    ["--output yaml|json", "manifest format (default yaml)"],
  ],
  notes: ["Exit status: 0 printed; 1 the manifest or the amended agreement is invalid, or the key is not the principal's; 2 bad usage."],
  examples: [
    "writ agreement amend --in agreement.yaml --intent int_travel --set maximum_amount=150 --set merchants=db-bahn,hotel-adlon --key-file principal.private.jwk.json > amended.yaml",
  ],
  options: {
    in: { type: "string" },
    intent: { type: "string" },
    set: { type: "string", multiple: true },
    "key-file": { type: "string" },
    at: { type: "string" },
    output: { type: "string" },
  },
  async run(values, io) {
    const input = required(values.in, "in", "the IntentAgreement manifest");
    const intent = required(values.intent, "intent", "the intent_id to amend");
    const keyFile = required(values["key-file"], "key-file", "the principal's private JWK file");
    const sets = typedSets(setPairs(values.set), MANDATE_FIELDS);
    if (sets.size === 0) throw usageError("nothing to amend: pass at least one --set field=value");
    const format = outputFormat(values.output, ["yaml", "json"] as const, "yaml");
    const at = atFlag(values.at, io.now());
    const signer = readPrivateKeyFile(keyFile, io);
    const doc = readAgreementDocument(input);
    const old = doc.record.mandates.find((m) => m.intent_id === intent);
    if (old === undefined) {
      throw new CliError(
        "CHECK_FAILED",
        `no live intent ${JSON.stringify(intent)}; the agreement holds ${doc.record.mandates.map((m) => m.intent_id).join(", ")}`,
      );
    }
    const changes = Object.fromEntries(sets) as MandateChanges;
    if (!sets.has("rendering")) {
      if (old.rendering === undefined || old.rendering === renderMandate(old)) {
        changes.rendering = renderMandate(applySets(old, sets) as Mandate);
      } else {
        io.stderr(`warning: intent ${intent} keeps its hand-written rendering; check that it still describes the new terms (--set rendering=...)\n`);
      }
    }
    let record;
    try {
      record = await amendMandate(doc.record, intent, changes, signer, {
        at,
        actor: { role: "principal", id: principalId(doc.record) },
        event_id: nextEventId(doc.record),
      });
    } catch (e) {
      if (e instanceof AgreementError) throw new CliError("CHECK_FAILED", `${e.message} (${e.code})`);
      throw e;
    }
    const event = record.events.at(-1);
    io.stdout(renderData(agreementManifest({ ...doc, record }), format));
    io.stderr(
      `amended ${intent}: mandate hash ${String(event?.detail?.previous_mandate_hash)} -> ${String(event?.mandate_hash)}; acknowledgements of the old hash now count as outdated\n`,
    );
    return 0;
  },
});
