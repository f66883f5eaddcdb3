/**
 * Every NATS subject and stream name goes through here, so that one NATS server can carry several
 * isolated environments (a running `npm start` stack and the test suite, or staging and QA).
 */
export function namespaced(namespace: string, name: string): string {
  return namespace ? `${namespace}.${name}` : name;
}

/**
 * The organization a per-organization subject names (`licensing.sync-reports.<org_id>`,
 * `licensing.audit.<org_id>`): its last token. A record filed under another organization's subject
 * is refused by its consumer, so one organization can never write into another's data.
 */
export function organizationOfSubject(subject: string): string {
  return subject.slice(subject.lastIndexOf('.') + 1);
}
