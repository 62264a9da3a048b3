import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { prepareChain } from "../../../../src/core/delegation/chain.js";
import { evaluateChain } from "../../../../src/core/evaluate/delegation-chain.js";
import { prepareDelegation } from "../../../../src/core/delegation/prepare.js";
import { scopeWidenings } from "../../../../src/core/delegation/scope.js";
import type { ChainLink, Delegation, Scope } from "../../../../src/core/delegation/types.js";
import { DEFAULT_POLICY, NO_REVOCATIONS, type EvalContext, type RevocationView } from "../../../../src/core/evaluate/types.js";
import { formatMinor } from "../../../../src/core/money/index.js";

function link(over: Partial<ChainLink> & Pick<ChainLink, "delegation_id">): ChainLink {
  return {
    delegator: { type: "human", id: "alice" },
    delegate: { agent_id: "a1" },
    delegated_at: "2026-01-01T00:00:00Z",
    expires_at: "2026-12-31T00:00:00Z",
    scope: { currency: "USD", maximum_amount: 1000, cumulative_maximum: 5000, merchants: ["m1", "m2", "m3"] },
    conditions: [{ type: "max_risk_score", value: 80 }],
    ...over,
  };
}

const L1 = link({ delegation_id: "del_a" });
const L2 = link({
  delegation_id: "del_b",
  delegator: { type: "agent", id: "a1" },
  delegate: { agent_id: "a2" },
  delegated_at: "2026-02-01T00:00:00Z",
  expires_at: "2026-11-30T00:00:00Z",
  scope: { currency: "USD", maximum_amount: 500, cumulative_maximum: 2000, merchants: ["m1", "m2"] },
  conditions: [{ type: "max_risk_score", value: 60 }],
});

function delegation(over: Partial<Delegation> = {}): Delegation {
  return {
    delegation_id: "del_c",
    principal: { type: "human", id: "alice" },
    agent: { agent_id: "a3" },
    granted_at: "2026-03-01T00:00:00Z",
    expires_at: "2026-06-30T00:00:00Z",
    purpose: "buy office supplies",
    scope: { currency: "USD", maximum_amount: 100, cumulative_maximum: 300, merchants: ["m1"] },
    conditions: [{ type: "max_risk_score", value: 50 }],
    revocable: true,
    delegation_chain: [L1, L2],
    status: "active",
    ...over,
  };
}

function ctx(nowIso: string, revocations: RevocationView = NO_REVOCATIONS): EvalContext {
  return { now: Date.parse(nowIso), policy: DEFAULT_POLICY, revocations };
}

