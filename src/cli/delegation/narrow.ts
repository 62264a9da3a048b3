/**
 * `writ delegation narrow`: a sub-delegation from a parent Delegation, as a Delegation
 * manifest whose `delegation_chain` is the parent's chain plus a link for the parent. The child
 * comes from `--child` (a Delegation manifest or a partial record: delegation_id, agent and
 * whatever narrows) and/or `--set field=value` overrides; everything else inherits from the
 * parent (see ./derive.ts). Anything wider than the parent is REFUSED with exit 1, one line per
 * field that would widen; nothing is printed on stdout then.
 */
import type { Delegation } from "../../core/delegation/index.js";
import { CliError, usageError } from "../errors.js";
import { readDocument } from "../files.js";
import { atFlag, required, setPairs } from "../flags.js";
import { nameFlag, nameFromId, type ManifestMetadata } from "../manifest.js";
import { outputFormat, renderData } from "../output.js";
import { applySets, typedSets, type FieldType } from "../set-values.js";
import { defineVerb } from "../verb.js";
import { childFieldProblems, deriveChild, narrowingProblems } from "./derive.js";
import { checkDelegation, delegationFile, delegationManifest } from "./document.js";

/** Delegation fields `--set` may give the child. */
export const DELEGATION_FIELDS: Readonly<Record<string, FieldType>> = {
  delegation_id: "string",
  "agent.agent_id": "string",
  purpose: "string",
  granted_at: "string",
  expires_at: "string",
  revocable: "boolean",
  revocation_endpoint: "string",
  privilege: "string",
  "scope.currency": "string",
  "scope.maximum_amount": "amount",
  "scope.cumulative_maximum": "amount",
  "scope.intents": "list",
  "scope.action_types": "list",
  "scope.merchants": "list",
  "scope.categories": "list",
};

/** `writ delegation narrow`. */
export const delegationNarrow = defineVerb({
  name: "delegation narrow",
  summary: "derive a narrower sub-delegation (refuses anything that widens its parent)",
  synopsis: "--parent parent.yaml (--child child.yaml | --set field=value ...) [--name N] [--namespace NS] [--at TIME] [--output yaml|json]",
  flags: [
    ["--parent <file>", "the parent Delegation manifest (or a bare delegation record)"],
    ["--child <file>", "the child: a Delegation manifest or partial record with delegation_id, agent and what narrows"],
    ["--set <field=value>", `repeatable, applied after --child; fields: ${Object.keys(DELEGATION_FIELDS).join(", ")}`],
    ["--name <name>", "metadata.name (default: the child manifest's, else from delegation_id)"],
    ["--namespace <ns>", "metadata.namespace (default: the child's, else the parent's)"],
    ["--at <time>", "granted_at when the child gives none (default now)"],
    ["--output yaml|json", "manifest format (default yaml)"],
  ],
  notes: ["Exit status: 0 printed; 1 refused (the child would widen its parent, each widening field named) or invalid; 2 bad usage."],
  examples: [
    "writ delegation narrow --parent procurement.yaml --set delegation_id=del_travel --set agent.agent_id=agent_travel --set scope.maximum_amount=300 --set scope.categories=travel > travel.yaml",
    "writ delegation narrow --parent procurement.yaml --child travel-child.yaml > travel.yaml",
  ],
  options: {
    parent: { type: "string" },
    child: { type: "string" },
    set: { type: "string", multiple: true },
    name: { type: "string" },
    namespace: { type: "string" },
    at: { type: "string" },
    output: { type: "string" },
  },
  async run(values, io) {
    const parentPath = required(values.parent, "parent", "the parent Delegation manifest");
    const sets = typedSets(setPairs(values.set), DELEGATION_FIELDS);
    if (values.child === undefined && sets.size === 0)
      throw usageError("give the child with --child <file> or --set field=value (at least delegation_id and agent.agent_id)");
    const format = outputFormat(values.output, ["yaml", "json"] as const, "yaml");
    const at = atFlag(values.at, io.now());
    const parentFile = delegationFile(readDocument(parentPath, "--parent"), parentPath);
    const parent = checkDelegation(parentFile.fields, `the parent in ${parentPath}`);
    const childFile = values.child === undefined ? { fields: {} } : delegationFile(readDocument(values.child, "--child"), values.child);
    const fields = applySets(childFile.fields, sets);
    const shape = childFieldProblems(parent, fields);
    if (shape.length > 0) throw new CliError("INPUT_INVALID", `the child cannot be derived:\n  - ${shape.join("\n  - ")}`);
    if (typeof fields.delegation_id !== "string" || fields.delegation_id === "")
      throw usageError("the child needs a delegation_id (--set delegation_id=... or in --child)");
    if (fields.delegation_id === parent.delegation_id) throw usageError(`the child needs its own delegation_id, not the parent's ${parent.delegation_id}`);
    const agent = fields.agent as { agent_id?: unknown } | undefined;
    if (typeof agent?.agent_id !== "string" || agent.agent_id === "")
      throw usageError("the child needs an agent (--set agent.agent_id=... or agent in --child)");
    const child: Delegation = deriveChild(parent, fields, at);
    const problems = narrowingProblems(parent, child);
    if (problems.length > 0) {
      throw new CliError(
        "CHECK_FAILED",
        `refused: ${child.delegation_id} would widen or break its parent ${parent.delegation_id}:\n  - ${problems.join("\n  - ")}`,
      );
    }
    const checked = checkDelegation(child, "the sub-delegation");
    const metadata: ManifestMetadata = {
      name: values.name !== undefined ? nameFlag(values.name, "name") : (childFile.metadata?.name ?? nameFromId(checked.delegation_id)),
    };
    const namespace =
      values.namespace !== undefined ? nameFlag(values.namespace, "namespace") : (childFile.metadata?.namespace ?? parentFile.metadata?.namespace);
    if (namespace !== undefined) metadata.namespace = namespace;
    if (childFile.metadata?.labels) metadata.labels = childFile.metadata.labels;
    io.stdout(renderData(delegationManifest(metadata, checked), format));
    io.stderr(`derived ${checked.delegation_id} (${checked.delegation_chain.length}-link chain) from ${parent.delegation_id}: nothing widens\n`);
    return 0;
  },
});
