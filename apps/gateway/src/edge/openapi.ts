import { INestApplication } from '@nestjs/common';
import { DocumentBuilder, OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import { API_KEY_SCHEME } from '../http/api-problems';
import { REQUEST_EXAMPLE_EXTENSION } from '../http/operation';
import { ALLOWED_SCOPES_EXTENSION } from '../http/route-access';

/**
 * The OpenAPI 3.1 document, generated from the controllers' decorators and the same DTO classes that
 * validate every request, then put in its published shape by the small transforms below (each one
 * what @nestjs/swagger 11 cannot express itself): one operation per route rather than one per
 * prefix, 3.1 types for nullable fields, problem+json errors, the scopes of each operation.
 */

/** Every API route is served under each of these prefixes; the document lists it once. */
export const API_PREFIXES = ['api/v1', 'v1'] as const;

const DESCRIPTION = `Signed software licenses for the products of many organizations: key pairs, products, licenses (JWS files that an application verifies offline with the product's public key), activations (machine seats with heartbeats), revocation checks, usage sync and analytics, webhooks and an audit log.

**Base URL.** Every operation is served under \`/api/v1\` and, identically, under \`/v1\` (the \`prefix\` server variable): the same handlers, the same data.

**Authentication.** Send an API key or a token as \`Authorization: Bearer …\`. An API key (\`lk_…\`) belongs to one organization and holds scopes: \`admin\` (everything), \`read\` (every read, plus verify and check-revocation) or \`client\` (verify, validate, check-revocation, sync, activations, usage counts and a product's public key). A license token (\`lt_…\`, scope \`license\`) acts on one license only, and is what a shipped application should hold; a machine token (\`mt_…\`, scope \`machine\`), answered by an activation made with a license token, acts on that activation only. Each operation lists the scopes it accepts (its security requirements, and \`x-allowed-scopes\`). A request with a bad credential is a \`401\` whatever else is wrong with it.

**Errors** are RFC 9457 problem details (\`application/problem+json\`) with a stable \`code\`; each operation lists the codes it can answer. A resource of another organization is always a \`404\`.

**Conventions.** JSON in and out with \`snake_case\` fields; unknown fields are a \`400\`. Timestamps are ISO 8601 UTC with milliseconds. Lists take \`page\` (from 1) and \`per_page\` (1 to 100), are ordered newest first and answer \`{<items>, total}\`. Creates accept an \`Idempotency-Key\` header. Every authenticated answer carries \`RateLimit\` and \`RateLimit-Policy\` headers, and every answer an \`x-request-id\`.`;

/** One tag per resource, in the order a reader meets them. */
const TAGS: [name: string, description: string][] = [
  ['key-pairs', 'Signing key pairs. The private key never leaves the license service.'],
  ['products', 'Products, each signed with a key pair, and their public keys.'],
  ['licenses', 'Licenses: signed JWS files, their changes, revocation, offline and online verification.'],
  ['entitlements', 'The catalog of entitlement codes, and the entitlements each license holds.'],
  ['activations', 'Machine seats of a license, kept alive by heartbeats.'],
  ['revocation', 'What shipped applications call: revocation checks of many serials, and usage sync.'],
  ['analytics', 'Usage counted from the sync reports.'],
  ['webhooks', 'Endpoints that receive every event, signed, and their delivery log.'],
  ['api-keys', "The organization's API keys and their scopes."],
  ['audit-events', 'Who changed what, with which key.'],
  ['Health', 'Probes for the orchestrator, outside the API prefix and without a key.'],
];

/**
 * Operations the API's controllers do not declare: the probes every process serves
 * (libs/shared/messaging). Documented here unless their own decorators already do.
 */
const LIVENESS = 'Answers `{"status": "ok"}` while the process runs.';
const READINESS =
  'Answers `{"status": "ok", "checks": {…}}` while the gateway can serve requests (NATS and ' +
  'PostgreSQL reachable, Redis reached at least once), and `503 Service Unavailable` otherwise, ' +
  'or once it is shutting down.';
const PROBES: Record<string, OperationFields> = {
  '/health/live': { operationId: 'getLiveness', summary: 'Liveness probe', description: LIVENESS },
  '/health/ready': { operationId: 'getReadiness', summary: 'Readiness probe', description: READINESS },
  '/healthz': {
    operationId: 'getLivenessAtOldPath',
    summary: 'Liveness probe (old path)',
    description: `${LIVENESS} The same as \`/health/live\`, kept for existing probe settings.`,
    deprecated: true,
  },
  '/readyz': {
    operationId: 'getReadinessAtOldPath',
    summary: 'Readiness probe (old path)',
    description: `${READINESS} The same as \`/health/ready\`, kept for existing probe settings.`,
    deprecated: true,
  },
};

type Json = Record<string, unknown>;
interface OperationFields {
  operationId?: string;
  summary?: string;
  description?: string;
  deprecated?: boolean;
}
interface OperationObject extends OperationFields, Json {
  security?: Record<string, string[]>[];
  requestBody?: { content?: Record<string, Json> };
  responses?: Record<string, { description?: string; content?: Record<string, Json> }>;
}

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

function buildOpenApiDocument(app: INestApplication): OpenAPIObject {
  const builder = new DocumentBuilder()
    .setTitle('Licensing API')
    .setDescription(DESCRIPTION)
    .setVersion('1')
    .addBearerAuth(
      {
        type: 'http',
        scheme: 'bearer',
        bearerFormat: 'lk_<43 base64url characters>',
        description: 'An API key of the organization (`lk_…`), with the scopes the operation lists.',
      },
      API_KEY_SCHEME,
    );
  for (const [name, description] of TAGS) builder.addTag(name, description);
  const generated = SwaggerModule.createDocument(app, builder.build());
  return publishedDocument(generated);
}

/** `/docs` (Swagger UI), `/openapi.json` and `/openapi.yaml`, built once, on the first request. */
export function serveOpenApi(app: INestApplication): void {
  SwaggerModule.setup('docs', app, () => buildOpenApiDocument(app), {
    jsonDocumentUrl: 'openapi.json',
    yamlDocumentUrl: 'openapi.yaml',
  });
}

/** The generated document in its published shape. */
function publishedDocument(generated: OpenAPIObject): OpenAPIObject {
  const document = structuredClone(generated) as unknown as Json;
  listEachRouteOnce(document);
  for (const [path, operation] of operationsOf(document)) {
    documentProbe(path, operation);
    moveRequestExample(operation);
    describeQueryExamples(operation);
    documentPayloadLimit(operation);
    declareProblemJson(operation);
    declareScopes(operation);
    appendCallersAndErrors(operation);
  }
  toOpenApi31(document);
  return document as unknown as OpenAPIObject;
}

function operationsOf(document: Json): [path: string, operation: OperationObject][] {
  const paths = document.paths as Record<string, Json>;
  return Object.entries(paths).flatMap(([path, item]) =>
    METHODS.filter((method) => method in item).map((method): [string, OperationObject] => [
      path,
      item[method] as OperationObject,
    ]),
  );
}

/**
 * `/api/v1/licenses` and `/v1/licenses` are one route: the document lists it once, as `/licenses`,
 * under a server whose `prefix` variable names both. Paths outside the prefixes (the probes) keep a
 * server of their own at the root. Fails when a route is served under one prefix only, since the
 * document would then promise what the router does not do.
 */
function listEachRouteOnce(document: Json): void {
  const paths = document.paths as Record<string, Json>;
  const [main, ...aliases] = API_PREFIXES.map((prefix) => `/${prefix}/`);
  const published: Record<string, Json> = {};
  for (const [path, item] of Object.entries(paths)) {
    if (aliases.some((alias) => path.startsWith(alias))) continue;
    if (path.startsWith(main!)) {
      const route = path.slice(main!.length - 1);
      for (const alias of aliases) {
        const twin = paths[`${alias}${route.slice(1)}`];
        const methods = (item: Json | undefined) => METHODS.filter((method) => item && method in item).join();
        if (methods(twin) !== methods(item)) {
          throw new Error(`${path} is not served under ${alias} with the same methods`);
        }
      }
      published[route] = item;
    } else {
      published[path] = { ...item, servers: [{ url: '/', description: 'The root, outside the API prefix' }] };
    }
  }
  document.paths = published;
  document.servers = [
    {
      url: '/{prefix}',
      description: 'This server. Every operation is served under both prefixes.',
      variables: {
        prefix: {
          default: API_PREFIXES[0],
          enum: [...API_PREFIXES],
          description: 'Both prefixes serve every route with the same handlers and data',
        },
      },
    },
  ];
}

function documentProbe(path: string, operation: OperationObject): void {
  const probe = PROBES[path];
  if (!probe) return;
  for (const field of ['operationId', 'summary', 'description'] as const) {
    if (!operation[field] || (field === 'operationId' && /Controller_/.test(operation[field] ?? ''))) {
      operation[field] = probe[field];
    }
  }
  if (probe.deprecated) operation.deprecated = true;
  operation.security ??= [];
  for (const response of Object.values(operation.responses ?? {}))
    response.description ||= 'The probe passed';
}

/** The example given to `@Operation()`, as the request body's example. */
function moveRequestExample(operation: OperationObject): void {
  const example = operation[REQUEST_EXAMPLE_EXTENSION];
  delete operation[REQUEST_EXAMPLE_EXTENSION];
  const json = operation.requestBody?.content?.['application/json'];
  if (example !== undefined && json) json.example = example;
}

/**
 * A query parameter's example moves into its description. Swagger UI fills "Try it out" with
 * examples, and a list filtered by an example serial answers an empty list.
 */
function describeQueryExamples(operation: OperationObject): void {
  const parameters = (operation.parameters ?? []) as {
    in?: string;
    description?: string;
    example?: unknown;
    schema?: Json;
  }[];
  for (const parameter of parameters) {
    if (parameter.in !== 'query') continue;
    const example = parameter.example ?? parameter.schema?.example;
    delete parameter.example;
    if (parameter.schema) delete parameter.schema.example;
    if (example === undefined) continue;
    const text = `Example: \`${String(example)}\`.`;
    parameter.description = parameter.description
      ? `${parameter.description.replace(/\.?$/, '.')} ${text}`
      : text;
  }
}

/** Any body over 1 MiB is refused before it is read, on every route that takes one. */
function documentPayloadLimit(operation: OperationObject): void {
  const responses = operation.responses;
  if (!operation.requestBody || !responses?.['400'] || responses['413']) return;
  const problem = Object.values(responses['400'].content ?? {})[0]?.schema;
  responses['413'] = {
    description: '`payload_too_large`: the body is larger than 1 MiB',
    content: {
      'application/json': {
        schema: problem,
        example: {
          type: 'about:blank',
          title: 'Payload Too Large',
          status: 413,
          code: 'payload_too_large',
          detail: 'The request body is larger than 1 MiB',
        },
      },
    },
  };
}

/**
 * Errors are sent as `application/problem+json`, which @nestjs/swagger cannot declare with a type
 * (it gives them the route's media type: `application/json`, or a download's octet-stream).
 */
function declareProblemJson(operation: OperationObject): void {
  for (const [status, response] of Object.entries(operation.responses ?? {})) {
    const [media] = Object.values(response.content ?? {});
    if (Number(status) < 400 || !media) continue;
    response.content = { 'application/problem+json': media };
  }
}

/**
 * The scopes an operation accepts, as alternative security requirements (any one of them is
 * enough): `admin` always, plus those of `@AllowScopes`. An operation with no security
 * requirement from `@ApiProblems` is public.
 */
function declareScopes(operation: OperationObject): void {
  if (!operation.security?.length) {
    operation.security = [];
    delete operation[ALLOWED_SCOPES_EXTENSION];
    return;
  }
  const scopes = (operation[ALLOWED_SCOPES_EXTENSION] as string[] | undefined) ?? ['admin'];
  operation[ALLOWED_SCOPES_EXTENSION] = scopes;
  operation.security = scopes.map((scope) => ({ [API_KEY_SCHEME]: [scope] }));
}

/** Who may call the operation and what it can fail with, at the end of its description. */
function appendCallersAndErrors(operation: OperationObject): void {
  const scopes = operation[ALLOWED_SCOPES_EXTENSION] as string[] | undefined;
  const callers = scopes
    ? `**Who may call it:** an API key with scope ${scopes.map((scope) => `\`${scope}\``).join(' or ')}.`
    : '**Who may call it:** anyone; no API key needed.';
  const errors = Object.entries(operation.responses ?? {})
    .filter(([status]) => Number(status) >= 400)
    .flatMap(([status, response]) => {
      const media = response.content?.['application/problem+json'];
      const examples = Object.values((media?.examples as Record<string, { value: Json }>) ?? {});
      const codes = examples.length
        ? examples.map((example) => String(example.value.code))
        : [String((media?.example as Json | undefined)?.code ?? '')].filter(Boolean);
      return [...new Set(codes)].map((code) => `\`${status} ${code}\``);
    });
  const answers = errors.length ? `\n\n**Errors:** ${errors.join(', ')}.` : '';
  operation.description = `${operation.description ?? ''}\n\n${callers}${answers}`.trim();
}

/**
 * OpenAPI 3.1: JSON Schema's own `null` type instead of 3.0's `nullable`. A nullable reference
 * becomes `oneOf: [ref, null]`; `nullable` on a schema without a type (any value) goes away.
 */
function toOpenApi31(document: Json): void {
  document.openapi = '3.1.0';
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(visit);
    if (typeof node !== 'object' || node === null) return;
    const schema = node as Json;
    for (const value of Object.values(schema)) visit(value);
    if (typeof schema.nullable !== 'boolean') return;
    const nullable = schema.nullable;
    delete schema.nullable;
    if (!nullable) return;
    const allOf = schema.allOf as Json[] | undefined;
    if (allOf?.length === 1 && allOf[0]!.$ref) {
      delete schema.allOf;
      delete schema.type;
      schema.oneOf = [allOf[0], { type: 'null' }];
    } else if (typeof schema.type === 'string') {
      schema.type = [schema.type, 'null'];
    }
  };
  visit(document.components);
  visit(document.paths);
}
