/**
 * Refusals of a declared resource, and schema errors in the resource's own terms. Pure.
 *
 * The schema validator reports `<JSON pointer into the record>: <rule>`; a resource's author
 * edits `spec`, so the pointer becomes a spec path: `/scope/maximum_amount` is
 * `spec.scope.maximum_amount`, `/conditions/0/timezone` is `spec.conditions[0].timezone`, and the
 * record's `/status` is `spec.state`.
 */
import type { ReasonCode } from "../core/evaluate/index.js";
import { findPrivateJwkMembers, privateMemberMessage } from "../core/jose/index.js";

/** Why a resource is not stored as declared: the condition it fails, a reason code, and what is wrong. */
export interface Refusal {
  condition: string;
  code: ReasonCode;
  message: string;
}

function unescape(token: string): string {
  return token.replace(/~1/g, "/").replace(/~0/g, "~");
}

/** The spec path of a JSON pointer into the record (see the module comment). */
export function specPath(pointer: string): string {
  const tokens = pointer
    .split("/")
    .slice(1)
    .map(unescape)
    .filter((t, i) => !(i === 0 && t === ""));
  let out = "spec";
  tokens.forEach((t, i) => {
    const name = i === 0 && t === "status" ? "state" : t;
    out += /^\d+$/.test(name) ? `[${name}]` : /^[A-Za-z_][A-Za-z0-9_]*$/.test(name) ? `.${name}` : `[${JSON.stringify(name)}]`;
  });
  return out;
}

/** One validator line (`<pointer>: <rule>`) with its pointer as a spec path. */
export function schemaErrorInSpec(line: string): string {
  const i = line.indexOf(": ");
  if (!line.startsWith("/") || i < 0) return line;
  return `${specPath(line.slice(0, i))}: ${line.slice(i + 2)}`;
}

/** The SPEC_INVALID refusal of schema errors (at most `max` listed). */
export function schemaRefusal(errors: readonly string[], max = 10): Refusal {
  const shown = errors.slice(0, max).map(schemaErrorInSpec);
  const more = errors.length > max ? ` (and ${errors.length - max} more)` : "";
  return { condition: "Valid", code: "SPEC_INVALID", message: `the spec does not validate: ${shown.join("; ")}${more}` };
}

/** The first refusal's message, noting how many more there are. */
export function summary(refusals: readonly Refusal[]): string {
  const first = refusals[0];
  if (!first) return "";
  return refusals.length > 1 ? `${first.message} (and ${refusals.length - 1} more problem${refusals.length > 2 ? "s" : ""})` : first.message;
}

/**
 * SPEC_INVALID refusals of private key members in a spec (condition `Valid`), each naming the
 * member's path: checked before the schema, whose `not` rule cannot say which member or why.
 */
export function privateKeyRefusals(spec: unknown): Refusal[] {
  return findPrivateJwkMembers(spec, "spec").map((p) => ({ condition: "Valid", code: "SPEC_INVALID", message: privateMemberMessage(p) }));
}
