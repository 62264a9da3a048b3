/**
 * `writ verify`: asks the server whether an agent may make a payment (`POST /v1/verify`
 * `{agent_id, action: {action_id, action_type, amount, currency, proposed_at, merchant?,
 * intent_id?, item?, category?}, agreement_id?, risk_score?, principal_present?}`, through the
 * typed client of src/client) and prints the verdict. Exit 0 on ALLOW; 1 on DENY or
 * STEP_UP (or any other verdict, or an error answer); 2 on bad usage. An ALLOW records the spend
 * on the server: this is a real authorization, not a dry run.
 */
import { randomUUID } from "node:crypto";
import { currencyRefusal, isCurrency, isIsoCurrency, toMinor } from "../../core/money/index.js";
import { isExactNumberLiteral } from "../../core/canonical/index.js";
import { apiKey } from "../api-key.js";
import { CliError, usageError } from "../errors.js";
import { atFlag, required, serverFlag } from "../flags.js";
import type { RequestBody } from "../../client/index.js";
import { apiClient, callApi, errorText } from "../http.js";
import { outputFormat, renderData } from "../output.js";
import { defineVerb } from "../verb.js";

/** The verify answer fields the CLI prints. */
interface VerifyAnswer {
  verdict?: unknown;
  svc_decision?: unknown;
  reasons?: unknown;
  agent_id?: unknown;
  agreement_id?: unknown;
  messages?: unknown;
}

function renderAnswer(a: VerifyAnswer, actionId: string): string {
  const reasons = Array.isArray(a.reasons) && a.reasons.length > 0 ? a.reasons.map(String).join(", ") : "none";
  const lines = [
    `${String(a.verdict)}  (svc_decision ${String(a.svc_decision)})`,
    `  agent ${String(a.agent_id)}, agreement ${a.agreement_id === undefined || a.agreement_id === null ? "none" : String(a.agreement_id)}, action ${actionId}`,
    `  reasons: ${reasons}`,
  ];
  if (Array.isArray(a.messages)) {
    for (const m of a.messages as Array<{ code?: unknown; message?: unknown }>) lines.push(`    ${String(m?.code)}: ${String(m?.message)}`);
  }
  return `${lines.join("\n")}\n`;
}

function riskScore(text: string): number {
  const n = Number(text);
  if (!/^\d+(\.\d+)?$/.test(text) || n > 100) throw usageError(`--risk-score must be a number from 0 to 100, not ${JSON.stringify(text)}`);
  return n;
}

