import { JetStreamManager, NatsConnection, RetentionPolicy, StorageType, nanos } from 'nats';
import { namespaced } from './subjects';

export interface StreamDefinition {
  name: string;
  /** A subject pattern such as `licensing.events.>`. */
  subjects: string;
  /** How long messages are kept (7 days when not said). */
  maxAgeDays?: number;
}

/** Stream names cannot contain dots, so the namespace is joined with an underscore. */
export function streamName(namespace: string, name: string): string {
  return namespace ? `${namespace}_${name}` : name;
}

const DAY_NS = nanos(24 * 3600 * 1000);

/**
 * Creates the stream if it does not exist yet (both producers and consumers call this at boot, in
 * any order), with `replicas` copies. File storage, kept for 7 days unless the definition says otherwise, and a 10-minute de-duplication window on
 * `Nats-Msg-Id`: a producer that crashes after publishing and publishes again is not counted twice.
 */
export async function ensureStream(
  connection: NatsConnection,
  namespace: string,
  stream: StreamDefinition,
  /** Copies JetStream keeps of each message (JETSTREAM_REPLICAS): 3 on a 3-node cluster, 1 on one server. */
  replicas = 1,
): Promise<{ name: string; manager: JetStreamManager }> {
  const manager = await connection.jetstreamManager();
  const name = streamName(namespace, stream.name);
  const config = {
    name,
    subjects: [namespaced(namespace, stream.subjects)],
    storage: StorageType.File,
    retention: RetentionPolicy.Limits,
    max_age: (stream.maxAgeDays ?? 7) * DAY_NS,
    duplicate_window: nanos(10 * 60 * 1000),
    num_replicas: replicas,
  };
  try {
    await manager.streams.info(name);
  } catch {
    await manager.streams.add(config).catch(async (error: unknown) => {
      // Another replica created it between our lookup and our add.
      await manager.streams.info(name).catch(() => {
        throw error;
      });
    });
  }
  return { name, manager };
}
