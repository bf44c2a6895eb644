//! An rjsf `ValidatorType` that needs no `eval`: @cfworker/json-schema interprets
//! schemas instead of compiling them (ajv compiles with `new Function`, which the
//! desktop's CSP forbids).
//!
//! Template-aware: a value holding `{{ … }}` is resolved at run time, so errors *at*
//! or *inside* such a value are dropped (a template in an integer field, or in a
//! string field with a `format`/`enum`, is fine). Errors are reported the way
//! rjsf's ajv validator reports them (`property` in accessor notation, `required`
//! errors on the missing property) so rjsf places them under the right field.

import { Validator, type OutputUnit, type Schema, type SchemaDraft } from '@cfworker/json-schema';
import {
  createErrorHandler,
  toErrorSchema,
  unwrapErrorHandler,
  validationDataMerge,
  type CustomValidator,
  type ErrorSchema,
  type ErrorTransformer,
  type RJSFSchema,
  type RJSFValidationError,
  type UiSchema,
  type ValidationData,
  type ValidatorType,
} from '@rjsf/utils';
import { hasTemplate } from './completion';

export interface EvalFreeValidatorOptions {
  /** Ignore errors at values that hold a template (default true). */
  templates?: boolean;
}

/** Units that only say "something inside failed"; the inner unit carries the error. */
const WRAPPERS = new Set([
  'properties',
  'patternProperties',
  'items',
  'prefixItems',
  'additionalItems',
  'unevaluatedItems',
  'unevaluatedProperties',
  '$ref',
  '$recursiveRef',
  '$dynamicRef',
  'allOf',
  'if',
  'then',
  'else',
  'dependentSchemas',
  'dependencies',
  'false',
]);

function draftOf(schema: unknown): SchemaDraft {
  const s = schema && typeof schema === 'object' ? (schema as { $schema?: unknown }).$schema : undefined;
  if (typeof s !== 'string') return '2020-12';
  if (s.includes('draft-04') || s.includes('draft-03')) return '4';
  if (s.includes('draft-06') || s.includes('draft-07')) return '7';
  if (s.includes('2019-09')) return '2019-09';
  return '2020-12';
}

