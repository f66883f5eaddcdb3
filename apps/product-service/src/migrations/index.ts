import { CreateProducts1795375480711 } from './1795375480711-CreateProducts';
import { AddOutbox1795376755138 } from './1795376755138-AddOutbox';
import { MarkDeletions1795440938958 } from './1795440938958-MarkDeletions';
import { AddOutboxTraceContext1796000000000 } from './1796000000000-AddOutboxTraceContext';

/** In order of application; the timestamp in each name is when it was generated. */
export const PRODUCT_MIGRATIONS = [CreateProducts1795375480711, AddOutbox1795376755138, MarkDeletions1795440938958, AddOutboxTraceContext1796000000000];
