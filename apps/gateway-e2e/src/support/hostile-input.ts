import fc from 'fast-check';
import { servedPaths } from './routes';

/**
 * Request generators driven by the gateway's own OpenAPI document: every operation it lists, with
 * bodies, query strings, path parameters and headers that are sometimes well-formed and often
 * hostile. A new route is covered the moment it appears in the document.
 */

interface SchemaObject {
  type?: string | string[];
  format?: string;
  enum?: unknown[];
  items?: SchemaObject;
  properties?: Record<string, SchemaObject>;
  required?: string[];
  minimum?: number;
  maximum?: number;
  nullable?: boolean;
  $ref?: string;
  allOf?: SchemaObject[];
  oneOf?: SchemaObject[];
}

interface ParameterObject {
  name: string;
  in: 'path' | 'query' | 'header' | 'cookie';
  required?: boolean;
  schema?: SchemaObject;
}

export interface Operation {
  method: string;
  /** The path template, `/api/v1/products/{id}`. */
  path: string;
  parameters: ParameterObject[];
  body?: SchemaObject;
}

interface OpenApiDocument {
  servers?: { url: string; variables?: Record<string, { enum?: string[]; default: string }> }[];
  paths: Record<string, Record<string, { parameters?: ParameterObject[]; requestBody?: any }>>;
  components?: { schemas?: Record<string, SchemaObject> };
}

const METHODS = ['get', 'post', 'put', 'patch', 'delete'];

/** Every operation of the document, its schemas resolved (no `$ref` left). */
export function operationsOf(document: OpenApiDocument): Operation[] {
  const resolve = (schema: SchemaObject | undefined, depth = 0): SchemaObject | undefined => {
    if (!schema || depth > 8) return schema;
    if (schema.$ref) return resolve(document.components?.schemas?.[schema.$ref.split('/').pop()!], depth + 1);
    if (schema.allOf?.length) return resolve(schema.allOf[0], depth + 1);
    // OpenAPI 3.1's nullable: `oneOf: [schema, {type: 'null'}]`, or `type: [type, 'null']`.
    const notNull = schema.oneOf?.filter((option) => option.type !== 'null');
    if (notNull?.length === 1) return resolve(notNull[0], depth + 1);
    const resolved: SchemaObject = {
      ...schema,
      type: Array.isArray(schema.type) ? schema.type.find((type) => type !== 'null') : schema.type,
    };
    if (schema.items) resolved.items = resolve(schema.items, depth + 1);
    if (schema.properties) {
      resolved.properties = Object.fromEntries(
        Object.entries(schema.properties).map(([name, child]) => [name, resolve(child, depth + 1)!]),
      );
    }
    return resolved;
  };
  return servedPaths(document).flatMap(({ path, template }) =>
    Object.entries(document.paths[template]!)
      .filter(([method]) => METHODS.includes(method))
      .map(([method, operation]) => ({
        method: method.toUpperCase(),
        path,
        parameters: (operation.parameters ?? []).map((p) => ({ ...p, schema: resolve(p.schema) })),
        body: resolve(operation.requestBody?.content?.['application/json']?.schema),
      })),
  );
}

/** Real ids and serials of the organization under test, so that some requests reach deep into the services. */
export interface Seeds {
  ids: Record<string, string>;
  serials: string[];
}

/** Any UTF-16 code unit: lone surrogates, NUL and every control character included. */
const anyCodeUnit = fc.integer({ min: 0, max: 0xffff }).map((unit) => String.fromCharCode(unit));

const hostileString: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    '',
    '\u0000',
    'a\u0000b',
    '\udfff',
    'x\ud800',
    '\u0007\u001b[31m\r\n',
    "' OR '1'='1' --",
    '"; DROP TABLE licensing.licenses; --',
    '{"$gt": ""}',
    '$where',
    '../../../../etc/passwd',
    '%00',
    '%ZZ',
    '\u202egnp.exe',
    '__proto__',
    'constructor',
    'LIC-PHOTO-EDITOR-7K3F9QX2M4W8T1ZC',
    '00000000-0000-0000-0000-000000000000',
  ),
  fc.string({ unit: anyCodeUnit, maxLength: 40 }),
  fc.string({ maxLength: 300 }),
  fc.constant('x'.repeat(5_000)),
);

const nestedValue = (depth: number): unknown => {
  let value: unknown = 1;
  for (let i = 0; i < depth; i += 1) value = { a: value };
  return value;
};

