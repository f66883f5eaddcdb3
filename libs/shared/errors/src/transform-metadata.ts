import type { MetadataStorage } from 'class-transformer/types/MetadataStorage';
import type { TypeMetadata } from 'class-transformer/types/interfaces';

/**
 * class-transformer's metadata store (`@Type`, `@Transform`, `@Expose`, `@Exclude`). The package
 * exports it only from its build (`cjs/storage`), with its declaration beside the others under
 * `types/`; the version is pinned, and `compiled-validation.spec.ts` fails if the store moves.
 */
const { defaultMetadataStorage: store } = require('class-transformer/cjs/storage') as {
  defaultMetadataStorage: MetadataStorage;
};

/** What the store holds per class, read through its own (private) maps. */
interface StoreMaps {
  _typeMetadatas: Map<Function, Map<string, TypeMetadata>>;
  _transformMetadatas: Map<Function, Map<string, unknown[]>>;
  _exposeMetadatas: Map<Function, Map<string | undefined, unknown>>;
  _excludeMetadatas: Map<Function, Map<string | undefined, unknown>>;
}

export const transformMetadata = {
  /** The `@Type` of a member, its class's own or inherited. */
  findTypeMetadata(type: Function, property: string): TypeMetadata | undefined {
    return store.findTypeMetadata(type, property);
  },
  /** The members to which the class itself (not its parents) gives a `@Type`. */
  typedProperties(type: Function): string[] {
    return [...((store as unknown as StoreMaps)._typeMetadatas.get(type)?.keys() ?? [])];
  },
  /** Whether the class itself (not its parents) declares any `@Transform`, `@Expose` or `@Exclude`. */
  hasTransforms(type: Function): boolean {
    const maps = store as unknown as StoreMaps;
    return (
      (maps._transformMetadatas.get(type)?.size ?? 0) > 0 ||
      (maps._exposeMetadatas.get(type)?.size ?? 0) > 0 ||
      (maps._excludeMetadatas.get(type)?.size ?? 0) > 0
    );
  },
};
