/**
 * Writes docs/reasons.md from the one reason registry (src/core/evaluate/reasons.ts) and the
 * controller's own condition reasons (src/controller/reasons.ts).
 * `npm run gen:docs`; test/unit/docs.test.ts fails when the file is stale.
 */
import { writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { REASONS, REASON_CODES } from "../src/core/evaluate/reasons.js";
import { CONTROLLER_REASONS, CONTROLLER_REASON_NAMES } from "../src/controller/reasons.js";

export function renderReasonsDoc(): string {
  const rows = REASON_CODES.map((code) => {
    const r = REASONS[code];
    const verdict = "revoke" in r ? `${r.verdict} (svc_decision REVOKE)` : r.verdict;
    const attempt = "attempt" in r ? "yes" : "";
    return `| \`${code}\` | ${verdict} | ${r.means} | ${r.clears} | \`${r.requiredAction}\` | ${attempt} |`;
  });
  return [
    "# Reason codes",
    "",
    "Generated from `src/core/evaluate/reasons.ts` by `npm run gen:docs`; do not edit by hand.",
    "",
    "Each code is at once the `reasons[]` entry of a verdict, the reason of a resource's status",
    "condition, and the `reason` label of `writ_verdicts_total`. A decision's verdict is the most",
    "severe of its reasons (DENY over STEP_UP over ALLOW); `svc_decision` maps DENY to BLOCK, and a",
    "REVOKE code makes it REVOKE. `required_action` is that of the first reason with the deciding",
    "verdict.",
    "",
    "`attempt`: a DENY with at least one such reason counts toward DENIED_ATTEMPT_BURST (the agent",
    'tried what its grant forbids); no other refusal counts (docs/verify.md, "Which refusals count',
    'toward the burst").',
    "",
    "| code | verdict | means | what clears it | required_action | attempt |",
    "|---|---|---|---|---|---|",
    ...rows,
    "",
    "## Controller condition reasons",
    "",
    "Generated from `src/controller/reasons.ts`. The controller writes these PascalCase reasons into",
    "a resource's status conditions for what happened to the declaration; they never appear in a",
    "verdict. A condition that is `False` because of a refusal, or because of what verify answers",
    "for the stored record, carries a reason code from the table above instead.",
    "",
    "| reason | conditions: what it says |",
    "|---|---|",
    ...CONTROLLER_REASON_NAMES.map((r) => `| \`${r}\` | ${CONTROLLER_REASONS[r]} |`),
    "",
  ].join("\n");
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  writeFileSync(new URL("../docs/reasons.md", import.meta.url), renderReasonsDoc());
  console.log("wrote docs/reasons.md");
}
