/**
 * Static checks of the deployment files (Dockerfile, .dockerignore, docker-compose.yml, k8s/)
 * against the code they deploy: the mistakes that would otherwise only show at `docker build`,
 * `kubectl apply` or when a pod refuses to start (an unknown or missing variable, a probe on the
 * wrong port, an entry point that does not exist, a manifest kustomize does not apply).
 *
 *   npx jest -c tools/jest.config.js
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parse, parseAllDocuments } from 'yaml';

const root = path.join(__dirname, '..');
const read = (file: string): string => readFileSync(path.join(root, file), 'utf8');

/** Announced services not merged yet: tolerated without an entry point or a config schema. */
const PENDING_SERVICES = new Set<string>();
/** What a pending service may receive beyond any variable some schema declares. */
const PENDING_SERVICE_VARS = new Set(['REDIS_URL']);
/** Read by the image's start command, not by a config schema. */
const IMAGE_VARS = new Set(['SERVICE']);
const IMAGE = 'licensing-platform';
const NAMESPACE = 'licensing';
const PART_OF = 'licensing-platform';
const BASE_IMAGE = 'node:20-bookworm-slim';
/** Enough for a first boot's migrations before liveness may kill the pod. */
const MIN_STARTUP_SECONDS = 120;

// YAML documents are free-form; the checks below look into them field by field.
type Yaml = any;

// ---------------------------------------------------------------------------------------------
// Config schemas: `NAME: env.<kind>(...)` entries and `...group` spreads, as written in
// libs/shared/config/src/*.ts and apps/*/src/config.ts. Value: required in production
// (`production: null`).
// ---------------------------------------------------------------------------------------------
type Schema = Map<string, boolean>;

interface SchemaBlock {
  vars: Schema;
  spreads: string[];
}

function schemaBlocks(file: string): Map<string, SchemaBlock> {
  const source = read(file);
  const blocks = new Map<string, SchemaBlock>();
  // `[export] const group = { ... };`, and `export function group(...) { return { ... }; }` (its
  // body de-indented to the same two spaces).
  const groups = [
    ...[...source.matchAll(/^(?:export )?const (\w+)\s*=\s*\{\n([\s\S]*?)^\};/gm)].map((m) => [m[1], m[2]]),
    ...[
      ...source.matchAll(/^export function (\w+)\([^)]*\)\s*\{\n {2}return \{\n([\s\S]*?)^ {2}\};\n\}/gm),
    ].map((m) => [m[1], m[2].replace(/^ {2}/gm, '')]),
  ];
  for (const match of groups) {
    const body = match[1]
      .split('\n')
      .filter((line) => !/^\s*\/\//.test(line))
      .join('\n');
    const block: SchemaBlock = { vars: new Map(), spreads: [] };
    for (const entry of body.split(/^(?= {2}(?:[A-Z][A-Z0-9_]+: env\.|\.\.\.\w))/m)) {
      const variable = /^ {2}([A-Z][A-Z0-9_]+): env\./.exec(entry);
      const spread = /^ {2}\.\.\.(\w+)/.exec(entry);
      if (variable) block.vars.set(variable[1], /\bproduction:\s*null\b/.test(entry));
      else if (spread) block.spreads.push(spread[1]);
    }
    if (block.vars.size + block.spreads.length > 0) blocks.set(match[0], block);
  }
  return blocks;
}

const libraryFiles = readdirSync(path.join(root, 'libs/shared/config/src'))
  .filter((name) => name.endsWith('.ts') && !/\.(spec|int-spec|e2e-spec)\.ts$/.test(name))
  .map((name) => `libs/shared/config/src/${name}`);
const libraryBlocks = new Map<string, SchemaBlock>();
for (const file of libraryFiles)
  for (const [name, block] of schemaBlocks(file)) libraryBlocks.set(name, block);

function resolveBlock(
  block: SchemaBlock,
  scope: Map<string, SchemaBlock>,
  where: string,
  seen: string[] = [],
): Schema {
  const vars: Schema = new Map();
  for (const spread of block.spreads) {
    const target = scope.get(spread) ?? libraryBlocks.get(spread);
    if (!target || seen.includes(spread)) {
      throw new Error(
        `${where}: cannot resolve the spread ...${spread} (not an env group of libs/shared/config)`,
      );
    }
    for (const [name, required] of resolveBlock(target, scope, where, [...seen, spread]))
      vars.set(name, required);
  }
  for (const [name, required] of block.vars) vars.set(name, required);
  return vars;
}

/** A service's variables, or undefined while it has no apps/<service>/src/config.ts. */
function serviceSchema(service: string): Schema | undefined {
  const file = `apps/${service}/src/config.ts`;
  if (!existsSync(path.join(root, file))) return undefined;
  const blocks = schemaBlocks(file);
  const vars: Schema = new Map();
  for (const block of blocks.values()) {
    for (const [name, required] of resolveBlock(block, blocks, file)) vars.set(name, required);
  }
  if (vars.size === 0)
    throw new Error(`${file}: found no "NAME: env.<kind>(" entries; has the schema's shape changed?`);
  return vars;
}

/** Apps with an entry point that are not platform services: they ship apart (checked below). */
const NOT_PLATFORM = new Set(['relay']);
const appsWithEntryPoint = readdirSync(path.join(root, 'apps')).filter(
  (name) => !NOT_PLATFORM.has(name) && existsSync(path.join(root, 'apps', name, 'src/main.ts')),
);
const schemas = new Map<string, Schema | undefined>();
const schemaOf = (service: string): Schema | undefined => {
  if (!schemas.has(service)) schemas.set(service, serviceSchema(service));
  return schemas.get(service);
};
const declaredAnywhere = new Set<string>();
for (const block of libraryBlocks.values())
  for (const name of resolveBlock(block, libraryBlocks, 'libs')) declaredAnywhere.add(name[0]);
for (const app of readdirSync(path.join(root, 'apps')))
  for (const name of schemaOf(app)?.keys() ?? []) declaredAnywhere.add(name);

/** Which names a service may be given: its schema's, or, before the schema exists, any declared one. */
function unknownVars(service: string, names: Iterable<string>): string[] {
  const schema = schemaOf(service);
  return [...names].filter((name) => {
    if (IMAGE_VARS.has(name)) return false;
    if (schema) return !schema.has(name);
    return !(PENDING_SERVICES.has(service) && (declaredAnywhere.has(name) || PENDING_SERVICE_VARS.has(name)));
  });
}

const requiredInProduction = (service: string): string[] =>
  [...(schemaOf(service) ?? new Map<string, boolean>())]
    .filter(([, required]) => required)
    .map(([name]) => name);

/** The port a service's HTTP server (and so its probes) listens on, and the variable that sets it. */
function listenVariable(service: string): 'PORT' | 'HEALTH_PORT' {
  const schema = schemaOf(service);
  if (schema?.has('HEALTH_PORT')) return 'HEALTH_PORT';
  if (schema?.has('PORT')) return 'PORT';
  return 'HEALTH_PORT';
}