describe("prepareChain: continuity", () => {
  it("accepts an intact, narrowing chain and an empty one", () => {
    const p = prepareChain(delegation());
    expect(p.chainBroken).toBeUndefined();
    expect(p.chainWidened).toBeUndefined();
    expect(p.chain.map((l) => l.expiresAtMs)).toEqual([Date.parse(L1.expires_at), Date.parse(L2.expires_at)]);
    expect(prepareChain(delegation({ delegation_chain: [] }))).toEqual({ chain: [] });
  });

  it("breaks on a direct grant from an agent to itself", () => {
    const self = delegation({ principal: { type: "agent", id: "a3" }, delegation_chain: [] });
    expect(prepareChain(self).chainBroken).toBe("this delegation (del_c) delegates from agent a3 to itself");
    expect(prepareChain({ ...self, principal: { type: "agent", id: "a0" } }).chainBroken).toBeUndefined();
  });

  it("breaks when link 1 is not delegated by the root principal", () => {
    const p = prepareChain(delegation({ principal: { type: "human", id: "bob" } }));
    expect(p.chainBroken).toBe("link 1 (del_a) is delegated by human:alice, not by the root principal human:bob");
    expect(prepareChain(delegation({ principal: { type: "business", id: "alice" } })).chainBroken).toMatch(/^link 1 \(del_a\)/);
  });

  it("breaks when a link is not delegated by the previous link's delegate", () => {
    const p = prepareChain(delegation({ delegation_chain: [L1, { ...L2, delegator: { type: "agent", id: "a9" } }] }));
    expect(p.chainBroken).toBe("link 2 (del_b) is delegated by agent:a9, not by agent:a1 (the delegate of link 1)");
    const human = prepareChain(delegation({ delegation_chain: [L1, { ...L2, delegator: { type: "human", id: "a1" } }] }));
    expect(human.chainBroken).toMatch(/^link 2 \(del_b\) is delegated by human:a1/);
  });

  it("breaks on a self-delegation and on cycles", () => {
    expect(prepareChain(delegation({ agent: { agent_id: "a2" } })).chainBroken).toBe("this delegation (del_c) delegates from agent a2 to itself");
    expect(prepareChain(delegation({ agent: { agent_id: "a1" } })).chainBroken).toMatch(/already appears in the chain: the chain has a cycle/);
    const loop = prepareChain(delegation({ delegation_chain: [L1, { ...L2, delegate: { agent_id: "a1" } }] }));
    expect(loop.chainBroken).toBe("link 2 (del_b) delegates to agent a1, which already appears above it: the chain has a cycle");
    const rootAgent = prepareChain(
      delegation({
        principal: { type: "agent", id: "root" },
        delegation_chain: [
          { ...L1, delegator: { type: "agent", id: "root" } },
          { ...L2, delegate: { agent_id: "root" } },
        ],
      }),
    );
    expect(rootAgent.chainBroken).toMatch(/cycle/);
  });

  it("breaks on a repeated delegation id", () => {
    expect(prepareChain(delegation({ delegation_chain: [L1, { ...L2, delegation_id: "del_a" }] })).chainBroken).toMatch(/repeats a delegation_id/);
    expect(prepareChain(delegation({ delegation_chain: [{ ...L1, delegation_id: "del_c" }, L2] })).chainBroken).toMatch(/^link 1 \(del_c\) repeats/);
  });

  it("breaks on malformed links without throwing, and treats their expiry as past", () => {
    const noScope = { ...L2, scope: undefined } as unknown as ChainLink;
    expect(prepareChain(delegation({ delegation_chain: [L1, noScope] })).chainBroken).toBe("link 2 (del_b) has no scope with a currency");
    const badTime = prepareChain(delegation({ delegation_chain: [{ ...L1, expires_at: "soon" }, L2] }));
    expect(badTime.chainBroken).toBe('link 1 (del_a) has an unparseable expires_at "soon"');
    expect(badTime.chain[0]?.expiresAtMs).toBe(0);
    expect(prepareChain(delegation({ delegation_chain: [L1, null as unknown as ChainLink] })).chainBroken).toBe("link 2 (?) is not an object");
    expect(prepareChain(delegation({ delegation_chain: "x" as unknown as ChainLink[] })).chainBroken).toBe("delegation_chain is not a list");
    expect(prepareChain(delegation({ agent: {} as Delegation["agent"] })).chainBroken).toBe("this delegation (del_c) names no agent");
  });
});

describe("prepareChain: narrowing", () => {
  it("names the link and the widened amount", () => {
    const p = prepareChain(delegation({ delegation_chain: [L1, { ...L2, scope: { ...L2.scope, maximum_amount: 5000 } }] }));
    expect(p.chainWidened).toBe("link 2 (del_b) widens maximum_amount: 5000.00 > 1000.00 USD");
    expect(p.chainBroken).toBeUndefined();
  });

  it("checks this delegation against the last link", () => {
    const p = prepareChain(delegation({ scope: { currency: "USD", maximum_amount: 100, cumulative_maximum: 300 } }));
    expect(p.chainWidened).toBe("this delegation (del_c) widens merchants: absent while the parent restricts them");
  });

  it("refuses a later expiry, an earlier start and dropped or widened conditions", () => {
    expect(prepareChain(delegation({ delegation_chain: [L1, { ...L2, expires_at: "2027-01-01T00:00:00Z" }] })).chainWidened).toBe(
      "link 2 (del_b) widens expires_at: 2027-01-01T00:00:00Z is later than its parent's 2026-12-31T00:00:00Z",
    );
    expect(prepareChain(delegation({ expires_at: "2026-12-01T00:00:00Z" })).chainWidened).toMatch(/^this delegation \(del_c\) widens expires_at/);
    expect(prepareChain(delegation({ granted_at: "2026-01-15T00:00:00Z" })).chainWidened).toBe(
      "this delegation (del_c) widens granted_at: 2026-01-15T00:00:00Z is earlier than its parent's delegated_at 2026-02-01T00:00:00Z",
    );
    expect(prepareChain(delegation({ conditions: [] })).chainWidened).toBe("this delegation (del_c) widens conditions: drops max_risk_score 60");
    expect(prepareChain(delegation({ conditions: [{ type: "max_risk_score", value: 70 }] })).chainWidened).toMatch(
      /widens conditions: widens max_risk_score 60/,
    );
  });

  it("reports the first widening only, in chain order", () => {
    const p = prepareChain(delegation({ delegation_chain: [L1, { ...L2, scope: { ...L2.scope, merchants: ["m1", "m9"] } }], scope: { currency: "EUR" } }));
    expect(p.chainWidened).toBe('link 2 (del_b) widens merchants: "m9" not in the parent\'s merchants');
  });

  it("does not compare link 1 with anything: the root principal grants it", () => {
    expect(prepareChain(delegation({ delegation_chain: [{ ...L1, scope: { currency: "USD" } }, L2] })).chainWidened).toBeUndefined();
  });
});

