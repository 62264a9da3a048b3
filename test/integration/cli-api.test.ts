/**
 * The API verbs against a real server: `writ inquire` answers from the registry (API key from
 * WRIT_API_KEY), and `writ agreement revoke --push` is accepted by the real
 * `/v1/revocations/push`, after which `writ log verify` proves the revocation's log entry.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agreementGroup } from "../../src/cli/agreement/index.js";
import { logGroup } from "../../src/cli/log/index.js";
import { inquireVerb } from "../../src/cli/verbs/inquire.js";
import { parse } from "yaml";
import type { IntentAgreement } from "../../src/core/agreement/index.js";
import { agreementFromSpec } from "../../src/core/crd/index.js";
import { signerFromSeed } from "../../src/core/jose/index.js";
import { upsertAgreement } from "../../src/store/agreements.js";
import { startRegistryWorld, type RegistryWorld } from "../helpers/registry-client.js";
import { runVerb } from "../unit/cli/capture.js";
import { keyFiles, tempDir, writeDoc } from "../unit/cli/fixtures.js";

const dir = tempDir("writ-cli-api-");
const notifier = keyFiles(dir, "notifier");
let w: RegistryWorld;

beforeAll(async () => {
  w = await startRegistryWorld({ SVC_PUSH_NOTIFIER_JWK: JSON.stringify(notifier.signer.publicJwk) });
});

afterAll(async () => {
  await w?.close();
});

describe("writ inquire against the registry", () => {
  it("prints the agent's standing; an unknown agent exits 1; a wrong key exits 1", async () => {
    const operator = (await w.issueKey(await w.createOrg("agent_operator"))).token;
    const wallet = (await w.issueKey(await w.createOrg("wallet"))).token;
    const { agent_id, fingerprint } = await w.registerAgent(operator, { verification_level: "institution_attested" });
    let r = await runVerb(inquireVerb, ["--server", w.server.url, "--agent", agent_id, "--purpose", "payment_authorization"], {
      env: { WRIT_API_KEY: wallet },
    });
    expect(r.err).toBe("");
    expect(r.code).toBe(0);
    expect(r.out).toContain(`agent ${agent_id}: active, verification institution_attested`);
    expect(r.out).toContain("trust score 700 (cold start): VERIFICATION_LEVEL +700");
    expect(r.out).toContain(`fingerprint ${fingerprint}`);
    r = await runVerb(inquireVerb, ["--server", w.server.url, "--agent", agent_id, "--purpose", "payment_authorization", "--output", "json"], {
      env: { WRIT_API_KEY: wallet },
    });
    expect(JSON.parse(r.out)).toMatchObject({ agent: { agent_id }, trust_score: { score: 700 } });
    r = await runVerb(inquireVerb, ["--server", w.server.url, "--agent", "agent-nobody", "--purpose", "payment_authorization"], {
      env: { WRIT_API_KEY: wallet },
    });
    expect(r.code).toBe(1);
    expect(r.err).toContain("answered 404");
    r = await runVerb(inquireVerb, ["--server", w.server.url, "--agent", agent_id, "--purpose", "payment_authorization"], {
      env: { WRIT_API_KEY: "bur_not_a_key" },
    });
    expect(r.code).toBe(1);
    expect(r.err).toContain("answered 401");
    expect(r.err).not.toContain("bur_not_a_key");
  });
});

describe("writ agreement revoke --push against the real push endpoint", () => {
  it("the server stores the pushed revocation and its log entry verifies", async () => {
    const principal = keyFiles(dir, "principal");
    const plain = writeDoc(dir, "plain.yaml", {
      agreement_id: "agr_cli_push",
      mandates: [{ intent_id: "i1", principal: { type: "human", id: "prn_push" }, agent: { agent_id: "agent_push" }, currency: "EUR", maximum_amount: 20 }],
    });
    const signed = await runVerb(agreementGroup, ["sign", "--in", plain, "--key-file", principal.privateFile, "--delegation", "push"]);
    expect(signed.code).toBe(0);
    const path = join(dir, "signed.yaml");
    writeFileSync(path, signed.out);
    // The service accepts a principal's revocation only of an agreement it holds: store it, as the controller would.
    const record = agreementFromSpec((parse(signed.out) as { spec: unknown }).spec).record as unknown as IntentAgreement;
    await upsertAgreement(w.db.pool, { ...record, ledger: [], ledger_sequence: 0, ledger_as_of: new Date().toISOString() });
    const r = await runVerb(agreementGroup, [
      "revoke",
      "--in",
      path,
      "--reason",
      "device lost",
      "--key-file",
      principal.privateFile,
      "--push",
      w.server.url,
      "--notifier-key-file",
      notifier.privateFile,
    ]);
    expect(r.code).toBe(0);
    expect(r.err).toMatch(/pushed: stored as sha256:[0-9a-f]{64} \(revocation feed sequence \d+;/);
    const head = (await (await fetch(`${w.server.url}/v1/log/head`)).json()) as { tree_size: number };
    const again = await runVerb(agreementGroup, [
      "revoke",
      "--in",
      path,
      "--reason",
      "device lost",
      "--key-file",
      principal.privateFile,
      "--push",
      w.server.url,
      "--notifier-key-file",
      notifier.privateFile,
    ]);
    expect(again.code).toBe(0);
    expect(again.err).toContain("pushed: the server already held this revocation");
    const proof = await runVerb(logGroup, ["verify", "--server", w.server.url, "--sequence", String(head.tree_size), "--kid", signerFromSeed(w.seed).kid]);
    expect(proof.code).toBe(0);
    expect(proof.out).toContain("ok    entry      revocation entry");
    const wrongNotifier = keyFiles(dir, "mallory");
    const refused = await runVerb(agreementGroup, [
      "revoke",
      "--in",
      path,
      "--reason",
      "x",
      "--key-file",
      principal.privateFile,
      "--push",
      w.server.url,
      "--notifier-key-file",
      wrongNotifier.privateFile,
    ]);
    expect(refused.code).toBe(1);
    expect(refused.err).toContain("the revocation push was refused: 401");
  });
});
