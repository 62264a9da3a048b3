/**
 * Acknowledgements that name a `domain` count only when that domain publishes their key at
 * `/.well-known/svc-keys.json`: a local key server (http on 127.0.0.1, reached as `localhost`
 * with loopback allowed by the test settings; WRIT_ACK_DOMAIN_SCHEME
 * and WRIT_ACK_DOMAIN_PORT) stands in for the merchant's domain.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mandateHash, signAcknowledgement, type IntentAgreement } from "../../src/core/agreement/index.js";
import type { Signer } from "../../src/core/jose/index.js";
import { merchantKey, otherKey } from "../fixtures/records.js";
import { action, iso, mandate, startVerifyWorld, storeAgreement, type VerifyWorld } from "../helpers/verify-world.js";

let keyServer: Server;
let requests = 0;
let w: VerifyWorld;

beforeAll(async () => {
  keyServer = createServer((req, res) => {
    requests += 1;
    if (req.url !== "/.well-known/svc-keys.json") {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ keys: [{ public_key: merchantKey.publicJwk, domain: "127.0.0.1" }] }));
  });
  await new Promise<void>((resolve) => keyServer.listen(0, "127.0.0.1", resolve));
  const { port } = keyServer.address() as AddressInfo;
  w = await startVerifyWorld({ WRIT_ACK_DOMAIN_SCHEME: "http", WRIT_ACK_DOMAIN_PORT: String(port), WRIT_ACK_DOMAIN_TIMEOUT_MS: "1000" });
});
afterAll(async () => {
  await w?.close();
  await new Promise((resolve) => keyServer?.close(resolve));
});

/** An agreement whose intent requires a merchant acknowledgement, acknowledged by `signer` as `id` (at `domain`). */
async function acknowledged(signer: Signer, domain: string | undefined, id = "m-1"): Promise<string> {
  const { agent_id } = await w.registerAgent(w.operatorKey);
  await storeAgreement(w, {
    mandates: [mandate(agent_id, "i1", { required_acknowledgements: ["merchant"] })],
    transform: async (a: IntentAgreement) => {
      const m = a.mandates[0];
      if (!m) throw new Error("no mandate");
      const ack = await signAcknowledgement(
        { agreement_id: a.agreement_id, mandate_hash: mandateHash(m), role: "merchant", id, at: iso(Date.now() - 1000), ...(domain ? { domain } : {}) },
        signer,
      );
      return { ...a, acknowledgements: [ack] };
    },
  });
  return agent_id;
}

describe("acknowledgement domains", () => {
  it("an ack whose key the domain publishes counts", async () => {
    const agent = await acknowledged(merchantKey, "localhost");
    expect((await w.verify({ agent_id: agent, action: action() })).body).toMatchObject({ verdict: "ALLOW" });
  });

  it("an ack whose key the domain does not publish counts as missing", async () => {
    const agent = await acknowledged(otherKey, "localhost");
    const r = await w.verify({ agent_id: agent, action: action() });
    expect(r.body).toMatchObject({ verdict: "STEP_UP", reasons: ["ACKNOWLEDGEMENT_MISSING"], required_action: "COLLECT_ACKNOWLEDGEMENT" });
  });

  it("an IP-literal domain is never fetched, even one that would publish the key (fail closed)", async () => {
    for (const domain of ["127.0.0.1", "2130706433", "127.1"]) {
      const before = requests;
      const agent = await acknowledged(merchantKey, domain);
      expect((await w.verify({ agent_id: agent, action: action() })).body, domain).toMatchObject({ verdict: "STEP_UP", reasons: ["ACKNOWLEDGEMENT_MISSING"] });
      expect(requests, domain).toBe(before);
    }
  });

  it("a merchant ack that names neither an organization nor a domain is its signer's word alone: the role is missing (nothing fetched)", async () => {
    const agent = await acknowledged(otherKey, undefined);
    const before = requests;
    const r = await w.verify({ agent_id: agent, action: action() });
    expect(r.body).toMatchObject({ verdict: "STEP_UP", reasons: ["ACKNOWLEDGEMENT_MISSING"], required_action: "COLLECT_ACKNOWLEDGEMENT" });
    expect(requests).toBe(before);
  });

  it("an ack by an organization's registered key, without a domain, counts and is not checked against any key list; key lists are cached", async () => {
    const merchantOrg = await w.createOrg("merchant");
    const token = (await w.issueKey(merchantOrg)).token;
    expect((await w.call("POST", `/v1/orgs/${merchantOrg}/ack-keys`, token, { public_key: otherKey.publicJwk })).status).toBe(201);
    const agent = await acknowledged(otherKey, undefined, merchantOrg);
    const before = requests;
    expect((await w.verify({ agent_id: agent, action: action() })).body).toMatchObject({ verdict: "ALLOW" });
    const cached = await acknowledged(merchantKey, "localhost");
    expect((await w.verify({ agent_id: cached, action: action() })).body.verdict).toBe("ALLOW");
    expect(requests).toBe(before);
  });
});
