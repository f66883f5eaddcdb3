// The relay's process: `node dist/apps/relay/src/main.js start --data DIR --public-key FILE`.
import { runRelayCli } from './relay-cli';

void runRelayCli(process.argv.slice(2), {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  stopped: () =>
    new Promise<void>((resolve) => {
      process.once('SIGTERM', () => resolve());
      process.once('SIGINT', () => resolve());
    }),
}).then((code) => {
  process.exitCode = code;
});
