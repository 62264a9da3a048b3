/**
 * `writ agreement sign`: from a plain agreement file (YAML or JSON: `agreement_id`, unsigned
 * `mandates`, optional `parent_limits`), the signed agreement as an IntentAgreement manifest
 * for `kubectl apply`. Every mandate is signed by the principal key (`buildSignedAgreement`:
 * algorithm, principal.public_key, rendering when absent, the mandate signature) and the event
 * log records proposed -> accepted -> activated. The record is validated before it is printed.
 *
 * Refusals (exit 1): a plain file with other members, a mandate that already carries a
 * signature or algorithm, or names another principal key than --key-file's.
 */
import { buildSignedAgreement, type Mandate, type ParentLimits } from "../../core/agreement/index.js";
import { keyId, parsePublicJwk, type Signer } from "../../core/jose/index.js";
import { CliError, usageError } from "../errors.js";
import { readDocument, readPrivateKeyFile } from "../files.js";
import { atFlag, required } from "../flags.js";
import { metadataFrom, nameFlag } from "../manifest.js";
import { outputFormat, renderData } from "../output.js";
import { defineVerb } from "../verb.js";
import { agreementManifest } from "./document.js";

const PLAIN_MEMBERS = new Set(["agreement_id", "mandates", "parent_limits"]);

/** A plain (unsigned) agreement. */
export interface PlainAgreement {
  agreement_id: string;
  mandates: Mandate[];
  parent_limits?: ParentLimits;
}

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** Checks a plain agreement document against the signer; throws INPUT_INVALID naming the problem. */
export function readPlainAgreement(doc: unknown, source: string, signer: Signer): PlainAgreement {
  const bad = (msg: string) => new CliError("INPUT_INVALID", `${source}: ${msg}`);
  if (!isObj(doc)) throw bad("a plain agreement is an object with agreement_id, mandates and optional parent_limits");
  const extra = Object.keys(doc).filter((k) => !PLAIN_MEMBERS.has(k));
  if (extra.length > 0) throw bad(`unexpected member(s) ${extra.join(", ")}: a plain agreement has only agreement_id, mandates and parent_limits`);
  if (typeof doc.agreement_id !== "string" || doc.agreement_id === "") throw bad("agreement_id must be a non-empty string");
  if (!Array.isArray(doc.mandates) || doc.mandates.length === 0) throw bad("mandates must be a non-empty list");
  doc.mandates.forEach((m: unknown, i) => {
    if (!isObj(m)) throw bad(`mandate ${i} is not an object`);
    for (const signed of ["signature", "algorithm"]) {
      if (signed in m)
        throw bad(`mandate ${i} already carries ${signed}: sign takes unsigned mandates (to change a signed agreement, use writ agreement amend)`);
    }
    const principal = m.principal;
    if (isObj(principal) && principal.public_key !== undefined) {
      let kid: string;
      try {
        kid = keyId(parsePublicJwk(principal.public_key));
      } catch {
        throw bad(`mandate ${i}'s principal.public_key is not a usable public JWK`);
      }
      if (kid !== signer.kid) throw bad(`mandate ${i} names principal key ${kid} but --key-file holds ${signer.kid}`);
    }
  });
  if (doc.parent_limits !== undefined && !isObj(doc.parent_limits)) throw bad("parent_limits must be an object");
  return doc as unknown as PlainAgreement;
}

/** `writ agreement sign`. */
export const agreementSign = defineVerb({
  name: "agreement sign",
  summary: "sign a plain agreement file into an IntentAgreement manifest",
  synopsis:
    "--in plain.yaml --key-file principal.private.jwk.json --delegation NAME [--name N] [--namespace NS] [--status active|accepted] [--at TIME] [--output yaml|json]",
  flags: [
    ["--in <file>", "plain agreement (YAML or JSON): agreement_id, mandates without signatures, optional parent_limits"],
    ["--key-file <file>", "the principal's private JWK (writ keys generate)"],
    ["--delegation <name>", "metadata.name of the Delegation this agreement is bound to (spec.delegationRef)"],
    ["--name <name>", "metadata.name (default: from agreement_id, e.g. agr_1 -> agr-1)"],
    ["--namespace <ns>", "metadata.namespace (default: none, kubectl's current namespace)"],
    ["--status active|accepted", "where the event log ends (default active)"],
    ["--at <time>", "RFC 3339 time of signing (default now)"],
    ["--output yaml|json", "manifest format (default yaml)"],
  ],
  notes: ["Exit status: 0 printed; 1 the file or the result is invalid; 2 bad usage."],
  examples: ["writ agreement sign --in plain.yaml --key-file principal.private.jwk.json --delegation acme-procurement > agreement.yaml"],
  options: {
    in: { type: "string" },
    "key-file": { type: "string" },
    delegation: { type: "string" },
    name: { type: "string" },
    namespace: { type: "string" },
    status: { type: "string" },
    at: { type: "string" },
    output: { type: "string" },
  },
  async run(values, io) {
    const input = required(values.in, "in", "the plain agreement file");
    const keyFile = required(values["key-file"], "key-file", "the principal's private JWK file");
    const delegation = nameFlag(required(values.delegation, "delegation", "the Delegation's metadata.name; the CRD requires spec.delegationRef"), "delegation");
    const status = values.status ?? "active";
    if (status !== "active" && status !== "accepted") throw usageError(`--status must be active or accepted, not ${JSON.stringify(status)}`);
    const format = outputFormat(values.output, ["yaml", "json"] as const, "yaml");
    const at = atFlag(values.at, io.now());
    const signer = readPrivateKeyFile(keyFile, io);
    const plain = readPlainAgreement(readDocument(input, "--in"), input, signer);
    let record;
    try {
      record = await buildSignedAgreement({ ...plain, at, status }, signer);
    } catch (e) {
      throw new CliError("INPUT_INVALID", `${input}: ${e instanceof Error ? e.message : String(e)}`);
    }
    const metadata = metadataFrom({ name: values.name, namespace: values.namespace }, plain.agreement_id);
    io.stdout(renderData(agreementManifest({ metadata, record, delegationName: delegation }), format));
    io.stderr(`signed ${record.mandates.length} mandate(s) of ${record.agreement_id} with ${signer.kid}\n`);
    return 0;
  },
});