describe("evaluateChain", () => {
  const revoked = (ids: string[]): RevocationView => ({ isDelegationRevoked: (id) => ids.includes(id), isAgreementRevoked: () => false });

  it("is empty for an intact live chain", () => {
    expect(evaluateChain(prepareDelegation(delegation()), ctx("2026-04-01T00:00:00Z"))).toEqual([]);
  });

  it("fires CHAIN_BROKEN and CHAIN_SCOPE_WIDENED from the prepared facts", () => {
    const broken = prepareDelegation(delegation({ agent: { agent_id: "a2" } }));
    expect(evaluateChain(broken, ctx("2026-04-01T00:00:00Z"))).toEqual([
      { code: "CHAIN_BROKEN", message: "this delegation (del_c) delegates from agent a2 to itself" },
    ]);
    const widened = prepareDelegation(delegation({ delegation_chain: [L1, { ...L2, scope: { ...L2.scope, maximum_amount: 5000 } }] }));
    expect(evaluateChain(widened, ctx("2026-04-01T00:00:00Z"))).toEqual([
      { code: "CHAIN_SCOPE_WIDENED", message: "link 2 (del_b) widens maximum_amount: 5000.00 > 1000.00 USD" },
    ]);
  });

  it("fires CHAIN_LINK_REVOKED for a revocation anywhere above", () => {
    const p = prepareDelegation(delegation());
    expect(evaluateChain(p, ctx("2026-04-01T00:00:00Z", revoked(["del_a"])))).toEqual([
      { code: "CHAIN_LINK_REVOKED", message: "link 1 (del_a) is revoked, which invalidates everything below it" },
    ]);
    expect(evaluateChain(p, ctx("2026-04-01T00:00:00Z", revoked(["del_b", "del_a"])))).toHaveLength(1);
    expect(evaluateChain(p, ctx("2026-04-01T00:00:00Z", revoked(["del_c", "other"])))).toEqual([]);
  });

  it("fires CHAIN_LINK_EXPIRED once a link's expiry is reached", () => {
    const p = prepareDelegation(delegation({ delegation_chain: [L1, { ...L2, expires_at: "2026-04-01T00:00:00Z" }], expires_at: "2026-04-01T00:00:00Z" }));
    expect(evaluateChain(p, ctx("2026-03-31T23:59:59Z"))).toEqual([]);
    expect(evaluateChain(p, ctx("2026-04-01T00:00:00Z"))).toEqual([
      { code: "CHAIN_LINK_EXPIRED", message: "link 2 (del_b) expired at 2026-04-01T00:00:00Z, which invalidates everything below it" },
    ]);
  });
});

// ---------------------------------------------------------------------------------------
// Property: any single widened field is refused and named; narrowings are accepted.

const CURRENCIES = ["USD", "EUR", "JPY", "KWD"] as const;
const UNIVERSE = ["a", "b", "c", "d", "e"];
const LIST_FIELDS = ["action_types", "merchants", "categories", "intents"] as const;
type Field = "currency" | "maximum_amount" | "cumulative_maximum" | (typeof LIST_FIELDS)[number];

const maskArb = fc.array(fc.boolean(), { minLength: 5, maxLength: 5 });
const pick = (from: readonly string[], mask: boolean[]): string[] => from.filter((_, i) => mask[i % mask.length]);

const specArb = fc.record({
  currency: fc.constantFrom(...CURRENCIES),
  max: fc.option(fc.bigInt({ min: 0n, max: 10n ** 12n }), { nil: undefined }),
  cum: fc.option(fc.bigInt({ min: 0n, max: 10n ** 12n }), { nil: undefined }),
  lists: fc.record({
    action_types: fc.option(maskArb, { nil: undefined }),
    merchants: fc.option(maskArb, { nil: undefined }),
    categories: fc.option(maskArb, { nil: undefined }),
    intents: fc.option(
      maskArb.filter((m) => m.some(Boolean)),
      { nil: undefined },
    ),
  }),
  childMaxPermille: fc.integer({ min: 0, max: 1000 }),
  childCumPermille: fc.integer({ min: 0, max: 1000 }),
  childMasks: fc.record({ action_types: maskArb, merchants: maskArb, categories: maskArb, intents: maskArb }),
  widenPick: fc.nat(),
  widenHow: fc.nat(),
  delta: fc.bigInt({ min: 1n, max: 10n ** 6n }),
});
type Spec = typeof specArb extends fc.Arbitrary<infer T> ? T : never;

const major = (minor: bigint, currency: string): number => Number(formatMinor(minor, currency));

