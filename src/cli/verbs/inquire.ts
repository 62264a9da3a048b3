/**
 * `writ inquire`: a purpose-coded inquiry about an agent (`POST /v1/inquiries`, through the
 * typed client of src/client,
 * `{agent_id, purpose_code}`); prints the agent's status, verification level, trust score and
 * counts (or the whole answer as JSON/YAML). The inquiry is recorded by the server.
 */
import { PURPOSE_CODES } from "../../core/registry/index.js";
import { apiKey } from "../api-key.js";
import { CliError, usageError } from "../errors.js";
import { required, serverFlag } from "../flags.js";
import { apiClient, callApi, errorText } from "../http.js";
import { outputFormat, renderData } from "../output.js";
import { defineVerb } from "../verb.js";

interface InquiryAnswer {
  inquiry_id?: string;
  agent?: { agent_id?: string; status?: string; verification_level?: string };
  trust_score?: { score?: number; cold_start?: boolean; reasons?: Array<{ code?: string; points?: number }> };
  identity?: { fingerprint?: string; registered_at?: string; operator_org_id?: string };
  active_authorizations?: number;
  revocations?: number;
  incidents?: number;
  recent_evidence_hashes?: string[];
}

function renderAnswer(a: InquiryAnswer): string {
  const t = a.trust_score ?? {};
  const reasons = (t.reasons ?? []).map((r) => `${String(r.code)} ${Number(r.points) >= 0 ? "+" : ""}${String(r.points)}`).join(", ");
  const lines = [
    `agent ${String(a.agent?.agent_id)}: ${String(a.agent?.status)}, verification ${String(a.agent?.verification_level)}`,
    `  trust score ${String(t.score)}${t.cold_start ? " (cold start)" : ""}${reasons ? `: ${reasons}` : ""}`,
    `  fingerprint ${String(a.identity?.fingerprint)}, operator ${String(a.identity?.operator_org_id)}, registered ${String(a.identity?.registered_at)}`,
    `  active authorizations ${String(a.active_authorizations)}, revocations ${String(a.revocations)}, incidents ${String(a.incidents)}`,
  ];
  if (a.recent_evidence_hashes !== undefined) lines.push(`  recent evidence: ${a.recent_evidence_hashes.join(", ") || "none"}`);
  lines.push(`  inquiry ${String(a.inquiry_id)}`);
  return `${lines.join("\n")}\n`;
}

/** `writ inquire`. */
export const inquireVerb = defineVerb({
  name: "inquire",
  summary: "ask the registry about an agent for a stated purpose (POST /v1/inquiries)",
  synopsis: `--server URL --agent ID --purpose ${PURPOSE_CODES.join("|")} [--api-key-file F] [--output text|json|yaml]`,
  flags: [
    ["--server <url>", "the Writ server"],
    ["--agent <id>", "the agent's id"],
    ["--purpose <code>", `why you ask: ${PURPOSE_CODES.join(", ")}`],
    ["--api-key-file <file>", "file whose first line is the API key (default: the WRIT_API_KEY environment variable)"],
    ["--output text|json|yaml", "text (default) or the server's whole answer"],
  ],
  notes: ["Exit status: 0 answered; 1 an error answer (unknown agent, refused key); 2 bad usage."],
  examples: ["WRIT_API_KEY=$(cat api-key) writ inquire --server http://127.0.0.1:8080 --agent agent_procurement --purpose payment_authorization"],
  options: {
    server: { type: "string" },
    agent: { type: "string" },
    purpose: { type: "string" },
    "api-key-file": { type: "string" },
    output: { type: "string" },
  },
  async run(values, io) {
    const server = serverFlag(values.server);
    const agent = required(values.agent, "agent", "the agent's id");
    const purposeText = required(values.purpose, "purpose", PURPOSE_CODES.join(", "));
    const purpose = PURPOSE_CODES.find((c) => c === purposeText);
    if (purpose === undefined) throw usageError(`--purpose must be one of ${PURPOSE_CODES.join(", ")}`);
    const format = outputFormat(values.output, ["text", "json", "yaml"] as const, "text");
    const key = apiKey(io, values["api-key-file"], server);
    const client = apiClient(io, server, key);
    const answer = await callApi(server, "/v1/inquiries", (init) =>
      client.POST("/v1/inquiries", { body: { agent_id: agent, purpose_code: purpose }, ...init }),
    );
    if (answer.status !== 200) {
      const hint =
        answer.status === 401 || answer.status === 403 ? " (check WRIT_API_KEY / --api-key-file and that the key has the inquiries:write scope)" : "";
      throw new CliError("SERVER_ERROR", `POST /v1/inquiries answered ${errorText(answer)}${hint}`);
    }
    io.stdout(format === "text" ? renderAnswer(answer.body as InquiryAnswer) : renderData(answer.body, format));
    return 0;
  },
});
