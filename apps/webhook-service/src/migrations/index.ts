import { CreateWebhooks1795441221771 } from './1795441221771-CreateWebhooks';
import { AddOutboxTraceContext1796000000000 } from './1796000000000-AddOutboxTraceContext';

/** In order of application; the timestamp in each name is when it was generated. */
export const WEBHOOK_MIGRATIONS = [CreateWebhooks1795441221771, AddOutboxTraceContext1796000000000];
