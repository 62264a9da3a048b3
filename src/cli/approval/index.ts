/**
 * `writ approval sign`: the principal's decision on an approval of a STEP_UP, signed with the
 * principal's key (for principals that are systems; people use a passkey in the portal):
 * a flattened JWS, `typ` `writ-approval+jws` (EdDSA or ES256, the key's), whose payload is
 * exactly the RFC 8785 canonical bytes of the approval's content plus `decision`
 * (docs/reference/approvals.md). `--in` holds the content: the `content` of `GET
 * /v1/approvals/{id}`, the `details.content` of an "approval_waiting" webhook, or the content
 * itself. Prints `{decision, signature}` (the body of `POST /v1/approvals/{id}/decision`);
 * with `--server`, posts it and prints the server's answer.
 *
 * Refusals: exit 1 for a file that is not an approval's content; the server's refusal
 * (401 a signature that does not verify, 409 no longer pending) exits 1 with its error.
 */
import { APPROVAL_TYP, decisionPayload, type ApprovalContent, type ApprovalDecision } from "../../core/approvals/index.js";
import { signRecord } from "../../core/jose/index.js";
import { CliError } from "../errors.js";
import { readDocument, readPrivateKeyFile } from "../files.js";
import { required, serverFlag } from "../flags.js";
import { defineGroup } from "../group.js";
import { endpoint, errorText, requestJson } from "../http.js";
import { defineVerb } from "../verb.js";

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** The approval content in a document (see the module comment); throws INPUT_INVALID. */
export function approvalContentOf(doc: unknown, source: string): ApprovalContent {
  const candidates = [doc, isObj(doc) ? doc.content : undefined, isObj(doc) && isObj(doc.details) ? doc.details.content : undefined];
  const c = candidates.find((x) => isObj(x) && x.writ_approval === 1);
  if (!isObj(c) || typeof c.approval_id !== "string" || typeof c.request_hash !== "string" || typeof c.confirmation_text !== "string") {
    throw new CliError(
      "INPUT_INVALID",
      `${source}: not an approval's content (writ_approval 1, approval_id, request_hash, confirmation_text): use the content of GET /v1/approvals/{id}`,
    );
  }
  return c as unknown as ApprovalContent;
}

/** `writ approval sign`. */
export const approvalSign = defineVerb({
  name: "approval sign",
  summary: "sign the principal's decision on an approval of a STEP_UP (and submit it)",
  synopsis: "--in approval.json --key-file principal.private.jwk.json [--decline] [--server URL]",
  flags: [
    ["--in <file>", "the approval's content (GET /v1/approvals/{id}, or its `content`, or a webhook's details.content)"],
    ["--key-file <file>", "the principal's private JWK (the key the grant names as principal.public_key)"],
    ["--decline", "decline instead of approve"],
    ["--server <url>", "post the decision to this Writ server (POST /v1/approvals/{id}/decision) and print its answer"],
  ],
  notes: [
    "The text you sign is printed to standard error first: read it.",
    "Exit status: 0 signed (and accepted); 1 the file is not an approval, or the server refused; 2 bad usage.",
  ],
  examples: ["writ approval sign --in approval.json --key-file principal.private.jwk.json --server http://127.0.0.1:8080"],
  options: { in: { type: "string" }, "key-file": { type: "string" }, decline: { type: "boolean" }, server: { type: "string" } },
  async run(values, io) {
    const input = required(values.in, "in", "the approval's content");
    const keyFile = required(values["key-file"], "key-file", "the principal's private JWK file");
    const content = approvalContentOf(readDocument(input, "--in"), input);
    const decision: ApprovalDecision = values.decline === true ? "decline" : "approve";
    const signer = readPrivateKeyFile(keyFile, io);
    io.stderr(`${decision === "approve" ? "approving" : "declining"} ${content.approval_id}: ${content.confirmation_text}\n`);
    const body = { decision, signature: await signRecord(decisionPayload(content, decision), signer, APPROVAL_TYP) };
    if (values.server === undefined) {
      io.stdout(`${JSON.stringify(body, null, 2)}\n`);
      return 0;
    }
    const server = serverFlag(values.server);
    const answer = await requestJson(io, endpoint(server, `/v1/approvals/${encodeURIComponent(content.approval_id)}/decision`), { method: "POST", body });
    if (answer.status !== 200) throw new CliError("INPUT_INVALID", `the server refused the decision: ${errorText(answer)}`);
    io.stdout(`${JSON.stringify(answer.body, null, 2)}\n`);
    const a = answer.body as { status?: string; log_sequence?: number };
    io.stderr(`approval ${content.approval_id} is ${String(a.status)} (transparency log entry ${String(a.log_sequence)})\n`);
    return 0;
  },
});

/** The `writ approval` group. */
export const approvalGroup = defineGroup("approval", "sign the principal's decision on an approval of a STEP_UP", [approvalSign]);
