/**
 * The revocation push a notifier sends to `POST /v1/revocations/push`: the body
 * `{at, svc_revocation_push: "1", revocation, signature}` where `signature` is a flattened JWS
 * (protected `typ` `svc-revocation-push+jws`) by the notifier key over exactly the RFC 8785
 * canonical JSON of the body without `signature`.
 */
import { signRevocationPush, type AgreementRevocation } from "../../core/agreement/index.js";
import type { Signer } from "../../core/jose/index.js";
import { CliError } from "../errors.js";
import { endpoint, errorText, requestJson } from "../http.js";
import type { CliIo } from "../io.js";

/** The signed push body (src/core/agreement/push.ts). */
export function signedPushBody(revocation: AgreementRevocation, at: string, notifier: Signer): Promise<Record<string, unknown>> {
  return signRevocationPush(revocation, at, notifier);
}

/** The server's answer to a push (`sequence` is the revocation feed's, not the log's). */
export interface PushAnswer {
  stored: boolean;
  revocation_id?: string;
  sequence?: number;
}

/** The push URL: `--push` may be the server's base URL or the full push endpoint. */
export function pushUrl(server: URL): URL {
  return server.pathname.endsWith("/v1/revocations/push") ? server : endpoint(server, "/v1/revocations/push");
}

/** POSTs the signed push; throws SERVER_ERROR with the server's error text when it is refused. */
export async function pushRevocation(io: CliIo, server: URL, body: Record<string, unknown>): Promise<PushAnswer> {
  const answer = await requestJson(io, pushUrl(server), { method: "POST", body });
  if (answer.status !== 200 && answer.status !== 201) {
    const hint = answer.status === 401 ? " (the server's SVC_PUSH_NOTIFIER_JWK must be the public half of --notifier-key-file)" : "";
    throw new CliError("SERVER_ERROR", `the revocation push was refused: ${errorText(answer)}${hint}`);
  }
  return answer.body as PushAnswer;
}
