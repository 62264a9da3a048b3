/**
 * Records named by an id that two organizations may each hold (docs/scale.md,
 * "Organization-scoped ids"): the one a reader may see, or a clear refusal.
 */
import { ApiError } from "../../errors.js";

/**
 * The one record among `found` (the records stored under one id, one per agent) that `visible`
 * keeps: 404 (`notFound`) when none, 409 RECORD_ID_AMBIGUOUS when several (the reader names
 * `agent_id`). An id names a record only with its agent: two organizations may each hold one.
 */
export async function theVisibleOne<T>(
  found: readonly T[],
  visible: (r: T) => boolean | Promise<boolean>,
  notFound: "AGREEMENT_NOT_FOUND" | "DELEGATION_NOT_FOUND",
): Promise<T> {
  const seen: T[] = [];
  for (const r of found) if (await visible(r)) seen.push(r);
  if (seen.length > 1)
    throw new ApiError(
      "RECORD_ID_AMBIGUOUS",
      `the id names ${notFound === "AGREEMENT_NOT_FOUND" ? "agreements" : "delegations"} of several agents; name agent_id`,
    );
  const [one] = seen;
  if (one === undefined) throw new ApiError(notFound);
  return one;
}
