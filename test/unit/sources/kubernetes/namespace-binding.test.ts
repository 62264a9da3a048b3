import { describe, expect, it } from "vitest";
import { NamespaceBindings, bindingFor, ORG_LABEL } from "../../../../src/sources/kubernetes/namespace-binding.js";
import { KubeApiError } from "../../../../src/sources/kubernetes/errors.js";
import type { KubeTransport } from "../../../../src/sources/kubernetes/client.js";
import type { Org } from "../../../../src/store/orgs.js";
import { FakeClock } from "../../../helpers/fake-clock.js";

const ORG = "org_0123456789abcdef01234567";
const org = (status = "active"): Org => ({
  org_id: ORG,
  name: "Acme",
  org_type: "agent_operator",
  status: status as Org["status"],
  created_at: "2026-01-01T00:00:00.000Z",
});

describe("bindingFor", () => {
  it("binds a namespace labelled with an active organization", () => {
    expect(bindingFor("acme", { [ORG_LABEL]: ORG }, org())).toEqual({ ok: true, orgId: ORG });
  });
  it("refuses a missing label, a malformed id, an unknown or inactive organization, each saying why", () => {
    expect(bindingFor("acme", {}, undefined)).toMatchObject({ ok: false, message: expect.stringContaining(ORG_LABEL) });
    expect(bindingFor("acme", { [ORG_LABEL]: "acme" }, undefined)).toMatchObject({ ok: false, message: expect.stringContaining("not an organization id") });
    expect(bindingFor("acme", { [ORG_LABEL]: ORG }, undefined)).toMatchObject({ ok: false, message: expect.stringContaining("not a registered organization") });
    expect(bindingFor("acme", { [ORG_LABEL]: ORG }, org("suspended"))).toMatchObject({ ok: false, message: expect.stringContaining("not active") });
  });
});

describe("NamespaceBindings", () => {
  function fake(labels: Record<string, Record<string, string>>) {
    const calls = { ns: 0, org: 0 };
    const client = {
      request: async (_m: string, path: string) => {
        calls.ns += 1;
        const name = path.split("/").at(-1) as string;
        if (!labels[name]) throw new KubeApiError("NOT_FOUND", 404, "not found", "NotFound");
        return { metadata: { name, labels: labels[name] } };
      },
      watch: async () => ({ abort() {} }),
    } as unknown as KubeTransport;
    return { client, calls };
  }

  it("reads each namespace and organization once per TTL", async () => {
    const clock = new FakeClock();
    const { client, calls } = fake({ acme: { [ORG_LABEL]: ORG } });
    const b = new NamespaceBindings(client, async () => ((calls.org += 1), org()), clock, 10_000);
    expect(await b.resolve("acme")).toEqual({ ok: true, orgId: ORG });
    expect(await b.resolve("acme")).toEqual({ ok: true, orgId: ORG });
    expect(calls).toEqual({ ns: 1, org: 1 });
    clock.advance(10_000);
    await b.resolve("acme");
    expect(calls).toEqual({ ns: 2, org: 2 });
    expect(await b.labelledOrg("acme")).toBe(ORG);
  });

  it("caches the organization of an agent for the TTL", async () => {
    const clock = new FakeClock();
    const { client } = fake({});
    let reads = 0;
    const b = new NamespaceBindings(
      client,
      async () => org(),
      clock,
      10_000,
      async (id) => ((reads += 1), id === "agent_a" ? ORG : undefined),
    );
    expect(await b.agentOrg("agent_a")).toBe(ORG);
    expect(await b.agentOrg("agent_a")).toBe(ORG);
    expect(await b.agentOrg("agent_b")).toBeUndefined();
    expect(reads).toBe(2);
    clock.advance(10_000);
    await b.agentOrg("agent_a");
    expect(reads).toBe(3);
  });

  it("reports a namespace that does not exist", async () => {
    const { client } = fake({});
    const b = new NamespaceBindings(client, async () => org(), new FakeClock());
    expect(await b.resolve("gone")).toEqual({ ok: false, message: "namespace gone does not exist" });
    expect(await b.labelledOrg("gone")).toBeUndefined();
  });
});
