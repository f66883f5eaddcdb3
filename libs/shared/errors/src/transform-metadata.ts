import type { MetadataStorage } from 'class-transformer/types/MetadataStorage';
import type { TypeMetadata } from 'class-transformer/types/interfaces';

/**
 * class-transformer's metadata store (`@Type`, `@Transform`, `@Expose`, `@Exclude`). The package
 * exports it only from its build (`cjs/storage`), with its declaration beside the others under
 * `types/`. The version is pinned; should a later one move or reshape the store, every class reads
 * as "not compiled" (class-validator then validates everything, as before) and the specs that
 * expect the contracts compiled fail.
 */
function loadStore(): MetadataStorage | undefined {
  try {
    return (require('class-transformer/cjs/storage') as { defaultMetadataStorage?: MetadataStorage })
      .defaultMetadataStorage;
  } catch {
    return undefined;
  }
}
const store = loadStore();

/** What the store holds per class, read through its own (private) maps. */
interface StoreMaps {
  _typeMetadatas?: Map<Function, Map<string, TypeMetadata>>;
  _transformMetadatas?: Map<Function, Map<string, unknown[]>>;
  _exposeMetadatas?: Map<Function, Map<string | undefined, unknown>>;
  _excludeMetadatas?: Map<Function, Map<string | undefined, unknown>>;
}
const maps = (store ?? {}) as StoreMaps;
const readable =
  typeof store?.findTypeMetadata === 'function' &&
  [maps._typeMetadatas, maps._transformMetadatas, maps._exposeMetadatas, maps._excludeMetadatas].every(
    (map) => map instanceof Map,
  );

export const transformMetadata = {
  /** Whether the store has the shape read here; if not, nothing is compiled. */
  readable,
  /** The `@Type` of a member, its class's own or inherited. */
  findTypeMetadata(type: Function, property: string): TypeMetadata | undefined {
    return store!.findTypeMetadata(type, property);
  },
  /** The members to which the class itself (not its parents) gives a `@Type`. */
  typedProperties(type: Function): string[] {
    return [...(maps._typeMetadatas!.get(type)?.keys() ?? [])];
  },
  /** Whether the class itself (not its parents) declares any `@Transform`, `@Expose` or `@Exclude`. */
  hasTransforms(type: Function): boolean {
    return (
      (maps._transformMetadatas!.get(type)?.size ?? 0) > 0 ||
      (maps._exposeMetadatas!.get(type)?.size ?? 0) > 0 ||
      (maps._excludeMetadatas!.get(type)?.size ?? 0) > 0
    );
  },
};
