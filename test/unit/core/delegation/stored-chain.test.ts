/**
 * withStoredChain and chainCopyProblems: a chain is judged by the delegations it cites as
 * stored, never by the copies the child carries (docs/threat-model/chains.md).
 */
import { describe, expect, it } from "vitest";
import {
  chainCopyProblems,
  parentLink,
  prepareDelegation,
  withStoredChain,
  type Delegation,
  type StoredAncestor,
} from "../../../../src/core/delegation/index.js";
import { evaluateChain } from "../../../../src/core/evaluate/index.js";
import { DEFAULT_POLICY, NO_REVOCATIONS, type EvalContext } from "../../../../src/core/evaluate/types.js";
import { delegation, T0 } from "../../../fixtures/records.js";

const ctx: EvalContext = { now: T0, policy: DEFAULT_POLICY, revocations: NO_REVOCATIONS };

/** A root grant, its child (an exact derivation), both stored for org "o". */
function family(): { root: Delegation; child: Delegation; stored: StoredAncestor[] } {
  const root = delegation(undefined, { delegation_id: "del-root", agent: { agent_id: "agent-parent" }, delegation_chain: [], conditions: [] });
  const child = delegation(undefined, {
    delegation_id: "del-child",
    agent: { agent_id: "agent-child" },
    delegation_chain: [parentLink(root)],
    scope: { ...root.scope, maximum_amount: 500, cumulative_maximum: 5000 },
    conditions: [],
  });
  return { root, child, stored: [{ delegation: root, orgId: "o", revoked: false }] };
}

describe("withStoredChain", () => {
  it("accepts an exact derivation of the stored parent", () => {
    const { child, stored } = family();
    const p = withStoredChain(prepareDelegation(child), "o", stored);
    expect(p.chainBroken).toBeUndefined();
    expect(p.chainWidened).toBeUndefined();
    expect(evaluateChain(p, ctx)).toEqual([]);
    expect(chainCopyProblems(child, stored)).toEqual([]);
  });

  it("judges narrowing against the stored parent, not an inflated copy", () => {
    const { root, child, stored } = family();
    const inflated = {
      ...child,
      scope: { ...child.scope, maximum_amount: 5000 },
      delegation_chain: [{ ...parentLink(root), scope: { ...root.scope, maximum_amount: 50_000 } }],
    };
    expect(prepareDelegation(inflated).chainWidened).toBeUndefined(); // the copy alone lets it through
    expect(withStoredChain(prepareDelegation(inflated), "o", stored).chainWidened).toMatch(
      /^this delegation \(del-child\) widens maximum_amount: 5000\.00 > 1000\.00 USD/,
    );
    expect(chainCopyProblems(inflated, stored)).toEqual(["link 1 (del-root) is not a copy of the stored delegation it cites: scope differs"]);
  });

  it("breaks on a link not stored, of another organization, filed under other links, or of another root principal", () => {
    const { root, child, stored } = family();
    expect(withStoredChain(prepareDelegation(child), "o", [undefined]).chainBroken).toBe(
      "link 1 (del-root) is not a stored delegation: a chain can only cite grants this service holds",
    );
    expect(withStoredChain(prepareDelegation(child), "other", stored).chainBroken).toBe("link 1 (del-root) is stored for another organization");
    const filed = { ...root, delegation_chain: [{ ...parentLink(root), delegation_id: "del-elsewhere" }] };
    expect(withStoredChain(prepareDelegation(child), "o", [{ delegation: filed, orgId: "o", revoked: false }]).chainBroken).toMatch(
      /is stored under the chain \[del-elsewhere\], not \[\]/,
    );
    const keyless = { ...root, principal: { type: root.principal.type, id: root.principal.id } };
    expect(withStoredChain(prepareDelegation(child), "o", [{ delegation: keyless, orgId: "o", revoked: false }]).chainBroken).toMatch(/another root principal/);
  });

  it("a stored revocation, suspension, expiry or narrowing of the parent reaches the child", () => {
    const { root, child } = family();
    const revoked = withStoredChain(prepareDelegation(child), "o", [{ delegation: root, orgId: "o", revoked: true }]);
    expect(evaluateChain(revoked, ctx).map((f) => f.code)).toEqual(["CHAIN_LINK_REVOKED"]);
    const suspended = withStoredChain(prepareDelegation(child), "o", [{ delegation: { ...root, status: "suspended" }, orgId: "o", revoked: false }]);
    expect(evaluateChain(suspended, ctx)).toEqual([
      { code: "DELEGATION_SUSPENDED", message: "link 1 (del-root) is suspended, which suspends everything below it" },
    ]);
    const shortened = { ...root, expires_at: new Date(T0 - 1000).toISOString() };
    const expired = withStoredChain(prepareDelegation(child), "o", [{ delegation: shortened, orgId: "o", revoked: false }]);
    expect(evaluateChain(expired, ctx).map((f) => f.code)).toContain("CHAIN_LINK_EXPIRED");
    const narrowed = { ...root, scope: { ...root.scope, maximum_amount: 100 } };
    expect(withStoredChain(prepareDelegation(child), "o", [{ delegation: narrowed, orgId: "o", revoked: false }]).chainWidened).toMatch(
      /maximum_amount: 500\.00 > 100\.00 USD/,
    );
  });
});
