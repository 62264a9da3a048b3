// An agent's payment loop with the typed client (README "The typed client"; run by
// test/integration/readme-client-loop.test.ts against the demo data).
import { createWritClient } from "writ/client";

const server = process.env.WRIT_SERVER ?? "http://127.0.0.1:8080";
const agreementId = "agr_demo";

// The agent's operator key (scopes verify and registry:read): `writ dev` prints the PUBLIC demo one.
const agent = createWritClient({ server, token: process.env.WRIT_API_KEY });

// 1. What is left? The agreement's state and budget, per intent and for its delegation.
const { data: agreement, error } = await agent.GET("/v1/agreements/{agreement_id}", { params: { path: { agreement_id: agreementId } } });
if (!agreement) throw new Error(`GET /v1/agreements/${agreementId}: ${error?.error}`);
const budget = agreement.budget.delegation;
console.log(`${agreementId}: ${agreement.status}, ${budget?.remaining} of ${budget?.limit} ${budget?.currency} left`);

// 2. Ask before paying: a real authorization (an ALLOW is recorded in the ledger).
const amount = 12.5;
if (budget?.remaining !== undefined && Number(budget.remaining) < amount) throw new Error("not enough budget left");
const { data: decision } = await agent.POST("/v1/verify", {
  body: {
    agent_id: agreement.agent_id,
    agreement_id: agreementId,
    action: { action_id: `act_${Date.now()}`, action_type: "purchase", amount, currency: "USD", proposed_at: new Date().toISOString(), merchant: "Corner Market" },
  },
});

// 3. Read the decision: pay only on ALLOW.
if (decision?.verdict !== "ALLOW") {
  console.log(`refused (${decision?.verdict}): ${decision?.reasons.join(", ")}`);
  process.exit(1);
}
console.log(`ALLOW: ledger entry ${decision.ledger_entry?.sequence} of ${decision.agreement_id}`);

// The payment provider then records what happened to the payment, with its own key (scope
// outcomes:write, an organization the agreement names as a party: here the PUBLIC demo wallet).
const psp = createWritClient({ server, token: process.env.WRIT_PSP_KEY });
const { data: outcome, error: refused } = await psp.POST("/v1/verify/outcomes", {
  body: { agreement_id: agreementId, action_id: decision.action_id, outcome: "authorized" },
});
if (!outcome) throw new Error(`POST /v1/verify/outcomes: ${refused?.error}`);
console.log(`outcome ${outcome.outcome}: ledger entry ${outcome.entry.sequence}`);
