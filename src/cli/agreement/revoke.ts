/**
 * `writ agreement revoke`: the principal's signed revocation of every live mandate
 * (`signRevocation`), recorded in the manifest (`revocation`, status `revoked`, a `revoked`
 * event) so the revocation is a Git-reviewable change. With `--push`, the revocation is also
 * POSTed to `/v1/revocations/push`, signed by the notifier key; the manifest is printed either
 * way, and a refused or failed push ends with exit 1.
 */
import { AgreementError, buildEvent, signRevocation } from "../../core/agreement/index.js";
import { CliError, usageError } from "../errors.js";
import { readPrivateKeyFile } from "../files.js";
import { atFlag, isLoopback, required, serverFlag } from "../flags.js";
import { outputFormat, renderData } from "../output.js";
import { defineVerb, reportFailure } from "../verb.js";
import { assertMove } from "./ack.js";
import { agreementManifest, nextEventId, principalId, readAgreementDocument } from "./document.js";
import { pushRevocation, signedPushBody } from "./push.js";

/** `writ agreement revoke`. */
export const agreementRevoke = defineVerb({
  name: "agreement revoke",
  summary: "revoke an IntentAgreement manifest with the principal's signature (and push it)",
  synopsis: "--in agreement.yaml --reason TEXT --key-file principal.private.jwk.json [--push URL --notifier-key-file N] [--at TIME] [--output yaml|json]",
  flags: [
    ["--in <file>", "the IntentAgreement manifest"],
    ["--reason <text>", "why (recorded in the signed revocation)"],
    ["--key-file <file>", "the principal's private JWK (the key the mandates name)"],
    ["--push <url>", "also POST the revocation to <url>/v1/revocations/push"],
    ["--notifier-key-file <file>", "the notifier's private JWK that signs the push (the server's SVC_PUSH_NOTIFIER_JWK is its public half)"],
    ["--at <time>", "RFC 3339 time of the revocation (default now)"],
    ["--output yaml|json", "manifest format (default yaml)"],
  ],
  notes: [
    "The revoked manifest is printed on stdout in every case; commit it so Git shows the revocation.",
    "Exit status: 0 revoked (and pushed); 1 the manifest is invalid, already revoked, the key is not the principal's, or the push failed; 2 bad usage.",
  ],
  examples: [
    'writ agreement revoke --in agreement.yaml --reason "card lost" --key-file principal.private.jwk.json > agreement.yaml.new',
    'writ agreement revoke --in agreement.yaml --reason "card lost" --key-file principal.private.jwk.json --push http://127.0.0.1:8080 --notifier-key-file notifier.private.jwk.json',
  ],
  options: {
    in: { type: "string" },
    reason: { type: "string" },
    "key-file": { type: "string" },
    push: { type: "string" },
    "notifier-key-file": { type: "string" },
    at: { type: "string" },
    output: { type: "string" },
  },
  async run(values, io) {
    const input = required(values.in, "in", "the IntentAgreement manifest");
    const reason = required(values.reason, "reason", "why the agreement is revoked");
    const keyFile = required(values["key-file"], "key-file", "the principal's private JWK file");
    const push = values.push === undefined ? undefined : serverFlag(values.push, "push");
    if (push !== undefined && values["notifier-key-file"] === undefined) throw usageError("--push needs --notifier-key-file (the key that signs the push)");
    if (push === undefined && values["notifier-key-file"] !== undefined) throw usageError("--notifier-key-file is only used with --push");
    const format = outputFormat(values.output, ["yaml", "json"] as const, "yaml");
    const at = atFlag(values.at, io.now());
    const signer = readPrivateKeyFile(keyFile, io);
    const notifier = values["notifier-key-file"] === undefined ? undefined : readPrivateKeyFile(values["notifier-key-file"], io, "notifier-key-file");
    const doc = readAgreementDocument(input);
    if (doc.record.revocation !== undefined) throw new CliError("CHECK_FAILED", `${doc.record.agreement_id} already carries a revocation`);
    assertMove(doc.record, "revoked");
    let revocation;
    try {
      revocation = await signRevocation(doc.record, { reason, at }, signer);
    } catch (e) {
      if (e instanceof AgreementError) throw new CliError("CHECK_FAILED", `${e.message} (${e.code}): --key-file must be the principal key the mandates name`);
      throw e;
    }
    const event = buildEvent(doc.record.events.at(-1), {
      event_id: nextEventId(doc.record),
      type: "revoked",
      at,
      actor: { role: "principal", id: principalId(doc.record) },
      agreement_id: doc.record.agreement_id,
      mandate_hash: revocation.mandate_hash,
      detail: { reason },
    });
    const record = { ...doc.record, status: "revoked" as const, updated_at: at, revocation, events: [...doc.record.events, event] };
    io.stdout(renderData(agreementManifest({ ...doc, record }), format));
    io.stderr(`revoked ${record.agreement_id} (${record.mandates.length} mandate hash(es)) with ${signer.kid}\n`);
    if (push === undefined || notifier === undefined) return 0;
    if (push.protocol === "http:" && !isLoopback(push)) io.stderr(`warning: pushing over plain http to ${push.host}\n`);
    try {
      const answer = await pushRevocation(io, push, await signedPushBody(revocation, at, notifier));
      io.stderr(
        answer.stored
          ? `pushed: stored as ${String(answer.revocation_id)} (revocation feed sequence ${String(answer.sequence)}; also appended to the transparency log)\n`
          : `pushed: the server already held this revocation (${String(answer.revocation_id)})\n`,
      );
      return 0;
    } catch (e) {
      return reportFailure("agreement revoke", e, io);
    }
  },
});
