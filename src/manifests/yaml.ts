/**
 * YAML for Kubernetes: manifests and CRDs are read by go-yaml, a YAML 1.1 reader. Every string
 * (map keys included: the JWK member `y` reads as boolean true in YAML 1.1) that a YAML 1.1
 * reader would take for something else (`y`, `yes`, `on`, `2026-01-02T03:04:05Z`, `0o17`) is
 * double-quoted, so the API server sees exactly the values written, as does any YAML 1.2
 * reader. No line folding, no anchors or aliases: files read and diff plainly in Git.
 */
import { Document, Scalar, parse, visit } from "yaml";

/** Renders `value` as YAML that reads back identically under YAML 1.1 and 1.2. */
export function toKubeYaml(value: unknown): string {
  const doc = new Document(value, { aliasDuplicateObjects: false });
  visit(doc, {
    Scalar(_key, node) {
      if (typeof node.value === "string" && readsOtherwise(node.value)) node.type = Scalar.QUOTE_DOUBLE;
    },
  });
  return doc.toString({ lineWidth: 0, minContentWidth: 0 });
}

/** True when a plain YAML 1.1 scalar `text` would not read back as the string `text`. */
function readsOtherwise(text: string): boolean {
  try {
    return parse(text, { version: "1.1" }) !== text;
  } catch {
    return true;
  }
}