function entryPointProblem(service: string | undefined): string | undefined {
  if (!service) return 'SERVICE is not set';
  if (existsSync(path.join(root, 'apps', service, 'src/main.ts'))) return undefined;
  if (PENDING_SERVICES.has(service)) return undefined;
  return `SERVICE=${service}, but apps/${service}/src/main.ts does not exist`;
}

// ---------------------------------------------------------------------------------------------
// Kubernetes
// ---------------------------------------------------------------------------------------------
interface Resource {
  file: string;
  doc: Yaml;
}

/** Every YAML file under k8s/, relative to it (`base/gateway.yaml`, `overlays/prod/kustomization.yaml`). */
const k8sFiles = (readdirSync(path.join(root, 'k8s'), { recursive: true }) as string[])
  .filter((name) => /\.ya?ml$/.test(name))
  .sort();
const parseErrors: string[] = [];
const resourcesByFile = new Map<string, Resource[]>();
for (const file of k8sFiles) {
  const documents = parseAllDocuments(read(`k8s/${file}`));
  const list: Resource[] = [];
  for (const document of Array.isArray(documents) ? documents : []) {
    for (const error of [...document.errors, ...document.warnings])
      parseErrors.push(`k8s/${file}: ${error.message}`);
    const doc = document.toJS();
    if (doc !== null && doc !== undefined) list.push({ file, doc });
  }
  resourcesByFile.set(file, list);
}
const OVERLAYS = ['dev', 'prod'] as const;
type Overlay = (typeof OVERLAYS)[number];

