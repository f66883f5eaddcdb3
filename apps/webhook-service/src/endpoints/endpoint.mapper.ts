import { WebhookView } from '@licensing/contracts';
import { EndpointEntity } from './endpoint.entity';

/** An endpoint as the API returns it: never its secret. */
export function toWebhookView(endpoint: EndpointEntity): WebhookView {
  return {
    id: endpoint.id,
    url: endpoint.url,
    events: endpoint.events,
    description: endpoint.description,
    enabled: endpoint.enabled,
    disabled_reason: endpoint.disabledReason,
    created_at: endpoint.createdAt.toISOString(),
    updated_at: endpoint.updatedAt.toISOString(),
  };
}
