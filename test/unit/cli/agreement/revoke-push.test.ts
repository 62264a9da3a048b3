/**
 * `writ agreement revoke --push`: the push a tiny local stand-in server receives is the spec's
 * body, signed by the notifier key over the canonical body without `signature`; a refused push
 * still prints the revoked manifest and exits 1.
 */
import { writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { agreementGroup } from "../../../../src/cli/agreement/index.js";
import { verifyRevocation, verifyRevocationPush, type IntentAgreement } from "../../../../src/core/agreement/index.js";
import { agreementFromSpec } from "../../../../src/core/crd/index.js";
import { runVerb } from "../capture.js";
import { keyFiles, tempDir, writeDoc } from "../fixtures.js";

let server: Server;
let base = "";
let status = 200;
const received: Array<{ url: string; body: Record<string, unknown> }> = [];
let dir: string;
let principal: ReturnType<typeof keyFiles>;
let notifier: ReturnType<typeof keyFiles>;
let signedPath: string;

beforeAll(async () => {
  server = createServer((req, res) => {
    let text = "";
    req.on("data", (c: Buffer) => (text += c.toString("utf8")));
    req.on("end", () => {
      received.push({ url: req.url ?? "", body: JSON.parse(text) as Record<string, unknown> });
      res.writeHead(status, { "content-type": "application/json" });
      res.end(JSON.stringify(status === 200 ? { stored: true, revocation_id: "sha256:abc", sequence: 7 } : { error: "revocation push did not verify" }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  dir = tempDir();
  principal = keyFiles(dir, "principal");
  notifier = keyFiles(dir, "notifier");
  const plain = writeDoc(dir, "plain.yaml", {
    agreement_id: "agr_push",
    mandates: [{ intent_id: "i1", principal: { type: "human", id: "prn_p" }, agent: { agent_id: "a1" }, currency: "EUR", maximum_amount: 10 }],
  });
  const r = await runVerb(agreementGroup, ["sign", "--in", plain, "--key-file", principal.privateFile, "--delegation", "d"]);
  signedPath = join(dir, "signed.yaml");
  writeFileSync(signedPath, r.out);
});

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

describe("writ agreement revoke --push", () => {
  it('POSTs {at, svc_revocation_push: "1", revocation, signature} signed by the notifier', async () => {
    status = 200;
    const r = await runVerb(agreementGroup, [
      "revoke",
      "--in",
      signedPath,
      "--reason",
      "stolen",
      "--key-file",
      principal.privateFile,
      "--push",
      base,
      "--notifier-key-file",
      notifier.privateFile,
      "--at",
      "2026-03-01T12:00:00Z",
    ]);
    expect(r.code).toBe(0);
    expect(r.err).toContain("pushed: stored as sha256:abc (revocation feed sequence 7;");
    const push = received.at(-1);
    expect(push?.url).toBe("/v1/revocations/push");
    const { signature, ...rest } = push?.body ?? {};
    expect(Object.keys(rest).sort()).toEqual(["at", "revocation", "svc_revocation_push"]);
    expect(rest).toMatchObject({ at: "2026-03-01T12:00:00Z", svc_revocation_push: "1" });
    await expect(verifyRevocationPush({ ...rest, signature }, notifier.signer.publicJwk)).resolves.toBeUndefined();
    const record = agreementFromSpec((parse(r.out) as { spec: unknown }).spec).record as unknown as IntentAgreement;
    expect(rest.revocation).toEqual(record.revocation);
    expect(await verifyRevocation(record)).toBe("valid");
  });

  it("a refused push still prints the revoked manifest and exits 1 with the server's words", async () => {
    status = 401;
    const r = await runVerb(agreementGroup, [
      "revoke",
      "--in",
      signedPath,
      "--reason",
      "stolen",
      "--key-file",
      principal.privateFile,
      "--push",
      base,
      "--notifier-key-file",
      notifier.privateFile,
    ]);
    expect(r.code).toBe(1);
    expect(r.out).toContain("state: revoked");
    expect(r.err).toContain("the revocation push was refused: 401 revocation push did not verify");
    expect(r.err).toContain("SVC_PUSH_NOTIFIER_JWK");
  });

  it("--push needs --notifier-key-file (exit 2); an unreachable server exits 1", async () => {
    let r = await runVerb(agreementGroup, ["revoke", "--in", signedPath, "--reason", "x", "--key-file", principal.privateFile, "--push", base]);
    expect(r.code).toBe(2);
    expect(r.err).toContain("--push needs --notifier-key-file");
    r = await runVerb(agreementGroup, [
      "revoke",
      "--in",
      signedPath,
      "--reason",
      "x",
      "--key-file",
      principal.privateFile,
      "--push",
      "http://127.0.0.1:1",
      "--notifier-key-file",
      notifier.privateFile,
    ]);
    expect(r.code).toBe(1);
    expect(r.err).toContain("cannot reach http://127.0.0.1:1");
  });
});
