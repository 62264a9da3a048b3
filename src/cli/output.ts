/**
 * `--output json|yaml` (and `text` where a verb has a human form): one renderer for every verb.
 *
 * YAML is written without line folding and without anchors/aliases (an object that appears
 * twice, such as a principal key, is written out twice), so a manifest reads and diffs plainly
 * in Git. Every string a YAML 1.1 reader (Kubernetes' go-yaml) would take for something else
 * (`2026-01-02T03:04:05Z`, `yes`, `on`, `0o17`) is double-quoted, so `kubectl apply` sees
 * exactly the values that were signed, as does any YAML 1.2 reader. JSON is indented by two.
 */
import { toKubeYaml } from "../manifests/index.js";
import { usageError } from "./errors.js";

/** An output format. */
export type OutputFormat = "text" | "json" | "yaml";

/** The data formats (no human text). */
export type DataFormat = Exclude<OutputFormat, "text">;

/** Reads `--output`: one of `allowed`, else `fallback` when absent. Throws a usage error. */
export function outputFormat<F extends OutputFormat>(value: string | undefined, allowed: readonly F[], fallback: F): F {
  if (value === undefined) return fallback;
  if ((allowed as readonly string[]).includes(value)) return value as F;
  throw usageError(`--output must be one of ${allowed.join(", ")}, not ${JSON.stringify(value)}`);
}

/** Renders `value` as JSON or YAML, ending with a newline. */
export function renderData(value: unknown, format: DataFormat): string {
  if (format === "json") return `${JSON.stringify(value, null, 2)}\n`;
  return toKubeYaml(value);
}
