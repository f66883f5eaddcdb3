import { ConfigError, env, loadConfig } from './env';

const schema = {
  PORT: env.int({ default: 3000, min: 1, max: 65535, description: 'port' }),
  SECRET: env.string({ default: 'dev-secret', production: null, description: 'a secret' }),
  FLAG: env.bool({ default: false, description: 'a flag' }),
};

describe('loadConfig', () => {
  it('applies defaults when nothing is set', () => {
    expect(loadConfig(schema, {})).toEqual({ PORT: 3000, SECRET: 'dev-secret', FLAG: false });
  });

  it('parses and types the values it is given', () => {
    expect(loadConfig(schema, { PORT: '8080', FLAG: 'true', SECRET: 's' })).toEqual({
      PORT: 8080,
      SECRET: 's',
      FLAG: true,
    });
  });

  it('names every invalid variable at once', () => {
    expect(() => loadConfig(schema, { PORT: 'eighty', FLAG: 'maybe' })).toThrow(ConfigError);
    try {
      loadConfig(schema, { PORT: '0', FLAG: 'maybe' });
    } catch (error) {
      const problems = (error as ConfigError).problems.join('\n');
      expect(problems).toMatch(/^PORT must be >= 1/m);
      expect(problems).toMatch(/^FLAG must be true or false/m);
    }
  });

  it('requires production-only variables in production', () => {
    expect(() => loadConfig(schema, { NODE_ENV: 'production' })).toThrow(/SECRET is required/);
  });
});