/** `writ verify`. */
export const verifyVerb = defineVerb({
  name: "verify",
  summary: "ask the server whether an agent may make a payment (POST /v1/verify)",
  synopsis:
    "--server URL --agent ID --amount 12.50 --currency USD [--action-type purchase] [--merchant M] [--intent I] [--item X] [--category C] [--action-id X] [--agreement A] [--risk-score N] [--principal-present] [--at TIME] [--api-key-file F] [--output text|json|yaml]",
  flags: [
    ["--server <url>", "the Writ server"],
    ["--agent <id>", "the agent's id"],
    ["--amount <decimal>", "the payment amount in major units, e.g. 12.50"],
    ["--currency <code>", "ISO 4217 code, e.g. USD"],
    ["--action-type <verb>", "purchase (default), refund, ..."],
    ["--merchant <id>", "the merchant"],
    ["--intent <id>", "the intent the action is for"],
    ["--item <id>", "the item"],
    ["--category <name>", "the category"],
    ["--action-id <id>", "the action's id (default: a new act_<uuid>); the same id is the same action"],
    ["--agreement <id>", "select one of the agent's active agreements (agreement_id)"],
    ["--risk-score <0-100>", "the risk score from your risk engine"],
    ["--principal-present", "the principal is present (for principal_present conditions)"],
    ["--at <time>", "proposed_at (default now)"],
    ["--api-key-file <file>", "file whose first line is the API key (default: the WRIT_API_KEY environment variable)"],
    ["--output text|json|yaml", "text (default) or the server's whole answer"],
  ],
  notes: [
    "An ALLOW records the spend: this is a real authorization.",
    "Exit status: 0 ALLOW; 1 DENY, STEP_UP, any other verdict or an error answer; 2 bad usage.",
  ],
  // Answers ALLOW against `writ dev` (npm start): the PUBLIC demo operator key and the demo agent it seeds.
  examples: [
    "WRIT_API_KEY=bur_f-sGsUrJQHACja5SyeafOMFOnvA8ues53Q_7k-FPJl4 writ verify --server http://127.0.0.1:8080 --agent agent_demo --amount 12.50 --currency USD --merchant 'Corner Market'",
  ],
  options: {
    server: { type: "string" },
    agent: { type: "string" },
    amount: { type: "string" },
    currency: { type: "string" },
    "action-type": { type: "string" },
    merchant: { type: "string" },
    intent: { type: "string" },
    item: { type: "string" },
    category: { type: "string" },
    "action-id": { type: "string" },
    agreement: { type: "string" },
    "risk-score": { type: "string" },
    "principal-present": { type: "boolean" },
    at: { type: "string" },
    "api-key-file": { type: "string" },
    output: { type: "string" },
  },
  async run(values, io) {
    const server = serverFlag(values.server);
    const agent = required(values.agent, "agent", "the agent's id");
    const currency = required(values.currency, "currency", "an ISO 4217 code such as USD").toUpperCase();
    if (isIsoCurrency(currency) && !isCurrency(currency)) throw usageError(`--currency ${currency} ${currencyRefusal(currency) ?? ""}`);
    if (!isCurrency(currency)) throw usageError(`--currency ${JSON.stringify(values.currency)} is not an ISO 4217 currency code such as USD`);
    const amountText = required(values.amount, "amount", "the amount in major units, e.g. 12.50");
    if (!/^(0|[1-9][0-9]{0,14})(\.[0-9]{1,8})?$/.test(amountText))
      throw usageError(`--amount must be a plain decimal such as 12.50, not ${JSON.stringify(amountText)}`);
    const amount = Number(amountText);
    // The text itself, not the double it reads as: 123456789012345.12345678 is not a double.
    if (!isExactNumberLiteral(amountText)) throw usageError(`--amount ${amountText}: a JSON number cannot carry it exactly (at most 15 significant digits)`);
    try {
      toMinor(amountText, currency);
    } catch (e) {
      throw usageError(`--amount ${amountText}: ${e instanceof Error ? e.message : String(e)}`);
    }
    const format = outputFormat(values.output, ["text", "json", "yaml"] as const, "text");
    const key = apiKey(io, values["api-key-file"], server);
    const actionId = values["action-id"] ?? `act_${randomUUID()}`;
    const action: RequestBody<"/v1/verify", "post">["action"] = {
      action_id: actionId,
      action_type: values["action-type"] ?? "purchase",
      amount,
      currency,
      proposed_at: atFlag(values.at, io.now()),
    };
    if (values.merchant !== undefined) action.merchant = values.merchant;
    if (values.intent !== undefined) action.intent_id = values.intent;
    if (values.item !== undefined) action.item = values.item;
    if (values.category !== undefined) action.category = values.category;
    const request: RequestBody<"/v1/verify", "post"> = { agent_id: agent, action };
    if (values.agreement !== undefined) request.agreement_id = values.agreement;
    if (values["risk-score"] !== undefined) request.risk_score = riskScore(values["risk-score"]);
    if (values["principal-present"] === true) request.principal_present = true;
    const client = apiClient(io, server, key);
    const answer = await callApi(server, "/v1/verify", (init) => client.POST("/v1/verify", { body: request, ...init }));
    if (answer.status !== 200) {
      const hint = answer.status === 401 || answer.status === 403 ? " (check WRIT_API_KEY / --api-key-file and the key's scopes)" : "";
      throw new CliError("SERVER_ERROR", `POST /v1/verify answered ${errorText(answer)}${hint}`);
    }
    const body = answer.body as VerifyAnswer;
    io.stdout(format === "text" ? renderAnswer(body, actionId) : renderData(body, format));
    return body.verdict === "ALLOW" ? 0 : 1;
  },
});