const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 4, arbitrary: hostileString },
  fc.constantFrom<unknown>(
    2 ** 53 + 2,
    -(2 ** 63),
    1e308,
    -1,
    0,
    0.5,
    Number.MAX_SAFE_INTEGER,
    null,
    true,
    false,
    [],
    {},
  ),
  fc.constant(Array.from({ length: 10_000 }, (_, i) => `item-${i}`)),
  fc.constantFrom(nestedValue(64), nestedValue(8)),
  fc.constant(
    JSON.parse('{"__proto__": {"polluted": true}, "constructor": {"prototype": {"polluted": true}}}'),
  ),
  fc.array(hostileString, { maxLength: 5 }),
  fc.dictionary(hostileString, hostileString, { maxKeys: 3 }),
);

/** A value the schema would accept, roughly: the starting point of a request that gets far. */
function plausible(
  schema: SchemaObject | undefined,
  field: string,
  seeds: Seeds,
  depth = 0,
): fc.Arbitrary<unknown> {
  if (!schema || depth > 4) return fc.constant('x');
  if (schema.enum?.length) return fc.constantFrom(...schema.enum);
  const seeded = seededValue(field, seeds);
  switch (schema.type) {
    case 'string':
      if (seeded) return fc.oneof(fc.constant(seeded), fc.uuid());
      if (schema.format === 'uuid') return fc.uuid();
      if (schema.format === 'date-time') {
        return fc
          .date({ min: new Date('2000-01-01'), max: new Date('2100-01-01'), noInvalidDate: true })
          .map((d) => d.toISOString());
      }
      if (schema.format === 'email') return fc.emailAddress();
      return fc.string({ minLength: 1, maxLength: 20 });
    case 'integer':
      return fc.integer({ min: schema.minimum ?? 0, max: Math.min(schema.maximum ?? 1_000, 1_000_000) });
    case 'number':
      return fc.double({ noNaN: true, min: 0, max: 1_000 });
    case 'boolean':
      return fc.boolean();
    case 'array':
      if (field === 'serials' && seeds.serials.length > 0) {
        return fc.array(fc.oneof(fc.constantFrom(...seeds.serials), hostileString), {
          minLength: 1,
          maxLength: 5,
        });
      }
      return fc.array(plausible(schema.items, field, seeds, depth + 1), { maxLength: 3 });
    case 'object':
    default: {
      const properties = schema.properties ?? {};
      const required = new Set(schema.required ?? []);
      return fc.record(
        Object.fromEntries(
          Object.entries(properties).map(([name, child]) => [name, plausible(child, name, seeds, depth + 1)]),
        ),
        { requiredKeys: [...required].filter((name) => name in properties) },
      );
    }
  }
}

function seededValue(field: string, seeds: Seeds): string | undefined {
  if (['license_serial', 'license_key', 'key', 'serial'].includes(field)) return seeds.serials[0];
  const resource = field.replace(/_id$/, '');
  return field.endsWith('_id') ? seeds.ids[resource] : undefined;
}

/** A plausible body with one field, or the whole body, replaced by something hostile. */
function bodyFor(operation: Operation, seeds: Seeds): fc.Arbitrary<unknown> {
  const base = plausible(operation.body, 'body', seeds);
  const fields = Object.keys(operation.body?.properties ?? {});
  return fc.oneof(
    { weight: 2, arbitrary: base },
    {
      weight: 4,
      arbitrary: fc
        .tuple(base, fc.constantFrom(...(fields.length > 0 ? fields : ['body'])), hostileValue)
        .map(([value, field, hostile]) =>
          typeof value === 'object' && value !== null && !Array.isArray(value)
            ? { ...value, [field]: hostile }
            : hostile,
        ),
    },
    {
      weight: 1,
      arbitrary: fc
        .tuple(base, fc.string({ maxLength: 20 }), hostileValue)
        .map(([value, field, hostile]) => ({ ...(value as object), [field]: hostile })),
    },
    { weight: 1, arbitrary: hostileValue },
  );
}

/** Bodies as bytes: what JSON.stringify can never produce. */
const rawBody: fc.Arbitrary<string | Uint8Array> = fc.constantFrom<string | Uint8Array>(
  Buffer.from([0x7b, 0x22, 0x6e, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d]), // {"n":"\xff\xfe"}
  Buffer.from([0x7b, 0x22, 0x6e, 0x22, 0x3a, 0x22, 0xed, 0xa0, 0x80, 0x22, 0x7d]), // an encoded surrogate
  '{"name": "a", "name": "b", "code": "dup", "code": "dup-2"}',
  '{"seats_in_use": 9007199254740993123, "max_seats": 1e400, "page": -0}',
  '{"name": "x",',
  '{"a":'.repeat(5_000) + '1' + '}'.repeat(5_000),
  '[' + '1,'.repeat(10_000) + '1]',
  '{"__proto__": {"admin": true}}',
  '{"constructor": {"prototype": {"admin": true}}}',
  '"just a string"',
  'null',
  '\ufeff{}',
);