/** `#/a/b%20c` → ['a', 'b c'] */
function pointerTokens(location: string): string[] {
  const p = location.replace(/^#/, '');
  if (p === '' || p === '/') return [];
  return p
    .split('/')
    .slice(1)
    .map((t) => {
      let d = t;
      try {
        d = decodeURIComponent(t);
      } catch {
        /* keep as is */
      }
      return d.replace(/~1/g, '/').replace(/~0/g, '~');
    });
}

/** ['a', 0, 'b c'] → `.a[0]['b c']` (rjsf's `property`). */
function accessor(tokens: readonly (string | number)[], data: unknown): string {
  let out = '';
  let cur: unknown = data;
  for (const t of tokens) {
    const isIndex = Array.isArray(cur) && /^\d+$/.test(String(t));
    if (isIndex) out += `[${t}]`;
    else if (/^[A-Za-z_$][A-Za-z0-9_$]*$/.test(String(t))) out += `.${t}`;
    else out += `['${String(t).replace(/\\/g, '\\\\').replace(/'/g, "\\'")}']`;
    cur = cur && typeof cur === 'object' ? (cur as Record<string, unknown>)[String(t)] : undefined;
  }
  return out;
}

/** Pointers (token lists joined by \u0000) of every string value holding a template. */
function templateLocations(data: unknown): Set<string> {
  const out = new Set<string>();
  const visit = (v: unknown, path: string[]) => {
    if (typeof v === 'string') {
      if (hasTemplate(v)) out.add(path.join('\u0000'));
    } else if (Array.isArray(v)) {
      v.forEach((x, i) => visit(x, [...path, String(i)]));
    } else if (v && typeof v === 'object') {
      for (const [k, x] of Object.entries(v)) visit(x, [...path, k]);
    }
  };
  visit(data, []);
  return out;
}

function underTemplate(tokens: readonly string[], templates: Set<string>): boolean {
  for (let n = tokens.length; n >= 0; n--) if (templates.has(tokens.slice(0, n).join('\u0000'))) return true;
  return false;
}

/** A friendlier message in ajv's words where we recognise cfworker's. */
function message(unit: OutputUnit): { name: string; message: string; params: Record<string, unknown>; extra?: string } {
  const e = unit.error;
  switch (unit.keyword) {
    case 'required': {
      const m = /required property "(.*)"/.exec(e);
      const prop = m ? m[1]! : '';
      return { name: 'required', message: `must have required property '${prop}'`, params: { missingProperty: prop }, extra: prop };
    }
    case 'type': {
      const m = /Expected "(.*)"/.exec(e);
      const type = m ? m[1]!.replace(/", "/g, ',') : '';
      return { name: 'type', message: type ? `must be ${type.split(',').join(' or ')}` : e, params: { type } };
    }
    case 'enum':
      return { name: 'enum', message: 'must be equal to one of the allowed values', params: {} };
    case 'const':
      return { name: 'const', message: 'must be equal to constant', params: {} };
    case 'anyOf':
      return { name: 'anyOf', message: 'must match a schema in anyOf', params: {} };
    case 'oneOf':
      return { name: 'oneOf', message: 'must match exactly one schema in oneOf', params: {} };
    case 'additionalProperties': {
      const m = /Property "(.*)" does not match additional/.exec(e);
      return { name: 'additionalProperties', message: 'must NOT have additional properties', params: { additionalProperty: m?.[1] } };
    }
    default:
      return { name: unit.keyword, message: e.replace(/^Instance /, '').replace(/\.$/, ''), params: {} };
  }
}

export class EvalFreeValidator implements ValidatorType<unknown, RJSFSchema> {
  private readonly templates: boolean;
  private cache = new WeakMap<object, WeakMap<object, Validator>>();

  constructor(opts: EvalFreeValidatorOptions = {}) {
    this.templates = opts.templates ?? true;
  }

  /** A cfworker validator for `schema`, with the root's definitions reachable. Cached per (schema, root). */
  private compile(schema: RJSFSchema, rootSchema?: RJSFSchema): Validator {
    const root = rootSchema ?? schema;
    let inner = this.cache.get(schema);
    if (!inner) {
      inner = new WeakMap();
      this.cache.set(schema, inner);
    }
    const hit = inner.get(root);
    if (hit) return hit;
    // cfworker annotates schema objects while dereferencing: validate a copy.
    let copy = JSON.parse(JSON.stringify(schema)) as Schema;
    if (root !== schema && !copy.$id) {
      const r = root as Schema;
      copy = { ...copy };
      if (r.$defs && !copy.$defs) copy.$defs = JSON.parse(JSON.stringify(r.$defs));
      if (r.definitions && !copy.definitions) copy.definitions = JSON.parse(JSON.stringify(r.definitions));
    }
    const v = new Validator(copy, draftOf(root), false);
    inner.set(root, v);
    return v;
  }

  private errorsOf(schema: RJSFSchema, data: unknown, rootSchema?: RJSFSchema): RJSFValidationError[] {
    if (data === undefined) {
      const objectLike = schema.type === 'object' || (schema.type === undefined && !!schema.properties);
      if (!objectLike) return [];
      data = {};
    }
    const result = this.compile(schema, rootSchema).validate(data);
    if (result.valid) return [];
    const templates = this.templates ? templateLocations(data) : new Set<string>();
    const units = result.errors;
    // Errors inside an anyOf/oneOf branch are summed up by the anyOf/oneOf unit itself.
    const branchRoots = units
      .filter((u) => u.keyword === 'anyOf' || u.keyword === 'oneOf' || u.keyword === 'not')
      .map((u) => u.keywordLocation + '/');
    const out: RJSFValidationError[] = [];
    const seen = new Set<string>();
    for (const u of units) {
      if (WRAPPERS.has(u.keyword)) continue;
      if (branchRoots.some((r) => u.keywordLocation.startsWith(r))) continue;
      const tokens = pointerTokens(u.instanceLocation);
      if (underTemplate(tokens, templates)) continue;
      const m = message(u);
      const at = m.name === 'required' && m.extra !== undefined ? [...tokens, m.extra] : tokens;
      const property = accessor(at, data);
      const key = `${property}\u0000${m.message}`;
      if (seen.has(key)) continue;
      seen.add(key);
      out.push({
        name: m.name,
        message: m.message,
        params: m.params,
        property,
        schemaPath: u.keywordLocation,
        stack: `${property ? property + ' ' : ''}${m.message}`.trim(),
      });
    }
    return out;
  }

  rawValidation<Result = RJSFValidationError>(schema: RJSFSchema, formData?: unknown): { errors?: Result[]; validationError?: Error } {
    try {
      return { errors: this.errorsOf(schema, formData) as Result[] };
    } catch (e) {
      return { validationError: e instanceof Error ? e : new Error(String(e)) };
    }
  }

  validateFormData(
    formData: unknown,
    schema: RJSFSchema,
    customValidate?: CustomValidator<unknown, RJSFSchema>,
    transformErrors?: ErrorTransformer<unknown, RJSFSchema>,
    uiSchema?: UiSchema<unknown, RJSFSchema>,
  ): ValidationData<unknown> {
    const raw = this.rawValidation<RJSFValidationError>(schema, formData);
    let errors = raw.errors ?? [];
    const invalid = raw.validationError;
    if (invalid) errors = [...errors, { stack: `invalid schema: ${invalid.message}` }];
    if (typeof transformErrors === 'function') errors = transformErrors(errors, uiSchema);
    let errorSchema = toErrorSchema<unknown>(errors) as ErrorSchema<unknown>;
    if (invalid) {
      errorSchema = { ...errorSchema, $schema: { __errors: [`invalid schema: ${invalid.message}`] } } as ErrorSchema<unknown>;
    }
    if (typeof customValidate !== 'function') return { errors, errorSchema };
    const handler = customValidate(formData, createErrorHandler<unknown>(formData), uiSchema, errorSchema);
    return validationDataMerge({ errors, errorSchema }, unwrapErrorHandler(handler));
  }

  isValid(schema: RJSFSchema, formData: unknown, rootSchema: RJSFSchema): boolean {
    try {
      return this.errorsOf(schema, formData, rootSchema).length === 0;
    } catch {
      return false;
    }
  }

  reset(): void {
    this.cache = new WeakMap();
  }
}

/** The validator the inspector's forms use. */
export const evalFreeValidator = new EvalFreeValidator();
