import { Command, Option } from 'commander';
import { ApiOptions, callApi } from './api-client';
import type { CliIo } from './cli-io';
import { integer } from './option-parsers';
import { print, table } from './output';

// What the command groups share: the API options and the list, get and delete commands.
// Each takes the CliIo, because a test runs the CLI with its own.

/** A group of commands, such as `products`. */
export function commandGroup(program: Command, io: CliIo, name: string, description: string): Command {
  return program
    .command(name)
    .description(description)
    .exitOverride()
    .configureOutput({ writeOut: io.stdout, writeErr: io.stderr });
}

/** Adds the options of a command that calls the API (ApiOptions). */
export function apiCommand(io: CliIo, command: Command): Command {
  return command
    .addOption(new Option('--url <url>', 'the licensing API (env LICENSING_URL)'))
    .addOption(new Option('--api-key <key>', 'an API key (env LICENSING_API_KEY)'))
    .option('--json', 'print JSON for scripts instead of a table')
    .exitOverride()
    .configureOutput({ writeOut: io.stdout, writeErr: io.stderr });
}

/** Options that filter or page a list, by their option name, with the query parameter they set. */
export const QUERY_PARAMETERS: Record<string, string> = {
  page: 'page',
  perPage: 'per_page',
  productId: 'product_id',
  status: 'status',
  customerEmail: 'customer_email',
  licenseId: 'license_id',
};

/** Turns what a user typed for a resource (an id, or a serial for a license) into its id. */
export type IdResolver = (io: CliIo, options: ApiOptions, typed: string) => Promise<string>;

/** The id as typed. */
export const asTyped: IdResolver = (_io, _options, typed) => Promise.resolve(typed);

/**
 * Adds `list`, a page of the parent's resources (`what`: "licenses", "API keys"). `extra` adds a
 * group's own filters; they must be in QUERY_PARAMETERS to reach the API.
 */
export function addList(
  io: CliIo,
  parent: Command,
  what: string,
  plural: string,
  path: string,
  columns: string[],
  extra = (c: Command) => c,
): void {
  withPaging(extra(apiCommand(io, parent.command('list').description(`List ${what}, newest first`)))).action(
    async (o: ApiOptions & Record<string, unknown>) => {
      const query = new URLSearchParams();
      for (const [option, parameter] of Object.entries(QUERY_PARAMETERS)) {
        if (o[option] !== undefined) query.set(parameter, String(o[option]));
      }
      const body = await callApi(io, o, 'GET', `${path}${query.size ? `?${query}` : ''}`);
      printPage(io, o, body, plural, columns);
    },
  );
}

/** Adds `--page` and `--per-page`, which every list command takes. */
export const withPaging = (command: Command): Command =>
  command
    .option('--page <n>', 'page (from 1)', integer)
    .option('--per-page <n>', 'per page (1..100)', integer);

/** `?page=&per_page=` of the paging options given (empty when none is). */
export function pagingQuery(o: { page?: number; perPage?: number }): URLSearchParams {
  const query = new URLSearchParams();
  if (o.page !== undefined) query.set('page', String(o.page));
  if (o.perPage !== undefined) query.set('per_page', String(o.perPage));
  return query;
}

/** Prints one page of a list answer: its `plural` items as a table of `columns`, then "n of total". */
export function printPage(
  io: CliIo,
  o: ApiOptions,
  body: Record<string, unknown>,
  plural: string,
  columns: string[],
): void {
  const rows = body[plural] as Record<string, unknown>[];
  print(
    io,
    o,
    body,
    () => `${table(rows.map((row) => pick(row, columns)))}${rows.length} of ${body.total as number}\n`,
  );
}

/** Adds `get <id>`: one of the parent's resources (`what`: "a license"), by what `resolve` accepts. */
export function addGet(
  io: CliIo,
  parent: Command,
  what: string,
  path: string,
  columns: string[],
  resolve: IdResolver = asTyped,
): void {
  apiCommand(io, parent.command('get').description(`Show ${what}`).argument('<id>')).action(
    async (typed: string, o: ApiOptions) => {
      const id = await resolve(io, o, typed);
      const body = await callApi(io, o, 'GET', `${path}/${segment(id)}`);
      print(io, o, body, () => table([pick(body, columns)], true));
    },
  );
}

/** Adds a command that sends DELETE for one resource: `delete` or `revoke`, by what it does. */
export function addRemove(
  io: CliIo,
  parent: Command,
  name: string,
  description: string,
  path: string,
  resolve: IdResolver = asTyped,
): void {
  apiCommand(io, parent.command(name).description(description).argument('<id>')).action(
    async (typed: string, o: ApiOptions) => {
      const id = await resolve(io, o, typed);
      const body = await callApi(io, o, 'DELETE', `${path}/${segment(id)}`);
      print(io, o, body, () => `${(body.message as string | undefined) ?? 'done'}\n`);
    },
  );
}

/** The fields a table shows, in its column order. */
export const pick = (value: Record<string, unknown>, keys: string[]) =>
  Object.fromEntries(keys.map((k) => [k, value[k]]));

/** A request body without the options that were not given. */
export const compact = (value: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined));

/** Whether what a user typed is a UUID (an id), rather than a serial or a name. */
export const isUuid = (text: string): boolean =>
  /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(text);

/** An id as one path segment: a slash in it cannot reach another route. */
export const segment = (id: string) => encodeURIComponent(id);
