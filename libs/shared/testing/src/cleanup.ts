import { Client } from 'pg';
import { connect } from 'nats';
import { Streams } from '@licensing/contracts';
import { streamName } from '@licensing/shared/messaging';
import { TEST_ADMIN_DATABASE_URL, TEST_DATABASE_NAME, TEST_NATS_URL } from './environment';

/** Drops this test file's database, if a test created it (runs after every test file). */
export async function dropTestDatabase(): Promise<void> {
  const client = new Client({ connectionString: TEST_ADMIN_DATABASE_URL });
  await client.connect();
  try {
    await client.query(`DROP DATABASE IF EXISTS "${TEST_DATABASE_NAME}" WITH (FORCE)`);
  } finally {
    await client.end();
  }
}

/** Deletes the JetStream streams of a test namespace, so test runs do not pile streams up in NATS. */
export async function deleteNamespaceStreams(namespace: string): Promise<void> {
  const connection = await connect({ servers: TEST_NATS_URL });
  try {
    const manager = await connection.jetstreamManager();
    for (const stream of Object.values(Streams)) {
      await manager.streams.delete(streamName(namespace, stream.name)).catch(() => false);
    }
  } finally {
    await connection.close();
  }
}