/** What `kubectl kustomize k8s/overlays/<overlay>` renders: what `kubectl apply -k` would apply. */
function render(overlay: Overlay): { resources: Resource[]; error?: string } {
  try {
    const output = execFileSync('kubectl', ['kustomize', path.join(root, 'k8s/overlays', overlay)], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const resources = parseAllDocuments(output)
      .map((document) => document.toJS() as Yaml)
      .filter((doc) => doc !== null && doc !== undefined)
      .map((doc) => ({ file: `overlays/${overlay}`, doc }));
    return { resources };
  } catch (error) {
    const failure = error as NodeJS.ErrnoException & { stderr?: string };
    return {
      resources: [],
      error:
        failure.code === 'ENOENT'
          ? 'kubectl is not installed: the k8s/ checks render every overlay with `kubectl kustomize`'
          : `kubectl kustomize k8s/overlays/${overlay} failed: ${failure.stderr ?? failure.message}`,
    };
  }
}
const rendered = new Map(OVERLAYS.map((overlay) => [overlay, render(overlay)]));
/** The production overlay, which the detailed checks below read. */
const applied: Resource[] = rendered.get('prod')!.resources;
const ofKind = (kind: string, from: Resource[] = applied): Resource[] =>
  from.filter((r) => r.doc?.kind === kind);
const deployments = ofKind('Deployment');
const configMaps = new Map<string, Record<string, string>>(
  ofKind('ConfigMap').map((r) => [r.doc.metadata.name, r.doc.data ?? {}]),
);
const secretExample: Yaml = resourcesByFile
  .get('base/secret.example.yaml')
  ?.find((r) => r.doc?.kind === 'Secret')?.doc;
const secrets = new Map<string, Record<string, string>>(
  secretExample
    ? [[secretExample.metadata?.name, { ...(secretExample.data ?? {}), ...(secretExample.stringData ?? {}) }]]
    : [],
);

const containerOf = (deployment: Yaml): Yaml => deployment.spec?.template?.spec?.containers?.[0] ?? {};

interface Env {
  /** Name → value (`undefined`: taken from somewhere this test cannot see). */
  values: Map<string, string | undefined>;
  problems: string[];
}

/** What the container's environment will hold: envFrom ConfigMaps/Secrets, then env entries. */
function k8sEnv(container: Yaml): Env {
  const values = new Map<string, string | undefined>();
  const problems: string[] = [];
  const lookup = (kind: 'ConfigMap' | 'Secret', name: string): Record<string, string> | undefined => {
    const found = (kind === 'ConfigMap' ? configMaps : secrets).get(name);
    if (!found)
      problems.push(
        `refers to ${kind} "${name}", which ${kind === 'Secret' ? 'secret.example.yaml does not define' : 'the kustomization does not apply'}`,
      );
    return found;
  };
  for (const source of container.envFrom ?? []) {
    const ref = source.configMapRef ?? source.secretRef;
    const data = lookup(source.configMapRef ? 'ConfigMap' : 'Secret', ref?.name);
    for (const [key, value] of Object.entries(data ?? {}))
      values.set(`${source.prefix ?? ''}${key}`, String(value));
  }
  for (const entry of container.env ?? []) {
    if (typeof entry?.name !== 'string') {
      problems.push('has an env entry without a name');
      continue;
    }
    if (entry.valueFrom) {
      const ref = entry.valueFrom.secretKeyRef ?? entry.valueFrom.configMapKeyRef;
      if (ref) {
        const data = lookup(entry.valueFrom.secretKeyRef ? 'Secret' : 'ConfigMap', ref.name);
        if (data && !(ref.key in data))
          problems.push(`${entry.name}: key "${ref.key}" is not in "${ref.name}"`);
        values.set(entry.name, data?.[ref.key]);
      } else {
        values.set(entry.name, undefined);
      }
    } else {
      values.set(entry.name, entry.value === undefined || entry.value === null ? '' : String(entry.value));
    }
  }
  return { values, problems };
}

function containerPort(container: Yaml, port: number | string | undefined): number | undefined {
  if (typeof port === 'number') return port;
  return (container.ports ?? []).find((p: Yaml) => p.name === port)?.containerPort;
}

const labelsMatch = (
  selector: Record<string, string> | undefined,
  labels: Record<string, string> | undefined,
): boolean =>
  !!selector &&
  Object.keys(selector).length > 0 &&
  Object.entries(selector).every(([k, v]) => labels?.[k] === v);

const podsSelectedBy = (selector: Record<string, string> | undefined): Resource[] =>
  deployments.filter((d) => labelsMatch(selector, d.doc.spec?.template?.metadata?.labels));

const serviceOfDeployment = (deployment: Yaml): string | undefined =>
  k8sEnv(containerOf(deployment)).values.get('SERVICE');

/**
 * Validates one object against the Kubernetes OpenAPI schema of its kind (kubernetes-models, the
 * schemas of Kubernetes 1.32). Those schemas check types, required fields and enums, not unknown
 * fields. The Prometheus Operator's kinds are not in them: a minimal schema of their own below.
 */
function schemaProblem(doc: Yaml): string | undefined {
  const [group, version] = String(doc.apiVersion).includes('/')
    ? String(doc.apiVersion).split('/')
    : ['', doc.apiVersion];
  if (group === 'monitoring.coreos.com') return prometheusOperatorProblem(doc);
  let models: Record<string, new (data: unknown) => { validate(): void }>;
  try {
    models = require(`kubernetes-models/${group ? `${group}/` : ''}${version}`);
  } catch {
    return `no schema for ${doc.apiVersion}`;
  }
  const Model = models[doc.kind];
  if (!Model) return `no schema for ${doc.apiVersion} ${doc.kind}`;
  try {
    new Model(doc).validate();
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
}

function prometheusOperatorProblem(doc: Yaml): string | undefined {
  if (doc.apiVersion !== 'monitoring.coreos.com/v1') return `unknown version ${doc.apiVersion}`;
  if (doc.kind === 'ServiceMonitor') {
    const { selector, endpoints } = doc.spec ?? {};
    if (!selector?.matchLabels) return 'spec.selector.matchLabels is required';
    if (!Array.isArray(endpoints) || endpoints.length === 0) return 'spec.endpoints is empty';
    for (const endpoint of endpoints) {
      if (typeof endpoint.port !== 'string') return 'an endpoint names no port';
      if (endpoint.interval !== undefined && !/^\d+[smh]$/.test(endpoint.interval))
        return `bad interval ${endpoint.interval}`;
    }
    return undefined;
  }
  if (doc.kind === 'PrometheusRule') {
    if (!Array.isArray(doc.spec?.groups) || doc.spec.groups.length === 0) return 'spec.groups is empty';
    for (const group of doc.spec.groups) {
      if (typeof group.name !== 'string' || !Array.isArray(group.rules))
        return 'a group needs a name and rules';
      for (const rule of group.rules) {
        if (typeof rule.alert !== 'string' || typeof rule.expr !== 'string')
          return 'a rule needs alert and expr';
      }
    }
    return undefined;
  }
  return `unknown kind ${doc.kind}`;
}

// ---------------------------------------------------------------------------------------------
// Compose
// ---------------------------------------------------------------------------------------------
const compose: Yaml = parse(read('docker-compose.yml'), { merge: true });
const composeServices: Record<string, Yaml> = compose?.services ?? {};

function composeEnv(service: Yaml): Map<string, string | undefined> {
  const env = service.environment ?? {};
  if (Array.isArray(env)) {
    return new Map(
      env.map((entry: string) => {
        const at = entry.indexOf('=');
        return at < 0 ? [entry, undefined] : [entry.slice(0, at), entry.slice(at + 1)];
      }),
    );
  }
  return new Map(Object.entries(env).map(([k, v]) => [k, v === null || v === undefined ? '' : String(v)]));
}

const appServices = Object.entries(composeServices).filter(
  ([, s]) => typeof s.image === 'string' && (s.image === IMAGE || s.image.startsWith(`${IMAGE}:`)),
);
/** A compose value that can end up empty: `${X}`, `${X-d}` / `${X:-}` with an empty default, `$X`. */
const mayBeEmpty = (value: string | undefined): boolean =>
  value === undefined || value.trim() === '' || /^\$(\w+|\{\w+(:?-)?\})$/.test(value.trim());
/** Compose interpolation replaced by a placeholder, so that a URL can be parsed. */
const uninterpolated = (value: string): string => value.replace(/\$\{[^}]*\}|\$\w+/g, 'x');

function composeHealthPort(service: Yaml): number | undefined {
  const test = service.healthcheck?.test;
  const text = Array.isArray(test) ? test.join(' ') : String(test ?? '');
  const match =
    /https?:\/\/(?:127\.0\.0\.1|localhost|0\.0\.0\.0):(\d+)\/(readyz|healthz|health\/ready|health\/live)/.exec(
      text,
    );
  return match ? Number(match[1]) : undefined;
}

// ---------------------------------------------------------------------------------------------
// Dockerfile
// ---------------------------------------------------------------------------------------------
interface Instruction {
  keyword: string;
  args: string;
}

const dockerfile: Instruction[] = read('Dockerfile')
  .split('\n')
  .filter((line) => !/^\s*#/.test(line))
  .join('\n')
  .replace(/\\\n/g, ' ')
  .split('\n')
  .map((line) => line.trim())
  .filter(Boolean)
  .map((line) => {
    const [keyword, ...rest] = line.split(/\s+/);
    return { keyword: keyword.toUpperCase(), args: rest.join(' ') };
  });

const globalArgs = new Map<string, string>();
for (const instruction of dockerfile) {
  if (instruction.keyword === 'FROM') break;
  if (instruction.keyword === 'ARG') {
    const [name, value] = instruction.args.split('=');
    globalArgs.set(name, value ?? '');
  }
}
const substitute = (text: string, vars: Map<string, string>): string =>
  text.replace(/\$\{(\w+)\}|\$(\w+)/g, (whole, a: string, b: string) => vars.get(a ?? b) ?? whole);

interface Stage {
  from: string;
  name?: string;
  instructions: Instruction[];
}
const stages: Stage[] = [];
for (const instruction of dockerfile) {
  if (instruction.keyword === 'FROM') {
    const [from, as, name] = instruction.args.replace(/--platform=\S+\s+/, '').split(/\s+/);
    stages.push({
      from: substitute(from, globalArgs),
      name: as?.toUpperCase() === 'AS' ? name : undefined,
      instructions: [],
    });
  } else {
    stages.at(-1)?.instructions.push(instruction);
  }
}
const runtime = stages.at(-1) ?? { from: '', instructions: [] };
const stageInstructions = (stage: Stage, keyword: string): string[] =>
  stage.instructions.filter((i) => i.keyword === keyword).map((i) => i.args);
/** `ENV A=1 B=2` and `ENV A 1` forms. */
function stageEnv(stage: Stage): Map<string, string> {
  const env = new Map<string, string>();
  const args = new Map(globalArgs);
  for (const instruction of stage.instructions) {
    if (instruction.keyword === 'ARG') {
      const [name, value] = instruction.args.split('=');
      args.set(name, value ?? args.get(name) ?? '');
    }
    if (instruction.keyword !== 'ENV') continue;
    if (!instruction.args.includes('=')) {
      const [name, ...value] = instruction.args.split(/\s+/);
      env.set(name, substitute(value.join(' '), args));
      continue;
    }
    for (const match of instruction.args.matchAll(/(\w+)=("[^"]*"|\S*)/g)) {
      env.set(match[1], substitute(match[2].replace(/^"|"$/g, ''), new Map([...args, ...env])));
    }
  }
  return env;
}
const dockerignore = read('.dockerignore')
  .split('\n')
  .map((line) => line.trim())
  .filter((line) => line && !line.startsWith('#'));

// =============================================================================================

describe('config schemas (as this test reads them)', () => {
  it('finds the variables of every service and which are required in production', () => {
    expect(libraryBlocks.size).toBeGreaterThan(0);
    for (const app of appsWithEntryPoint) {
      const schema = schemaOf(app);
      if (!schema) throw new Error(`apps/${app} has src/main.ts but no src/config.ts`);
      expect([app, schema.has('NATS_URL')]).toEqual([app, true]);
    }
    expect(schemaOf('gateway')?.get('DATABASE_URL')).toBe(true);
    expect(schemaOf('gateway')?.get('PORT')).toBe(false);
  });
});

describe('Dockerfile', () => {
  it(`builds and runs on ${BASE_IMAGE}`, () => {
    expect(stages.length).toBeGreaterThanOrEqual(2);
    const stageNames = new Set(stages.map((s) => s.name));
    for (const stage of stages) if (!stageNames.has(stage.from)) expect(stage.from).toBe(BASE_IMAGE);
  });

  it('installs from the lockfile, compiles, and drops dev dependencies', () => {
    const build = stages[0];
    const runs = stageInstructions(build, 'RUN').join(' && ');
    expect(runs).toMatch(/\bnpm ci\b/);
    expect(runs).toMatch(/\bnpm run build\b/);
    expect(runs).toMatch(/\bnpm prune --omit=dev\b/);
    const copied = stageInstructions(build, 'COPY').flatMap((args) => args.split(/\s+/).slice(0, -1));
    expect(copied).toEqual(expect.arrayContaining(['package.json', 'package-lock.json']));
    // Every source exists and is not excluded from the build context.
    for (const source of copied.filter((s) => !s.startsWith('--'))) {
      const pattern = new RegExp(`^${source.replace(/\./g, '\\.').replace(/\*/g, '.*')}$`);
      const matches = readdirSync(root).filter((name) => pattern.test(name));
      expect([source, matches.length > 0]).toEqual([source, true]);
      for (const name of matches)
        expect([name, dockerignore.includes(name) || dockerignore.includes(`${name}/`)]).toEqual([
          name,
          false,
        ]);
    }
    // The compiled layout the start command relies on.
    const buildConfig = JSON.parse(read('tsconfig.build.json'));
    expect(buildConfig.compilerOptions).toMatchObject({ outDir: 'dist', rootDir: '.' });
  });

  it('builds the console before dropping dev dependencies, into the dist/ the runtime stage copies', () => {
    const build = stages[0]!;
    const runs = stageInstructions(build, 'RUN').join(' && ');
    // `npm run build` compiles (SWC, a dev dependency) and then builds the console (Vite, one too).
    const buildScript: string = JSON.parse(read('package.json')).scripts.build;
    expect(buildScript).toMatch(/node tools\/compile\.js && node tools\/build-console\.js/);
    expect(runs.indexOf('npm run build')).toBeLessThan(runs.indexOf('npm prune'));
    expect(stageInstructions(build, 'COPY')).toEqual(
      expect.arrayContaining(['apps ./apps', 'tools ./tools']),
    );
    // Its output lands under dist/, where the gateway looks for it beside the package.json.
    expect(read('tools/build-console.js')).toContain("path.join(root, 'dist/apps/console')");
    expect(read('apps/gateway/src/edge/console.ts')).toContain("'dist/apps/console'");
    const copied = stageInstructions(runtime, 'COPY').filter((args) => args.startsWith('--from='));
    expect(copied).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/ \/app\/dist \.\/dist$/),
        expect.stringMatching(/ \/app\/package\.json /),
      ]),
    );
  });

  it('runs as a non-root user with NODE_ENV=production', () => {
    const env = stageEnv(runtime);
    expect(env.get('NODE_ENV')).toBe('production');
    const users = stageInstructions(runtime, 'USER');
    expect(users.length).toBeGreaterThan(0);
    const user = users.at(-1)!.split(':')[0];
    expect(['root', '0', '']).not.toContain(user);
  });

  it('starts $SERVICE with the register-paths pattern, through exec, from a complete runtime stage', () => {
    const cmd = stageInstructions(runtime, 'CMD').at(-1) ?? '';
    const argv: string[] = JSON.parse(cmd); // exec form: no extra shell wrapping the command below
    expect(argv.slice(0, 2)).toEqual(['sh', '-c']);
    expect(argv[2]).toMatch(
      /^exec node -r \.\/tools\/register-paths\.js dist\/apps\/\$\{?SERVICE\}?\/src\/main\.js$/,
    );
    const service = stageEnv(runtime).get('SERVICE');
    expect(entryPointProblem(service)).toBeUndefined();

    const workdir = stageInstructions(runtime, 'WORKDIR').at(-1) ?? '/';
    const copies = stageInstructions(runtime, 'COPY')
      .filter((args) => args.startsWith('--from='))
      .map((args) => {
        const parts = args.split(/\s+/).filter((p) => !p.startsWith('--'));
        return path.posix.resolve(workdir, parts.at(-1)!);
      });
    // register-paths.js loads ../tsconfig.base.json and maps aliases to ../dist.
    for (const needed of [
      'node_modules',
      'dist',
      'tools/register-paths.js',
      'tsconfig.base.json',
      'package.json',
    ]) {
      expect(copies).toContain(path.posix.join(workdir, needed));
    }
    expect(read('tools/register-paths.js')).toContain("require('../tsconfig.base.json')");
    expect(stageInstructions(runtime, 'EXPOSE').join(' ')).toMatch(/\b3000\b/);
  });

  it('.dockerignore keeps local builds and history out of the context', () => {
    for (const entry of ['node_modules', 'dist', '.git', 'tmp', 'coverage', '.nx'])
      expect(dockerignore).toContain(entry);
  });
});

