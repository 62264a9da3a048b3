/**
 * The single source of validation: one shared Ajv (draft 2020-12, ajv-formats, strict mode,
 * all errors) holding every Writ schema, each compiled once on first use and cached.
 *
 * `validate` fills in schema defaults (`revocable: true`, empty `conditions` and
 * `delegation_chain` of a delegation) on the value it is given, so a valid value matches its
 * TypeScript type. Everything else about the value is left as it was.
 */
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import addFormatsModule from "ajv-formats";
import { SchemaError } from "./errors.js";
import { describeErrors } from "./messages.js";
import { SCHEMA_DOCUMENTS, SCHEMA_URIS, isSchemaName, resolveSchemaUri, type SchemaName } from "./registry.js";

// ajv-formats is CommonJS with `exports.default`; under NodeNext the default import is the
// module object, whose `default` member is the plugin at runtime as well.
const addFormats = addFormatsModule.default;

/** Outcome of `validate`: the typed value, or one plain-words line per broken rule. */
export type ValidationResult<T> = { ok: true; value: T } | { ok: false; errors: string[] };

let ajv: Ajv2020 | undefined;
const compiled = new Map<SchemaName, ValidateFunction>();

function instance(): Ajv2020 {
  if (ajv === undefined) {
    const a = new Ajv2020({
      allErrors: true,
      strict: true,
      verbose: true,
      discriminator: true,
      useDefaults: true,
    });
    addFormats(a);
    for (const doc of SCHEMA_DOCUMENTS) a.addSchema(doc);
    ajv = a;
  }
  return ajv;
}

function validatorFor(name: SchemaName): ValidateFunction {
  if (!isSchemaName(name)) throw new TypeError(`unknown schema name: ${String(name)}`);
  let fn = compiled.get(name);
  if (fn === undefined) {
    const uri = SCHEMA_URIS[name];
    fn = instance().getSchema(uri);
    if (fn === undefined) throw new Error(`schema ${uri} is not registered`);
    compiled.set(name, fn);
  }
  return fn;
}

/**
 * Validates an untrusted value against the named schema. On success the value is returned
 * typed as `T` (the caller names the type the schema describes, e.g. `IntentAgreement`).
 */
export function validate<T>(name: SchemaName, value: unknown): ValidationResult<T> {
  return run<T>(validatorFor(name), value);
}

function run<T>(fn: ValidateFunction, value: unknown): ValidationResult<T> {
  if (fn(value)) return { ok: true, value: value as T };
  const errors = describeErrors(fn.errors ?? []);
  return { ok: false, errors: errors.length > 0 ? errors : ["/: is not valid"] };
}

/** Like `validate`, but returns the typed value or throws a `SchemaError` (code SCHEMA_INVALID). */
export function assertValid<T>(name: SchemaName, value: unknown): T {
  const result = validate<T>(name, value);
  if (!result.ok) throw new SchemaError(name, result.errors);
  return result.value;
}

const adHoc = new WeakMap<object, ValidateFunction>();

/**
 * A validator for a schema that is not one of the named ones (for example an API route's
 * request body) compiled once per schema object on the shared instance, so it may `$ref` any
 * Writ schema by its absolute URI. The schema must not carry a Writ `$id`.
 */
export function validatorForSchema<T>(schema: object): (value: unknown) => ValidationResult<T> {
  let fn = adHoc.get(schema);
  if (fn === undefined) {
    fn = instance().compile(schema);
    adHoc.set(schema, fn);
  }
  const compiledFn = fn;
  return (value) => run<T>(compiledFn, value);
}

/**
 * The raw schema object of a name (a whole document, or a `$defs` entry). Its `$ref`s are
 * absolute URIs into `SCHEMA_DOCUMENTS`; use `inlinedSchemaFor` for a self-contained copy.
 * Do not mutate it.
 */
export function schemaFor(name: SchemaName): object {
  if (!isSchemaName(name)) throw new TypeError(`unknown schema name: ${String(name)}`);
  const schema = resolveSchemaUri(SCHEMA_URIS[name]);
  if (schema === undefined) throw new Error(`schema ${SCHEMA_URIS[name]} is not registered`);
  return schema;
}
