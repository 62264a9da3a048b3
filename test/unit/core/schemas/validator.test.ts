import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormatsModule from "ajv-formats";
import {
  SCHEMA_DOCUMENTS,
  SCHEMA_NAMES,
  type SchemaName,
  commonSchema,
  inlinedSchemaFor,
  intentAgreementSchema,
  isSchemaName,
  schemaFor,
  validate,
  validatorForSchema,
} from "../../../../src/core/schemas/index.js";

type Node = Record<string, unknown>;
const isNode = (v: unknown): v is Node => typeof v === "object" && v !== null && !Array.isArray(v);

/** Every object-valued schema reachable from a node, with its location. */
function* subschemas(node: unknown, at: string): Generator<[string, Node]> {
  if (Array.isArray(node)) {
    for (const [i, v] of node.entries()) yield* subschemas(v, `${at}/${i}`);
    return;
  }
  if (!isNode(node)) return;
  yield [at, node];
  for (const [k, v] of Object.entries(node)) {
    if (k === "enum" || k === "const" || k === "default" || k === "examples" || k === "required") continue;
    yield* subschemas(v, `${at}/${k}`);
  }
}

describe("schema catalogue", () => {
  it("compiles every named schema in strict mode and validates without throwing", () => {
    for (const name of SCHEMA_NAMES) {
      const r = validate(name, {});
      expect(typeof r.ok, name).toBe("boolean");
    }
  });

  it("gives every property a description (kubectl explain shows them)", () => {
    const missing: string[] = [];
    for (const doc of SCHEMA_DOCUMENTS) {
      for (const [at, node] of subschemas(doc, doc.$id)) {
        if (!isNode(node.properties)) continue;
        for (const [prop, sub] of Object.entries(node.properties)) {
          if (!isNode(sub) || typeof sub.description !== "string" || sub.description === "") {
            missing.push(`${at}/properties/${prop}`);
          }
        }
      }
    }
    expect(missing).toEqual([]);
  });

  it("gives every document an $id under https://writ.dev/schemas/ and the 2020-12 dialect", () => {
    const ids = SCHEMA_DOCUMENTS.map((d) => d.$id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const d of SCHEMA_DOCUMENTS) {
      expect(d.$id).toMatch(/^https:\/\/writ\.dev\/schemas\/[a-z-]+\.json$/);
      expect(d.$schema).toBe("https://json-schema.org/draft/2020-12/schema");
    }
  });
});

describe("schemaFor", () => {
  it("returns the raw document or $defs entry, the same object every time", () => {
    expect(schemaFor("intent-agreement")).toBe(intentAgreementSchema);
    expect(schemaFor("jws")).toBe(commonSchema.$defs.jws);
    expect(schemaFor("condition")).toHaveProperty("discriminator", { propertyName: "type" });
  });

  it("refuses an unknown name", () => {
    expect(() => schemaFor("agreement" as SchemaName)).toThrow(TypeError);
    expect(() => validate("nope" as SchemaName, {})).toThrow(TypeError);
    expect(isSchemaName("delegation")).toBe(true);
    expect(isSchemaName("toString")).toBe(false);
  });
});

describe("validatorForSchema", () => {
  const pushBody = {
    type: "object",
    additionalProperties: false,
    required: ["at", "svc_revocation_push", "revocation", "signature"],
    properties: {
      at: { type: "string", format: "date-time", description: "When the push was sent." },
      svc_revocation_push: { const: "1", description: "Version marker." },
      revocation: { $ref: "https://writ.dev/schemas/revocation.json", description: "The revocation." },
      signature: { $ref: "https://writ.dev/schemas/common.json#/$defs/jws", description: "Notifier JWS." },
    },
  };

  it("validates an ad hoc schema that references Writ schemas, with the same messages", () => {
    const check = validatorForSchema(pushBody);
    expect(validatorForSchema(pushBody)).toBeTypeOf("function");
    const body = {
      at: "2025-01-01T00:00:00Z",
      svc_revocation_push: "1",
      revocation: {
        svc_revocation: 1,
        agreement_id: "agr_1",
        mandate_hash: `sha256:${"a".repeat(64)}`,
        at: "2025-01-01T00:00:00Z",
        reason: "lost phone",
        signature: { protected: "a", payload: "b", signature: "c" },
      },
      signature: { protected: "a", payload: "b", signature: "c" },
    };
    expect(check(body)).toEqual({ ok: true, value: body });
    expect(check({ ...body, revocation: { ...body.revocation, svc_revocation: 2 } })).toEqual({
      ok: false,
      errors: ["/revocation/svc_revocation: must equal 1"],
    });
  });

  it("refuses a schema that strict mode rejects", () => {
    expect(() => validatorForSchema({ type: "object", propertys: {} })).toThrow(/strict mode/);
  });
});

describe("inlinedSchemaFor", () => {
  const fresh = () => {
    const ajv = new Ajv2020({ allErrors: true, strict: true, discriminator: true });
    addFormatsModule.default(ajv);
    return ajv;
  };

  it("produces self-contained schemas that compile on their own in strict mode", () => {
    for (const name of SCHEMA_NAMES) {
      const s = inlinedSchemaFor(name);
      const refs = [...subschemas(s, name)].filter(([, n]) => "$ref" in n || "$defs" in n || "$id" in n);
      expect(refs, name).toEqual([]);
      expect(() => fresh().compile(s), name).not.toThrow();
    }
  });

  it("keeps the referring property's description and the target's rules", () => {
    const s = inlinedSchemaFor("ledger-entry") as { properties: Record<string, Node> };
    expect(s.properties.currency).toEqual({
      type: "string",
      pattern: "^[A-Z]{3}$",
      description: "Currency of amount.",
    });
  });

  it("returns a copy: changing it does not change the registered schema", () => {
    const s = inlinedSchemaFor("jws") as { required: string[] };
    s.required.push("extra");
    expect(validate("jws", { protected: "a", payload: "b", signature: "c" }).ok).toBe(true);
  });

  it("agrees with validate on valid and invalid values", () => {
    const treeHead = fresh().compile(inlinedSchemaFor("tree-head"));
    const head = {
      algorithm: "EdDSA",
      at: "2025-01-01T00:00:00Z",
      svc_tree_head: 1,
      root: `sha256:${"a".repeat(64)}`,
      tree_size: 1,
      signature: { protected: "a", payload: "b", signature: "c" },
    };
    expect(treeHead(head)).toBe(true);
    expect(treeHead({ ...head, algorithm: "none" })).toBe(false);
    const condition = fresh().compile(inlinedSchemaFor("condition"));
    expect(condition({ type: "max_risk_score", value: 10 })).toBe(true);
    expect(condition({ type: "max_risk_score", value: 1000 })).toBe(false);
  });
});

describe("hostile input", () => {
  it("never throws, and every error line starts with a JSON pointer", () => {
    fc.assert(
      fc.property(fc.constantFrom(...SCHEMA_NAMES), fc.jsonValue(), (name, value) => {
        const r = validate(name, value);
        if (!r.ok) {
          expect(r.errors.length).toBeGreaterThan(0);
          for (const line of r.errors) expect(line).toMatch(/^\/[^:]*: \S/);
        }
      }),
      { numRuns: 200 },
    );
  });

  it("does not let __proto__ smuggle a field past the schema", () => {
    const r = validate("actor", JSON.parse('{"role":"agent","id":"a","__proto__":{"x":1}}'));
    expect(r).toEqual({ ok: false, errors: ["/: must not have additional property '__proto__'"] });
  });
});