function parentScope(s: Spec): Scope {
  const scope: Scope = { currency: s.currency };
  if (s.max !== undefined) scope.maximum_amount = major(s.max, s.currency);
  if (s.cum !== undefined) scope.cumulative_maximum = major(s.cum, s.currency);
  for (const f of LIST_FIELDS) {
    const m = s.lists[f];
    if (m) scope[f] = pick(UNIVERSE, m);
  }
  return scope;
}

function narrowing(s: Spec, parent: Scope): Scope {
  const child: Scope = { currency: s.currency };
  if (s.max !== undefined) child.maximum_amount = major((s.max * BigInt(s.childMaxPermille)) / 1000n, s.currency);
  if (s.cum !== undefined) child.cumulative_maximum = major((s.cum * BigInt(s.childCumPermille)) / 1000n, s.currency);
  for (const f of LIST_FIELDS) {
    const p = parent[f];
    const mask = s.childMasks[f];
    if (p === undefined) {
      if (mask[0]) child[f] = pick(UNIVERSE, mask);
      continue;
    }
    let sub = p.filter((_, i) => mask[i % mask.length]);
    if (f === "intents" && sub.length === 0) sub = p.slice(0, 1); // empty intents would bind all
    child[f] = sub;
  }
  return child;
}

function widenable(s: Spec, parent: Scope): Field[] {
  const out: Field[] = ["currency"];
  if (s.max !== undefined) out.push("maximum_amount");
  if (s.cum !== undefined) out.push("cumulative_maximum");
  for (const f of LIST_FIELDS) if (f === "intents" ? (parent.intents?.length ?? 0) > 0 : parent[f] !== undefined) out.push(f);
  return out;
}

function widen(s: Spec, parent: Scope, child: Scope, field: Field): Scope {
  const w: Scope = structuredClone(child);
  const how = s.widenHow % 3;
  switch (field) {
    case "currency":
      w.currency = CURRENCIES[(CURRENCIES.indexOf(s.currency) + 1 + (s.widenHow % 3)) % CURRENCIES.length] as string;
      break;
    case "maximum_amount":
    case "cumulative_maximum": {
      const p = field === "maximum_amount" ? s.max : s.cum;
      if (how === 0 || p === undefined) delete w[field];
      else w[field] = major(p + s.delta, s.currency);
      break;
    }
    default:
      if (how === 0) delete w[field];
      else if (how === 2 && field === "intents") w.intents = [];
      else w[field] = [...(w[field] ?? []), "zzz"];
  }
  return w;
}

function chainOf(parent: Scope, child: Scope): Delegation {
  return delegation({
    scope: child,
    conditions: [],
    delegation_chain: [link({ delegation_id: "del_p", delegate: { agent_id: "a1" }, scope: parent, conditions: [] })],
  });
}

describe("property: scope narrowing along a chain", () => {
  it("accepts every valid narrowing", () => {
    fc.assert(
      fc.property(specArb, (s) => {
        const parent = parentScope(s);
        const child = narrowing(s, parent);
        expect(scopeWidenings(parent, child)).toEqual([]);
        const p = prepareChain(chainOf(parent, child));
        expect(p.chainWidened).toBeUndefined();
        expect(p.chainBroken).toBeUndefined();
      }),
      { numRuns: 200 },
    );
  });

  it("refuses a narrowing with one widened field and names that field", () => {
    fc.assert(
      fc.property(specArb, (s) => {
        const parent = parentScope(s);
        const fields = widenable(s, parent);
        const field = fields[s.widenPick % fields.length] as Field;
        const child = widen(s, parent, narrowing(s, parent), field);
        const w = scopeWidenings(parent, child);
        expect(w[0]?.startsWith(`${field}: `)).toBe(true);
        const p = prepareChain(chainOf(parent, child));
        expect(p.chainWidened).toBeDefined();
        expect(p.chainWidened).toContain(`this delegation (del_c) widens ${field}: `);
      }),
      { numRuns: 200 },
    );
  });
});

describe("scopeWidenings: refunds_restore_budget", () => {
  it("a child may not let refunds restore budget where its parent does not; narrowing or equal is fine", () => {
    const base = { currency: "USD" };
    expect(scopeWidenings(base, { ...base, refunds_restore_budget: true })).toEqual(["refunds_restore_budget: true where the parent's is not"]);
    expect(scopeWidenings({ ...base, refunds_restore_budget: false }, { ...base, refunds_restore_budget: true })).toHaveLength(1);
    expect(scopeWidenings({ ...base, refunds_restore_budget: true }, { ...base, refunds_restore_budget: true })).toEqual([]);
    expect(scopeWidenings({ ...base, refunds_restore_budget: true }, base)).toEqual([]);
  });
});
