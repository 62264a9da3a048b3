/**
 * Grants for e2e tests that verify against a real data plane (hack/bench/propagation/world.ts):
 * the CRDs applied and Established, an operator organization with a verify key, `count` grants
 * stored in Postgres, and a namespace labelled with the organization. Plus `verifyUntil`, which
 * verifies a grant until its answer passes a test (bounded, failing with the server's output).
 */
import { fileURLToPath } from "node:url";
import { createOperator, storeGrants, verifyOnce, type Grant, type Operator, type VerifyAnswer } from "../../hack/bench/propagation/world.js";
import type { Envtest } from "./envtest.js";
import type { TestDatabase } from "./pg.js";
import { ok } from "./sample-tenant.js";

const CRDS = fileURLToPath(new URL("../../crds/", import.meta.url));

/** What `setUpGrantTenant` made. */
export interface GrantTenant {
  operator: Operator;
  grants: Grant[];
}

/** Applies the CRDs, stores `count` grants named `<prefix>-NNNN` for a new operator, and binds `namespace` to it. */
export async function setUpGrantTenant(env: Envtest, db: TestDatabase, namespace: string, prefix: string, count: number): Promise<GrantTenant> {
  ok(await env.kubectl(["apply", "-f", CRDS]));
  ok(await env.kubectl(["wait", "--for=condition=Established", "--timeout=30s", "crd/delegations.writ.dev", "crd/intentagreements.writ.dev"]));
  const operator = await createOperator(db.pool, "Acme Corp");
  const grants = await storeGrants(db.pool, operator.orgId, prefix, count);
  ok(await env.kubectl(["create", "namespace", namespace]));
  ok(await env.kubectl(["label", "namespace", namespace, `writ.dev/org-id=${operator.orgId}`]));
  return { operator, grants };
}

const delay = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Verifies `g` at `url` every `everyMs` until `test` holds (at most `timeoutMs`); the answer and when it came. */
export async function verifyUntil(
  url: string,
  key: string,
  g: Grant,
  test: (a: VerifyAnswer) => boolean,
  opts: { timeoutMs: number; everyMs?: number; output?: () => string },
): Promise<{ answer: VerifyAnswer; at: number }> {
  const deadline = Date.now() + opts.timeoutMs;
  for (;;) {
    const answer = await verifyOnce(url, key, g);
    if (test(answer)) return { answer, at: Date.now() };
    if (Date.now() > deadline)
      throw new Error(`verify of ${g.agentId} did not change in time: ${JSON.stringify(answer)}\n${opts.output?.().slice(-4000) ?? ""}`);
    await delay(opts.everyMs ?? 50);
  }
}