describe('docker-compose.yml', () => {
  const env = (name: string): Map<string, string | undefined> => composeEnv(composeServices[name] ?? {});

  it('runs PostgreSQL 15 with a password, Redis 7 and NATS 2 with JetStream on a volume, all with healthchecks', () => {
    expect(String(composeServices.postgres?.image)).toMatch(/^postgres:15\b/);
    expect(String(composeServices.redis?.image)).toMatch(/^redis:7\b/);
    expect(String(composeServices.nats?.image)).toMatch(/^nats:2\b/);
    for (const name of ['postgres', 'redis', 'nats'])
      expect([name, !!composeServices[name]?.healthcheck?.test]).toEqual([name, true]);

    expect(String(env('postgres').get('POSTGRES_HOST_AUTH_METHOD') ?? '')).not.toMatch(/trust/i);
    expect(mayBeEmpty(env('postgres').get('POSTGRES_PASSWORD'))).toBe(false);

    const natsArgs = [composeServices.nats.entrypoint, composeServices.nats.command]
      .flat()
      .filter(Boolean)
      .join(' ');
    expect(natsArgs).toMatch(/(^|\s)(-js|--jetstream)(\s|$)/);
    const storeDir = /(?:-sd|--store_dir)\s+(\S+)/.exec(natsArgs)?.[1];
    expect(storeDir).toBeDefined();
    const mounts: string[] = (composeServices.nats.volumes ?? []).map((v: Yaml) =>
      typeof v === 'string' ? v.split(':')[1] : v.target,
    );
    expect(mounts).toContain(storeDir);
  });

  it('runs every service with an entry point, from the one image, once each', () => {
    const names = appServices.map(([, s]) => composeEnv(s).get('SERVICE'));
    expect(new Set(names).size).toBe(names.length);
    for (const app of appsWithEntryPoint) expect(names).toContain(app);
    for (const pending of PENDING_SERVICES) expect(names).toContain(pending);
    for (const [key, service] of appServices) {
      expect([key, entryPointProblem(composeEnv(service).get('SERVICE'))]).toEqual([key, undefined]);
      expect([key, composeEnv(service).get('NODE_ENV')]).toEqual([key, 'production']);
    }
  });

  it('connects each service to the compose services its URLs name, and waits until they are healthy', () => {
    const problems: string[] = [];
    for (const [key, service] of appServices) {
      const dependsOn = service.depends_on ?? {};
      const hosts = new Set(['postgres', 'nats']);
      for (const [name, value] of composeEnv(service)) {
        if (!value || !/^[a-z][a-z0-9+.-]*:\/\//i.test(value)) continue;
        for (const server of uninterpolated(value).split(',')) {
          const host = new URL(server.trim()).hostname;
          if (!composeServices[host])
            problems.push(`${key}: ${name} names host "${host}", not a compose service`);
          else hosts.add(host);
        }
      }
      for (const host of hosts) {
        if (Array.isArray(dependsOn) || dependsOn[host]?.condition !== 'service_healthy') {
          problems.push(`${key}: does not wait for ${host} (depends_on.${host}.condition: service_healthy)`);
        } else if (!composeServices[host]?.healthcheck?.test) {
          problems.push(`${key}: waits for ${host} to be healthy, but ${host} has no healthcheck`);
        }
      }
    }
    expect(problems).toEqual([]);
  });

  it('points DATABASE_URL at the postgres service with its user, password and database', () => {
    const postgres = env('postgres');
    for (const [key, service] of appServices) {
      // A service whose schema has no DATABASE_URL (revocation-service) must not get one: see above.
      const name = composeEnv(service).get('SERVICE') ?? key;
      if (schemaOf(name) && !schemaOf(name)!.has('DATABASE_URL')) continue;
      const url = composeEnv(service).get('DATABASE_URL') ?? '';
      const match = /^postgres(?:ql)?:\/\/([^:@/]+)(?::(.*))?@([^:/]+)(?::\d+)?\/([^?]+)/.exec(url);
      expect([key, !!match]).toEqual([key, true]);
      const [, user, password, host, database] = match!;
      expect([key, host]).toEqual([key, 'postgres']);
      expect([key, user]).toEqual([key, postgres.get('POSTGRES_USER') ?? 'postgres']);
      expect([key, password]).toEqual([key, postgres.get('POSTGRES_PASSWORD')]);
      expect([key, database]).toEqual([key, postgres.get('POSTGRES_DB') ?? user]);
    }
  });

  it('sets only variables the service declares, and every one it requires in production', () => {
    const problems: string[] = [];
    for (const [key, service] of appServices) {
      const values = composeEnv(service);
      const name = values.get('SERVICE') ?? key;
      for (const unknown of unknownVars(name, values.keys()))
        problems.push(`${key}: ${unknown} is not in ${name}'s config schema`);
      for (const required of requiredInProduction(name)) {
        if (mayBeEmpty(values.get(required))) {
          problems.push(
            `${key}: ${required} is required in production; set it, e.g. \${${required}:?message}`,
          );
        }
      }
    }
    expect(problems).toEqual([]);
  });

  it('health-checks each service on the port it listens on, and publishes the gateway', () => {
    const problems: string[] = [];
    for (const [key, service] of appServices) {
      const values = composeEnv(service);
      const name = values.get('SERVICE') ?? key;
      const variable = listenVariable(name);
      const port = Number(values.get(variable));
      if (!Number.isInteger(port) || port <= 0) problems.push(`${key}: ${variable} must be set explicitly`);
      else if (composeHealthPort(service) !== port)
        problems.push(`${key}: healthcheck is not on ${variable}=${port}`);
    }
    const gateway = appServices.find(([, s]) => composeEnv(s).get('SERVICE') === 'gateway')?.[1];
    const published = (gateway?.ports ?? []).map((p: Yaml) =>
      typeof p === 'string' ? Number(p.split(':').at(-1)) : p.target,
    );
    expect(published).toContain(Number(composeEnv(gateway ?? {}).get('PORT')));
    expect(problems).toEqual([]);
  });
});

describe('k8s/', () => {
  it('every YAML file parses', () => {
    expect(k8sFiles.length).toBeGreaterThan(0);
    expect(parseErrors).toEqual([]);
    for (const [file, resources] of resourcesByFile) {
      for (const { doc } of resources) {
        expect([file, typeof doc.kind, typeof doc.apiVersion]).toEqual([file, 'string', 'string']);
        if (!file.endsWith('kustomization.yaml'))
          expect([file, typeof doc.metadata?.name]).toEqual([file, 'string']);
      }
    }
  });

  it.each(OVERLAYS)('kubectl kustomize renders the %s overlay', (overlay) => {
    const { resources, error } = rendered.get(overlay)!;
    expect(error).toBeUndefined();
    expect(resources.length).toBeGreaterThan(10);
  });

  it('the base lists every manifest but the example secret; each overlay applies it in namespace licensing, no Secret', () => {
    const base: Yaml = resourcesByFile.get('base/kustomization.yaml')?.[0]?.doc ?? {};
    expect(base.kind).toBe('Kustomization');
    expect(base.namespace).toBe(NAMESPACE);
    const expected = k8sFiles
      .filter(
        (f) =>
          f.startsWith('base/') && !f.endsWith('kustomization.yaml') && !f.endsWith('secret.example.yaml'),
      )
      .map((f) => f.slice('base/'.length));
    expect([...(base.resources as string[])].sort()).toEqual(expected);
    expect(secretExample?.metadata?.name).toBeDefined();
    for (const overlay of OVERLAYS) {
      const { resources } = rendered.get(overlay)!;
      expect([overlay, ofKind('Secret', resources)]).toEqual([overlay, []]);
      for (const { doc } of resources) {
        const namespace = doc.kind === 'Namespace' ? doc.metadata.name : doc.metadata?.namespace;
        expect([overlay, doc.kind, doc.metadata?.name, namespace]).toEqual([
          overlay,
          doc.kind,
          doc.metadata?.name,
          NAMESPACE,
        ]);
      }
    }
  });

  it.each(OVERLAYS)(
    'every object the %s overlay renders is valid against the Kubernetes schemas',
    (overlay) => {
      const problems: string[] = [];
      for (const { doc } of rendered.get(overlay)!.resources) {
        const problem = schemaProblem(doc);
        if (problem) problems.push(`${doc.kind}/${doc.metadata?.name}: ${problem}`);
      }
      expect(problems).toEqual([]);
    },
  );

  it('the dev overlay runs one replica of everything; prod at least two, three gateways, streams at 3 replicas on 3 NATS nodes', () => {
    const dev = rendered.get('dev')!.resources;
    for (const { doc } of ofKind('Deployment', dev))
      expect([doc.metadata.name, doc.spec.replicas]).toEqual([doc.metadata.name, 1]);
    for (const { doc } of deployments)
      expect([doc.metadata.name, doc.spec.replicas >= 2]).toEqual([doc.metadata.name, true]);
    expect(deployments.find((d) => d.doc.metadata.name === 'gateway')?.doc.spec.replicas).toBe(3);
    const config = configMaps.get('licensing-config')!;
    expect(config.JETSTREAM_REPLICAS).toBe('3');
    expect(config.NATS_URL.split(',')).toHaveLength(3);
    expect(String(containerOf(deployments[0]!.doc).image)).toMatch(
      /^registry\.example\.com\/licensing-platform:\d/,
    );
  });

  it('labels every resource name / part-of / component', () => {
    for (const { file, doc } of [
      ...applied,
      ...(secretExample ? [{ file: 'secret.example.yaml', doc: secretExample }] : []),
    ]) {
      const labels = doc.metadata?.labels ?? {};
      expect([
        file,
        doc.kind,
        labels['app.kubernetes.io/part-of'],
        !!labels['app.kubernetes.io/name'],
        !!labels['app.kubernetes.io/component'],
      ]).toEqual([file, doc.kind, PART_OF, true, true]);
    }
  });

  it('has one Deployment per service with an entry point, SERVICE naming it', () => {
    const names = deployments.map((d) => serviceOfDeployment(d.doc));
    expect(new Set(names).size).toBe(names.length);
    for (const app of appsWithEntryPoint) expect(names).toContain(app);
    for (const pending of PENDING_SERVICES) expect(names).toContain(pending);
    for (const { doc } of deployments) {
      expect([doc.metadata.name, entryPointProblem(serviceOfDeployment(doc))]).toEqual([
        doc.metadata.name,
        undefined,
      ]);
    }
  });

  it('Deployments: selector matches the pod labels, image, replicas, grace period, resources, security context', () => {
    for (const { doc } of deployments) {
      const name = doc.metadata.name;
      const pod = doc.spec.template;
      const container = containerOf(doc);
      expect([name, labelsMatch(doc.spec.selector?.matchLabels, pod.metadata?.labels)]).toEqual([name, true]);
      expect([name, String(container.image).split(':')[0]!.split('/').at(-1)]).toEqual([name, IMAGE]);
      expect([name, doc.spec.replicas >= 2]).toEqual([name, true]);
      expect([name, pod.spec.terminationGracePeriodSeconds]).toEqual([name, 30]);
      for (const bound of ['requests', 'limits']) {
        expect([
          name,
          bound,
          !!container.resources?.[bound]?.cpu,
          !!container.resources?.[bound]?.memory,
        ]).toEqual([name, bound, true, true]);
      }
      const security = container.securityContext ?? {};
      expect([
        name,
        security.runAsNonRoot ?? pod.spec.securityContext?.runAsNonRoot,
        security.readOnlyRootFilesystem,
        security.allowPrivilegeEscalation,
      ]).toEqual([name, true, true, false]);
      expect([name, security.capabilities?.drop]).toEqual([name, ['ALL']]);
      // The image's user is numeric or set here, or the kubelet cannot verify runAsNonRoot.
      const runAsUser = security.runAsUser ?? pod.spec.securityContext?.runAsUser;
      const imageUser = stageInstructions(runtime, 'USER').at(-1)?.split(':')[0] ?? '';
      expect([
        name,
        (typeof runAsUser === 'number' && runAsUser > 0) || /^[1-9]\d*$/.test(imageUser),
      ]).toEqual([name, true]);
    }
  });

  it('Deployments: startup, readiness (/health/ready) and liveness (/health/live) probes on the port the service listens on', () => {
    const problems: string[] = [];
    for (const { doc } of deployments) {
      const container = containerOf(doc);
      const { values } = k8sEnv(container);
      const service = values.get('SERVICE') ?? doc.metadata.name;
      const variable = listenVariable(service);
      const port = Number(values.get(variable));
      if (!Number.isInteger(port) || port <= 0) {
        problems.push(`${service}: ${variable} must be set explicitly`);
        continue;
      }
      const probes: Array<[string, string]> = [
        ['readinessProbe', '/health/ready'],
        ['livenessProbe', '/health/live'],
        ['startupProbe', '/health/live'],
      ];
      for (const [probe, probePath] of probes) {
        const get = container[probe]?.httpGet;
        if (!get) problems.push(`${service}: no ${probe}`);
        else if (get.path !== probePath)
          problems.push(`${service}: ${probe} is on ${get.path}, not ${probePath}`);
        else if (containerPort(container, get.port) !== port)
          problems.push(`${service}: ${probe} port ${get.port} is not ${variable}=${port}`);
      }
      const startup = container.startupProbe ?? {};
      const budget =
        (startup.failureThreshold ?? 3) * (startup.periodSeconds ?? 10) + (startup.initialDelaySeconds ?? 0);
      if (budget < MIN_STARTUP_SECONDS)
        problems.push(`${service}: startupProbe allows only ${budget}s for migrations`);
      if (!(container.ports ?? []).some((p: Yaml) => p.containerPort === port))
        problems.push(`${service}: containerPort ${port} not declared`);
      // Compose and Kubernetes agree on the port.
      const composed = appServices.find(([, s]) => composeEnv(s).get('SERVICE') === service)?.[1];
      if (composed && composeEnv(composed).get(variable) !== values.get(variable)) {
        problems.push(`${service}: ${variable} differs between docker-compose.yml and k8s/`);
      }
    }
    expect(problems).toEqual([]);
  });

  it('Deployments: every variable is declared by the service, every reference resolves, production-required ones are set', () => {
    const problems: string[] = [];
    for (const { doc } of deployments) {
      const { values, problems: envProblems } = k8sEnv(containerOf(doc));
      const service = values.get('SERVICE') ?? doc.metadata.name;
      problems.push(...envProblems.map((p) => `${service}: ${p}`));
      const own = (containerOf(doc).env ?? []).map((e: Yaml) => e.name as string);
      for (const unknown of unknownVars(service, own))
        problems.push(`${service}: ${unknown} is not in its config schema`);
      for (const required of requiredInProduction(service)) {
        if (!values.has(required) || values.get(required) === '')
          problems.push(`${service}: ${required} is required in production`);
      }
      if (values.get('NODE_ENV') === undefined && stageEnv(runtime).get('NODE_ENV') !== 'production') {
        problems.push(`${service}: NODE_ENV is not production`);
      }
    }
    expect(problems).toEqual([]);
  });

  it('ConfigMap and example Secret keys are variables some config schema declares', () => {
    const problems: string[] = [];
    const known = (name: string): boolean => declaredAnywhere.has(name) || PENDING_SERVICE_VARS.has(name);
    for (const [map, data] of configMaps)
      for (const key of Object.keys(data)) if (!known(key)) problems.push(`ConfigMap ${map}: ${key}`);
    for (const [secret, data] of secrets)
      for (const key of Object.keys(data)) if (!known(key)) problems.push(`Secret ${secret}: ${key}`);
    expect(configMaps.size).toBeGreaterThan(0);
    expect(problems).toEqual([]);
  });

  it('Services select a Deployment and target a port its container declares; the gateway is port 80', () => {
    for (const { doc } of ofKind('Service')) {
      const name = doc.metadata.name;
      const [deployment] = podsSelectedBy(doc.spec?.selector);
      expect([name, !!deployment]).toEqual([name, true]);
      for (const port of doc.spec.ports ?? []) {
        expect([
          name,
          port.port,
          typeof containerPort(containerOf(deployment.doc), port.targetPort ?? port.port),
        ]).toEqual([name, port.port, 'number']);
      }
    }
    const gateway = ofKind('Service').find(
      (s) =>
        podsSelectedBy(s.doc.spec?.selector)[0] &&
        serviceOfDeployment(podsSelectedBy(s.doc.spec.selector)[0].doc) === 'gateway',
    );
    const http = gateway?.doc.spec.ports.find((p: Yaml) => p.port === 80);
    expect(
      containerPort(containerOf(podsSelectedBy(gateway?.doc.spec.selector)[0].doc), http?.targetPort),
    ).toBe(3000);
  });

  it('each Deployment has a PodDisruptionBudget (one pod at a time), an HPA on CPU (70 %), a preStop pause and zone and node spread', () => {
    const budgets = ofKind('PodDisruptionBudget');
    const autoscalers = ofKind('HorizontalPodAutoscaler');
    for (const { doc } of deployments) {
      const name = doc.metadata.name;
      const pdb = budgets.find((b) =>
        labelsMatch(b.doc.spec?.selector?.matchLabels, doc.spec.template.metadata.labels),
      );
      expect([name, pdb?.doc.spec.maxUnavailable ?? pdb?.doc.spec.minAvailable]).toEqual([name, 1]);
      const hpa = autoscalers.find((h) => h.doc.spec.scaleTargetRef.name === name)?.doc;
      expect([
        name,
        hpa?.spec.scaleTargetRef.kind,
        hpa?.spec.minReplicas >= 2,
        hpa?.spec.maxReplicas > hpa?.spec.minReplicas,
      ]).toEqual([name, 'Deployment', true, true]);
      expect([name, hpa?.spec.metrics]).toEqual([
        name,
        [
          {
            type: 'Resource',
            resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 70 } },
          },
        ],
      ]);
      expect([name, containerOf(doc).lifecycle?.preStop?.exec?.command?.[0]]).toEqual([name, 'sleep']);
      const spread = (doc.spec.template.spec.topologySpreadConstraints ?? []).map((c: Yaml) => c.topologyKey);
      expect([name, spread]).toEqual([name, ['topology.kubernetes.io/zone', 'kubernetes.io/hostname']]);
    }
  });

  it('NetworkPolicies: ingress denied by default; only the gateway admits traffic from outside (the ingress controller), Prometheus may scrape', () => {
    const policies = ofKind('NetworkPolicy').map((r) => r.doc);
    const denyAll = policies.find(
      (p) =>
        Object.keys(p.spec.podSelector ?? {}).length === 0 &&
        p.spec.policyTypes.includes('Ingress') &&
        !p.spec.ingress,
    );
    expect(denyAll).toBeDefined();
    const monitoring = (from: Yaml) =>
      from.namespaceSelector?.matchLabels?.['kubernetes.io/metadata.name'] === 'monitoring';
    for (const policy of policies) {
      for (const rule of policy.spec.ingress ?? []) {
        if ((rule.from ?? []).every(monitoring)) continue;
        // Anything else admitted from outside the platform is for the gateway's HTTP port alone.
        expect([
          policy.metadata.name,
          policy.spec.podSelector.matchLabels?.['app.kubernetes.io/name'],
        ]).toEqual([policy.metadata.name, 'gateway']);
        expect(rule.ports).toEqual([{ port: 'http', protocol: 'TCP' }]);
      }
    }
  });

  it('a ServiceMonitor scrapes /metrics on a port every Service has (the gateway http, the services health)', () => {
    const [monitor] = ofKind('ServiceMonitor');
    expect(monitor).toBeDefined();
    const ports = new Set(monitor!.doc.spec.endpoints.map((e: Yaml) => e.port as string));
    for (const endpoint of monitor!.doc.spec.endpoints) expect(endpoint.path).toBe('/metrics');
    for (const { doc } of ofKind('Service')) {
      expect([
        doc.metadata.name,
        labelsMatch(monitor!.doc.spec.selector.matchLabels, doc.metadata.labels),
      ]).toEqual([doc.metadata.name, true]);
      expect([doc.metadata.name, doc.spec.ports.some((p: Yaml) => ports.has(p.name))]).toEqual([
        doc.metadata.name,
        true,
      ]);
    }
  });

  it('the Ingress exposes neither /metrics nor the probes', () => {
    for (const { doc } of ofKind('Ingress')) {
      for (const rule of doc.spec.rules ?? []) {
        for (const route of rule.http?.paths ?? []) {
          for (const hidden of ['/metrics', '/health/ready', '/healthz', '/readyz']) {
            const exposed =
              route.pathType === 'Exact' ? route.path === hidden : hidden.startsWith(route.path);
            expect([route.path, hidden, exposed]).toEqual([route.path, hidden, false]);
          }
        }
      }
    }
  });

  it('the Ingress publishes the API, its documents and the console, never /metrics or the probes', () => {
    const paths = ofKind('Ingress').flatMap(({ doc }) =>
      (doc.spec.rules ?? []).flatMap((rule: Yaml) => (rule.http?.paths ?? []).map((p: Yaml) => p.path)),
    );
    expect(paths).toEqual(expect.arrayContaining(['/api', '/v1', '/docs', '/console']));
    expect(paths.filter((p: string) => /^\/(metrics|health|healthz|readyz)/.test(p))).toEqual([]);
  });

  it('the Ingress routes to a Service port that exists', () => {
    const ingresses = ofKind('Ingress');
    expect(ingresses.length).toBeGreaterThan(0);
    for (const { doc } of ingresses) {
      for (const rule of doc.spec.rules ?? []) {
        for (const route of rule.http?.paths ?? []) {
          const backend = route.backend.service;
          const service = ofKind('Service').find((s) => s.doc.metadata.name === backend.name)?.doc;
          const port = service?.spec.ports.find(
            (p: Yaml) => p.name === backend.port.name || p.port === backend.port.number,
          );
          expect([doc.metadata.name, backend.name, !!port]).toEqual([doc.metadata.name, backend.name, true]);
        }
      }
    }
  });
});

