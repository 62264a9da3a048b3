// A merchant checks a request an agent signed (docs/how-to/merchant-verify-agent.md; run by
// test/integration/merchant-example.test.ts against the demo data).
import { createPrivateKey } from "node:crypto";
import { KeyDirectoryCache, MemoryNonceStore, createWritClient, signAgentRequest, verifyAgentRequest } from "writ/client";

const server = process.env.WRIT_SERVER ?? "http://127.0.0.1:8080";

// The agent's side, for the example: the PUBLIC demo agent key (docs/demo.md) signs an order.
const seed = Buffer.from("e831eb99a82e74dc0cd045c4b0e1eaa161a1ac735e5b8c7831b1999148ffbfe7", "hex");
const pkcs8 = Buffer.concat([Buffer.from("302e020100300506032b657004220420", "hex"), seed]);
const agentKey = createPrivateKey({ key: pkcs8, format: "der", type: "pkcs8" }).export({ format: "jwk" });
const order = { method: "POST", url: "https://shop.example/orders", headers: { "content-type": "application/json" } };
const incoming = { ...order, headers: { ...order.headers, ...(await signAgentRequest(order, { key: agentKey, server })) } };

// 1. Offline: Writ's key directory, checked with Writ's log key and kept until its signature
//    expires (at most 300 s); nonces remembered to refuse replays.
const directory = new KeyDirectoryCache({ server });
const nonces = new MemoryNonceStore();
const offline = await verifyAgentRequest(incoming, { directory, nonces });
if (!offline.verified) throw new Error(`refused offline: ${offline.reason} (${offline.message})`);
console.log(`offline: signed by ${offline.agent?.agent_id}`);

// 2. Online: the agent's status and trust score now, and whether a live grant could pay this
//    order (evaluated, nothing is spent). The merchant's own API key (scope registry:read).
const writ = createWritClient({ server, token: process.env.WRIT_API_KEY });
const { data: check, error } = await writ.POST("/v1/agents/verify-request", {
  body: { request: incoming, payment: { amount: 12.5, currency: "USD", merchant: "Corner Market" } },
});
if (!check) throw new Error(`POST /v1/agents/verify-request: ${error?.error}`);
if (!check.verified) throw new Error(`refused online: ${check.reason} (${check.message})`);
console.log(`online: ${check.agent?.agent_id} is ${check.agent?.status}; grant ${check.grant?.live ? "live" : "not live"} (${check.grant?.agreement_id})`);

// 3. The same request again is a replay, refused by its nonce.
const again = await verifyAgentRequest(incoming, { directory, nonces });
console.log(`again: ${again.verified ? "accepted" : again.reason}`);
