// The `licensing` command line: verify and inspect license files offline, and manage products,
// licenses, key pairs and API keys through the API.
export { runLicensingCli } from './licensing-cli';
export type { CliIo } from './cli-io';
