import { Command, Option } from 'commander';
import { ApiOptions, callApi } from '../api-client';
import type { CliIo } from '../cli-io';
import {
  addGet,
  addList,
  addRemove,
  apiCommand,
  commandGroup,
  compact,
  pagingQuery,
  pick,
  printPage,
  segment,
  withPaging,
} from '../command-kit';
import { csv } from '../option-parsers';
import { print, table } from '../output';

const WEBHOOK_COLUMNS = ['id', 'url', 'events', 'enabled', 'created_at'];
const DELIVERY_COLUMNS = ['id', 'event_type', 'status', 'attempts', 'last_status_code', 'created_at'];

/** `webhooks`: endpoints the platform POSTs events to, and their delivery logs. */
export function registerWebhookCommands(program: Command, io: CliIo): void {
  const webhooks = commandGroup(program, io, 'webhooks', 'Webhooks: events POSTed to your endpoints');
  apiCommand(io, webhooks.command('create').description('Subscribe an endpoint (its secret is shown once)'))
    .requiredOption('--endpoint <url>', 'where events are POSTed (https; --url is the API)')
    .requiredOption(
      '--events <events>',
      'comma-separated: event types (license.revoked), families (license.*) or * for all',
      csv,
    )
    .option('--description <text>', 'a description')
    .action(async (o: ApiOptions & { endpoint: string; events: string[]; description?: string }) => {
      const body = await callApi(
        io,
        o,
        'POST',
        '/v1/webhooks',
        compact({ url: o.endpoint, events: o.events, description: o.description }),
      );
      print(io, o, body, () => table([pick(body, [...WEBHOOK_COLUMNS.slice(0, 3), 'secret'])]));
    });
  addList(io, webhooks, 'webhooks', 'webhooks', '/v1/webhooks', WEBHOOK_COLUMNS);
  addGet(io, webhooks, 'a webhook', '/v1/webhooks', [...WEBHOOK_COLUMNS, 'disabled_reason', 'description']);
  apiCommand(io, webhooks.command('update').description("Change a webhook's settings").argument('<id>'))
    .option('--endpoint <url>', 'where events are POSTed')
    .option('--events <events>', 'comma-separated event types, families or *', csv)
    .option('--description <text>', 'a description ("" for none)')
    .addOption(new Option('--enable', 'deliver to it again (a disabled endpoint)').conflicts('disable'))
    .addOption(new Option('--disable', 'stop delivering to it'))
    .action(
      async (
        id: string,
        o: ApiOptions & {
          endpoint?: string;
          events?: string[];
          description?: string;
          enable?: boolean;
          disable?: boolean;
        },
      ) => {
        const body = await callApi(
          io,
          o,
          'PUT',
          `/v1/webhooks/${segment(id)}`,
          compact({
            url: o.endpoint,
            events: o.events,
            description: o.description === undefined ? undefined : o.description || null,
            enabled: o.enable ? true : o.disable ? false : undefined,
          }),
        );
        print(io, o, body, () => table([pick(body, WEBHOOK_COLUMNS)]));
      },
    );
  addRemove(io, webhooks, 'delete', 'Unsubscribe an endpoint', '/v1/webhooks');
  apiCommand(
    io,
    webhooks.command('test').description('Send it a webhook.test event now').argument('<id>'),
  ).action(async (id: string, o: ApiOptions) => {
    const body = await callApi(io, o, 'POST', `/v1/webhooks/${segment(id)}/test`);
    print(io, o, body, () => `event ${body.event_id as string} queued\n`);
  });
  apiCommand(
    io,
    webhooks
      .command('rotate-secret')
      .description('Give it a new secret (the old one keeps signing for 24 h; shown once)')
      .argument('<id>'),
  ).action(async (id: string, o: ApiOptions) => {
    const body = await callApi(io, o, 'POST', `/v1/webhooks/${segment(id)}/rotate-secret`);
    print(io, o, body, () => table([pick(body, ['secret', 'previous_secret_expires_at'])]));
  });
  withPaging(
    apiCommand(
      io,
      webhooks.command('deliveries').description("A webhook's delivery log, newest first").argument('<id>'),
    ),
  ).action(async (id: string, o: ApiOptions & { page?: number; perPage?: number }) => {
    const query = pagingQuery(o);
    const path = `/v1/webhooks/${segment(id)}/deliveries${query.size ? `?${query}` : ''}`;
    printPage(io, o, await callApi(io, o, 'GET', path), 'deliveries', DELIVERY_COLUMNS);
  });
  apiCommand(
    io,
    webhooks.command('redeliver').description('Send one delivery again').argument('<delivery id>'),
  ).action(async (id: string, o: ApiOptions) => {
    const body = await callApi(io, o, 'POST', `/v1/webhook-deliveries/${segment(id)}/redeliver`);
    print(io, o, body, () => table([pick(body, DELIVERY_COLUMNS)]));
  });
}
