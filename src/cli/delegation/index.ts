/** `writ delegation`: derive sub-delegations. */
import { defineGroup } from "../group.js";
import { delegationNarrow } from "./narrow.js";

/** The `writ delegation` group. */
export const delegationGroup = defineGroup("delegation", "derive narrower sub-delegations", [delegationNarrow]);
