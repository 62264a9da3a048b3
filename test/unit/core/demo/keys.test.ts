import { describe, expect, it } from "vitest";
import { createHash } from "node:crypto";
import {
  DEMO_AGENT_SEED,
  DEMO_AGENT_SEED_LABEL,
  DEMO_PRINCIPAL_SEED,
  DEMO_PRINCIPAL_SEED_LABEL,
  demoAgentSigner,
  demoPrincipalFingerprint,
  demoPrincipalSigner,
  seedFromLabel,
} from "../../../../src/core/demo/index.js";
import { keyId, signerFromSeed } from "../../../../src/core/jose/index.js";

describe("demo keys", () => {
  it("are the SHA-256 of their documented labels", () => {
    const sha = (s: string) => createHash("sha256").update(s).digest("hex");
    expect(DEMO_PRINCIPAL_SEED_LABEL).toBe("writ demo principal");
    expect(DEMO_AGENT_SEED_LABEL).toBe("writ demo agent");
    expect(DEMO_PRINCIPAL_SEED).toBe(sha("writ demo principal"));
    expect(DEMO_AGENT_SEED).toBe(sha("writ demo agent"));
    expect(seedFromLabel(DEMO_PRINCIPAL_SEED_LABEL)).toBe(DEMO_PRINCIPAL_SEED);
  });

  it("derive Ed25519 signers, distinct, stable across calls", () => {
    const p = demoPrincipalSigner();
    const a = demoAgentSigner();
    expect(p.alg).toBe("EdDSA");
    expect(p.publicJwk).toEqual(signerFromSeed(DEMO_PRINCIPAL_SEED).publicJwk);
    expect(a.publicJwk).toEqual(signerFromSeed(DEMO_AGENT_SEED).publicJwk);
    expect(a.kid).not.toBe(p.kid);
    expect(demoPrincipalSigner()).toBe(p);
    expect(demoPrincipalFingerprint()).toBe(keyId(p.publicJwk));
  });
});
