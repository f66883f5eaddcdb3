// The SWC options that compile the workspace's TypeScript, in one place: jest compiles the tests
// with them (jest.preset.js) and tools/compile.js compiles the services with them, so the services
// run exactly the code the tests ran. Decorator metadata is on: Nest's dependency injection and
// class-validator read it.

/** @param {'typescript' | 'ecmascript'} syntax */
function swcOptions(syntax) {
  return {
    jsc: {
      parser: { syntax, decorators: true },
      transform: { legacyDecorator: true, decoratorMetadata: true },
      target: 'es2022',
    },
    module: { type: 'commonjs' },
  };
}

module.exports = { swcOptions };
