/**
 * A small, typed environment schema: each app declares its variables once, `loadConfig` checks them
 * all at boot and fails naming every bad variable, and the rest of the code reads the typed result.
 */
export interface EnvVar<T> {
  readonly kind: string;
  readonly description: string;
  readonly defaultValue?: T;
  readonly productionDefault?: T | null;
  parse(raw: string): T;
}

type Schema = Record<string, EnvVar<unknown>>;
export type ConfigOf<S extends Schema> = {
  readonly [K in keyof S]: S[K] extends EnvVar<infer T> ? T : never;
};

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n  ${problems.join('\n  ')}`);
    this.name = 'ConfigError';
  }
}

interface Options<T> {
  default?: T;
  /** Overrides `default` when NODE_ENV=production; `null` makes the variable required there. */
  production?: T | null;
  description: string;
}

function variable<T>(kind: string, options: Options<T>, parse: (raw: string) => T): EnvVar<T> {
  return {
    kind,
    description: options.description,
    defaultValue: options.default,
    productionDefault: options.production,
    parse,
  };
}

export const env = {
  string: (options: Options<string>) => variable('string', options, (raw) => raw),
  int(options: Options<number> & { min?: number; max?: number }): EnvVar<number> {
    return variable('integer', options, (raw) => {
      const value = Number(raw);
      if (!Number.isInteger(value)) throw new Error('must be an integer');
      if (options.min !== undefined && value < options.min) throw new Error(`must be >= ${options.min}`);
      if (options.max !== undefined && value > options.max) throw new Error(`must be <= ${options.max}`);
      return value;
    });
  },
  bool: (options: Options<boolean>) =>
    variable('boolean', options, (raw) => {
      if (/^(true|1|yes)$/i.test(raw)) return true;
      if (/^(false|0|no)$/i.test(raw)) return false;
      throw new Error('must be true or false');
    }),
  url: (options: Options<string> & { protocols: string[] }) =>
    variable('url', options, (raw) => {
      const protocol = new URL(raw).protocol.replace(/:$/, '');
      if (!options.protocols.includes(protocol))
        throw new Error(`must be a ${options.protocols.join(' or ')} URL`);
      return raw;
    }),
  /** `host:port,host:port`, kept as written; read it with `parseHostPorts`. */
  hostPorts: (options: Options<string> & { defaultPort: number }) =>
    variable('host:port list', options, (raw) => {
      parseHostPorts(raw, options.defaultPort);
      return raw;
    }),
  oneOf: <T extends string>(values: readonly T[], options: Options<T>) =>
    variable<T>(`one of ${values.join(', ')}`, options, (raw) => {
      if (!values.includes(raw as T)) throw new Error(`must be one of ${values.join(', ')}`);
      return raw as T;
    }),
};

/** `host:port,host:port` (`[v6 address]:port`; `defaultPort` where the port is left out). */
export function parseHostPorts(raw: string, defaultPort: number): Array<{ host: string; port: number }> {
  return raw
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean)
    .map((entry) => {
      const match = /^(\[[^\]]+\]|[^:[\]]+)(?::(\d{1,5}))?$/.exec(entry);
      if (!match) throw new Error(`must list host:port entries ("${entry}" is not one)`);
      return { host: match[1]!.replace(/^\[|\]$/g, ''), port: Number(match[2] ?? defaultPort) };
    });
}

export function loadConfig<S extends Schema>(
  schema: S,
  source: Record<string, string | undefined> = process.env,
): ConfigOf<S> {
  const production = source.NODE_ENV === 'production';
  const problems: string[] = [];
  const result: Record<string, unknown> = {};
  for (const [name, spec] of Object.entries(schema)) {
    const raw = source[name];
    if (raw === undefined || raw === '') {
      const fallback =
        production && spec.productionDefault !== undefined ? spec.productionDefault : spec.defaultValue;
      if (fallback === undefined || fallback === null)
        problems.push(`${name} is required (${spec.description})`);
      else result[name] = fallback;
      continue;
    }
    try {
      result[name] = spec.parse(raw);
    } catch (error) {
      problems.push(`${name} ${(error as Error).message} (got "${raw}")`);
    }
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return result as ConfigOf<S>;
}
