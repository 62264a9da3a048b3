/**
 * `writ mandate submit`: records an AP2 open payment mandate for a registered agent
 * (`POST /v1/mandates` `{agent_id, sd_jwt, nonce?, audience?}`, an operator key with
 * agents:write) and prints the delegation it became. Exit 0 recorded (or recorded before);
 * 1 refused or an error answer; 2 bad usage.
 */
import { apiKey } from "../api-key.js";
import { CliError } from "../errors.js";
import { required, serverFlag } from "../flags.js";
import { endpoint, errorText, requestJson } from "../http.js";
import { outputFormat, renderData } from "../output.js";
import { defineVerb } from "../verb.js";
import { readPresentation } from "./presentation.js";

/** `writ mandate submit`. */
export const mandateSubmit = defineVerb({
  name: "mandate submit",
  summary: "record an AP2 payment mandate as a delegation of an agent (POST /v1/mandates)",
  synopsis: "--server URL --agent ID --file F [--nonce N] [--audience AUD] [--api-key-file F] [--output text|json|yaml]",
  flags: [
    ["--server <url>", "the Writ server"],
    ["--agent <id>", "the registered agent whose key cnf names"],
    ["--file <file>", "the presentation: <issuer-jwt>~<disclosures>~<kb-jwt>"],
    ["--nonce <nonce>", "the nonce the key-binding JWT must carry (default: any)"],
    ["--audience <aud>", "the aud the key-binding JWT names (default: the server's WRIT_MANDATE_AUDIENCE)"],
    ["--api-key-file <file>", "file whose first line is the API key (default: the WRIT_API_KEY environment variable)"],
    ["--output text|json|yaml", "text (default) or the server's whole answer"],
  ],
  notes: ["Exit status: 0 recorded (or recorded before); 1 refused or an error answer; 2 bad usage."],
  examples: ["WRIT_API_KEY=$(cat api-key) writ mandate submit --server http://127.0.0.1:8080 --agent agent_procurement --file mandate.sd-jwt"],
  options: {
    server: { type: "string" },
    agent: { type: "string" },
    file: { type: "string" },
    nonce: { type: "string" },
    audience: { type: "string" },
    "api-key-file": { type: "string" },
    output: { type: "string" },
  },
  async run(values, io) {
    const server = serverFlag(values.server);
    const agent = required(values.agent, "agent", "the agent's id");
    const text = readPresentation(required(values.file, "file", "the mandate's SD-JWT file"));
    const format = outputFormat(values.output, ["text", "json", "yaml"] as const, "text");
    const key = apiKey(io, values["api-key-file"], server);
    const body = {
      agent_id: agent,
      sd_jwt: text,
      ...(values.nonce !== undefined ? { nonce: values.nonce } : {}),
      ...(values.audience !== undefined ? { audience: values.audience } : {}),
    };
    const answer = await requestJson(io, endpoint(server, "/v1/mandates"), { method: "POST", body, bearer: key });
    if (answer.status !== 200 && answer.status !== 201) {
      const hint = answer.status === 401 || answer.status === 403 ? " (check WRIT_API_KEY / --api-key-file: an agents:write key of the agent's operator)" : "";
      throw new CliError("SERVER_ERROR", `POST /v1/mandates answered ${errorText(answer)}${hint}`);
    }
    const a = answer.body as Record<string, unknown>;
    if (format !== "text") io.stdout(renderData(a, format));
    else {
      io.stdout(
        `${a.created === true ? "recorded" : "recorded before"}: delegation ${String(a.delegation_id)} for agent ${String(a.agent_id)}, until ${String(a.expires_at)}` +
          `${a.revoked === true ? " (revoked)" : ""}, issuer key ${String(a.issuer_kid)}\n`,
      );
    }
    return 0;
  },
});
