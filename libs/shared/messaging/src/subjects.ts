/**
 * Every NATS subject and stream name goes through here, so that one NATS server can carry several
 * isolated environments (a running `npm start` stack and the test suite, or staging and QA).
 */
export function namespaced(namespace: string, name: string): string {
  return namespace ? `${namespace}.${name}` : name;
}