const CONTENT_TYPES = [
  'application/json',
  'application/json; charset=utf-8',
  'application/json; charset=latin1',
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/xml',
];

/** A path parameter: a real id, a random one, or hostile text, percent-encoded or deliberately malformed. */
function pathValue(resource: string, seeds: Seeds): fc.Arbitrary<string> {
  const real = seeds.ids[resource];
  return fc.oneof(
    { weight: 3, arbitrary: real ? fc.constant(real) : fc.uuid() },
    { weight: 1, arbitrary: fc.uuid() },
    { weight: 3, arbitrary: hostileString.map((value) => encodeURIComponent(safeForUri(value))) },
    { weight: 1, arbitrary: fc.constantFrom('%ZZ', '%', '%E0%A4%A', '%00', '..', '%2e%2e', '%ed%a0%80') },
  );
}

/** encodeURIComponent throws on a lone surrogate; such a value travels as its raw UTF-8 bytes instead. */
const safeForUri = (value: string): string => (value.isWellFormed() ? value : value.toWellFormed());

export interface GeneratedRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string | Uint8Array;
  /** For the report of a failing case. */
  description: string;
}

/** The resource a path template is about: `/api/v1/licenses/{id}/usage` → `license`. */
export function resourceOf(path: string): string {
  const segment = path.replace(/^\/(api\/)?v1\//, '').split('/')[0] ?? '';
  return segment.replace(/-/g, '_').replace(/ies$/, 'y').replace(/s$/, '');
}

export function requestFor(operation: Operation, seeds: Seeds): fc.Arbitrary<GeneratedRequest> {
  const resource = resourceOf(operation.path);
  const pathParams = operation.parameters.filter((p) => p.in === 'path');
  const queryParams = operation.parameters.filter((p) => p.in === 'query');
  const sendsBody = ['POST', 'PUT', 'PATCH'].includes(operation.method);

  const path = fc
    .tuple(...pathParams.map(() => pathValue(resource, seeds)))
    .map((values) =>
      pathParams.reduce((p, param, i) => p.replace(`{${param.name}}`, values[i]!), operation.path),
    );

  const query = fc
    .array(
      fc.tuple(
        fc.oneof(
          {
            weight: 3,
            arbitrary:
              queryParams.length > 0
                ? fc.constantFrom(...queryParams.map((p) => p.name))
                : fc.constant('page'),
          },
          {
            weight: 1,
            arbitrary: fc.constantFrom('page', 'per_page', '__proto__', 'constructor', 'x[y]', 'a.b'),
          },
        ),
        fc.oneof(
          fc.constantFrom('1', '0', '-1', '101', '1e3', '9007199254740993', 'NaN', 'true', '', 'null'),
          hostileString.map((value) => encodeURIComponent(safeForUri(value))),
          fc.constantFrom('%ZZ', '%00', '%ed%a0%80'),
        ),
      ),
      { maxLength: 4 },
    )
    .map((pairs) =>
      pairs.length ? '?' + pairs.map(([k, v]) => `${encodeURIComponent(k)}=${v}`).join('&') : '',
    );

  const body: fc.Arbitrary<string | Uint8Array | undefined> = sendsBody
    ? fc.oneof(
        { weight: 6, arbitrary: bodyFor(operation, seeds).map((value) => JSON.stringify(value)) },
        { weight: 2, arbitrary: rawBody },
        { weight: 1, arbitrary: fc.constant(undefined) },
      )
    : operation.method === 'GET'
      ? fc.constant(undefined) // fetch sends no body with a GET
      : fc.oneof({ weight: 5, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: rawBody });

  const headers = fc.record(
    {
      'content-type': fc.oneof(
        { weight: 6, arbitrary: fc.constant('application/json') },
        fc.constantFrom(...CONTENT_TYPES),
      ),
      'x-request-id': fc.oneof(fc.uuid(), fc.string({ maxLength: 200 }), fc.constant('a'.repeat(129))),
      accept: fc.constantFrom('application/json', '*/*', 'text/html', 'application/problem+json'),
    },
    { requiredKeys: ['content-type'] },
  );

  return fc.tuple(path, query, body, headers).map(([p, q, b, h]) => ({
    method: operation.method,
    path: p + q,
    headers: h,
    body: b,
    description: `${operation.method} ${p + q} ${typeof b === 'string' ? b.slice(0, 300) : b ? `<${b.length} bytes>` : ''}`,
  }));
}