// ---------------------------------------------------------------------------------------------
// The relay (apps/relay, docs/relay.md): a customer's image and Kubernetes component, apart from
// the platform's.
// ---------------------------------------------------------------------------------------------
describe('the relay', () => {
  const relayStage = stages.find((stage) => stage.name === 'relay');
  const RELAY_MAIN = 'dist/apps/relay/src/main.js';

  /** A site's kustomization using k8s/components/relay, rendered as `kubectl apply -k` would. */
  function renderSite(): Resource[] {
    const dir = mkdtempSync(path.join(tmpdir(), 'relay-site-'));
    try {
      const component = path.relative(dir, path.join(root, 'k8s/components/relay'));
      writeFileSync(
        path.join(dir, 'kustomization.yaml'),
        [
          'apiVersion: kustomize.config.k8s.io/v1beta1',
          'kind: Kustomization',
          'namespace: cad-licensing',
          `components: [${component}]`,
          'configMapGenerator:',
          '  - name: licensing-relay',
          '    literals: [site=Plant 4, product.pem=PEM]',
          'secretGenerator:',
          '  - name: licensing-relay-file',
          '    literals: [relay.lic=FILE]',
          '',
        ].join('\n'),
      );
      const output = execFileSync('kubectl', ['kustomize', dir], { encoding: 'utf8' });
      return parseAllDocuments(output)
        .map((document) => document.toJS() as Yaml)
        .filter(Boolean)
        .map((doc) => ({ file: 'site', doc }));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }

  it('has an image stage of its own, before the platform runtime that `docker build .` builds', () => {
    expect(relayStage).toBeDefined();
    expect(relayStage!.from).toBe(BASE_IMAGE);
    expect(stages.indexOf(relayStage!)).toBeLessThan(stages.length - 1);
    const copies = stageInstructions(relayStage!, 'COPY');
    for (const needed of [
      'node_modules',
      'dist',
      'tools/register-paths.js',
      'tsconfig.base.json',
      'package.json',
    ])
      expect(copies).toContainEqual(
        expect.stringMatching(new RegExp(`^--from=build /app/${needed} \\./${needed}$`)),
      );
    expect(stageEnv(relayStage!).get('NODE_ENV')).toBe('production');
    const user = stageInstructions(relayStage!, 'USER').at(-1)?.split(':')[0];
    expect(['root', '0', '', undefined]).not.toContain(user);
  });

  it('runs the relay entry point as PID 1, starting on the /data volume, port 8700', () => {
    const entrypoint: string[] = JSON.parse(stageInstructions(relayStage!, 'ENTRYPOINT').at(-1) ?? '[]');
    expect(entrypoint).toEqual(['node', '-r', './tools/register-paths.js', RELAY_MAIN]);
    expect(existsSync(path.join(root, 'apps/relay/src/main.ts'))).toBe(true);
    const cmd: string[] = JSON.parse(stageInstructions(relayStage!, 'CMD').at(-1) ?? '[]');
    expect(cmd.slice(0, 3)).toEqual(['start', '--data', '/data']);
    expect(cmd.join(' ')).toMatch(/--host 0\.0\.0\.0 --port 8700/);
    expect(stageInstructions(relayStage!, 'VOLUME')).toEqual(['/data']);
    expect(stageInstructions(relayStage!, 'EXPOSE')).toEqual(['8700']);
  });

  it('renders, as a site would use it: one pod with Recreate, its data on a claim, key and file mounted where the command reads them', () => {
    const resources = renderSite();
    for (const { doc } of resources) expect([doc.kind, schemaProblem(doc)]).toEqual([doc.kind, undefined]);
    const [deployment] = ofKind('Deployment', resources).map((r) => r.doc);
    expect(deployment.spec.replicas).toBe(1);
    expect(deployment.spec.strategy).toEqual({ type: 'Recreate' });
    const pod = deployment.spec.template.spec;
    expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 1000, fsGroup: 1000 });
    const volumes = new Map<string, Yaml>(pod.volumes.map((v: Yaml) => [v.name, v]));
    const claim = ofKind('PersistentVolumeClaim', resources)[0]!.doc;
    expect(volumes.get('data').persistentVolumeClaim.claimName).toBe(claim.metadata.name);
    expect(claim.spec.accessModes).toEqual(['ReadWriteOnce']);
    // Generated names (with their hash) are what the pod refers to.
    const configMap = ofKind('ConfigMap', resources)[0]!.doc;
    const secret = ofKind('Secret', resources)[0]!.doc;
    expect(volumes.get('product-key').configMap.name).toBe(configMap.metadata.name);
    expect(volumes.get('relay-file').secret).toMatchObject({
      secretName: secret.metadata.name,
      optional: true,
    });

    const [init] = pod.initContainers;
    const [relay] = pod.containers;
    const mounts = (container: Yaml) =>
      new Map<string, string>(container.volumeMounts.map((m: Yaml) => [m.name, m.mountPath]));
    expect(mounts(init).get('data')).toBe('/data');
    expect(init.args[0]).toMatch(/init --data \/data --site "\$RELAY_SITE"/);
    expect(init.env[0].valueFrom.configMapKeyRef).toEqual({ name: configMap.metadata.name, key: 'site' });
    const script: string = relay.args[0];
    expect(script).toContain(
      `exec node -r ./tools/register-paths.js ${RELAY_MAIN} start --data ${mounts(relay).get('data')}`,
    );
    expect(script).toContain(
      `--public-key ${mounts(relay).get('product-key')}/${volumes.get('product-key').configMap.items[0].path}`,
    );
    expect(script).toContain(`file=${mounts(relay).get('relay-file')}/relay.lic`);
    expect(script).toContain('--port 8700');
    expect(relay.ports).toEqual([{ name: 'http', containerPort: 8700 }]);
    expect(relay.readinessProbe.httpGet).toEqual({ path: '/healthz', port: 'http' });
    expect(read('apps/relay/src/http/relay-server.ts')).toContain("app.get('/healthz'");
    for (const container of [init, relay])
      expect(container.securityContext).toMatchObject({
        allowPrivilegeEscalation: false,
        readOnlyRootFilesystem: true,
      });
    const service = ofKind('Service', resources)[0]!.doc;
    expect(service.spec.ports).toEqual([{ name: 'http', port: 8700, targetPort: 'http' }]);
  });

  it('is not part of the platform overlays', () => {
    for (const overlay of OVERLAYS) {
      const names = rendered.get(overlay)!.resources.map((r) => r.doc.metadata?.name);
      expect(names).not.toContain('licensing-relay');
    }
  });
});
