/**
 * The samples' tenant for e2e tests: the CRDs applied (and Established), an organization with
 * the samples' agents registered to it, a namespace labelled with it, and live copies of
 * config/samples dated an hour ago (the committed ones lapse) in a temp folder.
 */
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { expect } from "vitest";
import { parse } from "yaml";
import { sampleSigner, type SampleParty } from "../../src/core/samples/index.js";
import { renderSamples } from "../../src/manifests/samples.js";
import { keyId } from "../../src/core/jose/index.js";
import { insertAgent } from "../../src/store/agents.js";
import { createOrg, type Org } from "../../src/store/orgs.js";
import type { CommandResult, Envtest } from "./envtest.js";
import type { TestDatabase } from "./pg.js";

const CRDS = fileURLToPath(new URL("../../crds/", import.meta.url));

/** A manifest as read from a sample file. */
export interface SampleManifest {
  apiVersion: string;
  kind: string;
  metadata: { name: string; [k: string]: unknown };
  spec: Record<string, unknown>;
}

/** The tenant made by `setUpSampleTenant`. */
export interface SampleTenant {
  org: Org;
  namespace: string;
  /** Folder of the live sample copies. */
  samples: string;
  /** A fresh copy of one sample file. */
  sample(file: string): Promise<SampleManifest>;
  /** Removes the samples folder. */
  cleanUp(): Promise<void>;
}

/** The exit status must be 0; returns stdout. */
export function ok(r: CommandResult): string {
  expect(r.code, `${r.stderr}\n${r.stdout}`).toBe(0);
  return r.stdout;
}

/** Sets up the tenant in `namespace` (see the module comment). */
export async function setUpSampleTenant(env: Envtest, db: TestDatabase, namespace: string): Promise<SampleTenant> {
  ok(await env.kubectl(["apply", "-f", CRDS]));
  ok(
    await env.kubectl([
      "wait",
      "--for=condition=Established",
      "--timeout=30s",
      "crd/delegations.writ.dev",
      "crd/intentagreements.writ.dev",
      "crd/subscriptions.writ.dev",
    ]),
  );
  const now = new Date();
  const org = await createOrg(db.pool, { name: "Acme Corp", org_type: "agent_operator" }, now);
  const agents: [string, SampleParty][] = [
    ["agent_procurement", "procurementAgent"],
    ["agent_travel", "travelAgent"],
  ];
  for (const [agentId, party] of agents) {
    const jwk = sampleSigner(party).publicJwk;
    const r = await insertAgent(
      db.pool,
      { agent_id: agentId, org_id: org.org_id, principal_id: "prn_acme", verification_level: "operator_verified", public_key: jwk, fingerprint: keyId(jwk) },
      now,
    );
    expect(r.ok).toBe(true);
  }
  ok(await env.kubectl(["create", "namespace", namespace]));
  ok(await env.kubectl(["label", "namespace", namespace, `writ.dev/org-id=${org.org_id}`]));
  const samples = await mkdtemp(join(tmpdir(), "writ-e2e-samples-"));
  const at = new Date(Math.floor((Date.now() - 3600_000) / 60_000) * 60_000).toISOString().replace(".000Z", "Z");
  for (const f of await renderSamples(at)) await writeFile(join(samples, f.name), f.content);
  return {
    org,
    namespace,
    samples,
    sample: async (file) => parse(await readFile(join(samples, file), "utf8")) as SampleManifest,
    cleanUp: () => rm(samples, { recursive: true, force: true }),
  };
}
