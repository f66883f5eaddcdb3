/** Secrets at rest: AES-256-GCM under versioned master keys from the environment. */
export * from './master-key-vault';
