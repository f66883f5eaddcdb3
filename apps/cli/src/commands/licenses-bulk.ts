import { createWriteStream } from 'node:fs';
import { Command, Option } from 'commander';
import { ApiOptions, callApi, requestApi } from '../api-client';
import {
  EXPORT_COLUMNS,
  IGNORED_COLUMNS,
  IMPORT_COLUMNS,
  ImportRow,
  csvLine,
  exportRow,
  readImport,
} from '../bulk';
import { CliError, type CliIo } from '../cli-io';
import { QUERY_PARAMETERS, apiCommand } from '../command-kit';
import { integer } from '../option-parsers';
import { print } from '../output';

// `licenses import` and `licenses export`: many licenses at once, as CSV (see ../bulk).

/** Adds `licenses import <file>`. */
export function addLicenseImport(io: CliIo, licenses: Command): void {
  apiCommand(
    io,
    licenses
      .command('import')
      .description('Create licenses from a CSV file, each row once')
      .argument('<file>'),
  )
    .option('--concurrency <n>', 'requests in flight (1..16)', integer, 4)
    .option('--product-id <id>', "every row's product (to import an export into another product)")
    .addHelpText(
      'after',
      `\nColumns (a header row names them; only product_id is required): ${IMPORT_COLUMNS.join(', ')}.\n` +
        'features are separated by ";". A file of `licenses export` imports as it is: its other columns\n' +
        `(${IGNORED_COLUMNS.join(', ')}) are read past, a license it shows revoked, suspended or expired is\n` +
        'skipped, and valid_until becomes the days left (whole days; empty: no end).\n' +
        'Each row is sent with an Idempotency-Key made of its line and content: importing the same file\n' +
        'again, or re-running an interrupted import, creates nothing twice.\n',
    )
    .action(async (file: string, o: ApiOptions & { concurrency: number; productId?: string }) => {
      let rows: ImportRow[];
      try {
        rows = await readImport(file, { productId: o.productId });
      } catch (error) {
        throw new CliError(
          `cannot import ${file}: ${error instanceof Error ? error.message : String(error)}`,
          2,
        );
      }
      const failed: { line: number; detail: string }[] = [];
      const skipped = rows
        .filter((row) => row.skip !== undefined)
        .map(({ line, skip }) => ({ line, reason: skip! }));
      let created = 0;
      let replayed = 0;
      let done = skipped.length;
      const progress = () => {
        if (!io.interactive) return;
        const width = 30;
        const filled = Math.round((done / Math.max(rows.length, 1)) * width);
        io.stderr(`\r[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${done}/${rows.length}`);
      };
      // Workers share one queue, so a slow row does not hold up the others.
      const queue = rows.filter((row) => row.skip === undefined);
      const worker = async () => {
        for (let row = queue.shift(); row; row = queue.shift()) {
          try {
            const answer = await requestApi(io, o, 'POST', '/v1/licenses', row.body, {
              'idempotency-key': row.key,
            });
            if (answer.headers.get('idempotent-replayed') === 'true') replayed += 1;
            else created += 1;
          } catch (error) {
            const detail = error instanceof Error ? error.message : String(error);
            // The row's key was used with another body: an earlier run imported it (a valid_until
            // counted from another day, say).
            if (/Idempotency-Key was already used with a different request body/.test(detail)) replayed += 1;
            else failed.push({ line: row.line, detail });
          }
          done += 1;
          progress();
        }
      };
      await Promise.all(Array.from({ length: Math.min(Math.max(o.concurrency, 1), 16) }, worker));
      if (io.interactive) io.stderr('\n');
      // Rows finish out of order. The report follows the file.
      failed.sort((a, b) => a.line - b.line);
      const summary = { rows: rows.length, ok: created + replayed, created, replayed, skipped, failed };
      print(
        io,
        o,
        summary,
        () =>
          `${summary.ok} of ${summary.rows} rows imported: ${created} created, ${replayed} already imported by an earlier run\n` +
          skipped.map(({ line, reason }) => `line ${line}: skipped, ${reason}\n`).join('') +
          failed.map(({ line, detail }) => `line ${line}: ${detail}\n`).join(''),
      );
      if (failed.length > 0) throw new CliError(`${failed.length} row(s) failed`);
    });
}

/** Adds `licenses export`. */
export function addLicenseExport(io: CliIo, licenses: Command): void {
  apiCommand(
    io,
    licenses.command('export').description('Write every license, page by page, as CSV or JSON lines'),
  )
    .addOption(new Option('--format <format>', 'csv or jsonl').choices(['csv', 'jsonl']).default('csv'))
    .option('-o, --output <file>', 'where to write (default: standard output)')
    .option('--product-id <id>', 'only this product')
    .option('--status <status>', 'only this status')
    .option('--customer-email <text>', 'e-mail contains')
    .action(
      async (o: ApiOptions & Record<string, unknown> & { format: 'csv' | 'jsonl'; output?: string }) => {
        const out = o.output ? createWriteStream(o.output) : undefined;
        const write = (text: string) => (out ? out.write(text) : io.stdout(text));
        if (o.format === 'csv') write(csvLine([...EXPORT_COLUMNS]));
        let written = 0;
        for (let page = 1; ; page++) {
          const query = new URLSearchParams({ page: String(page), per_page: '100' });
          // The export pages by itself: only the filters pass through.
          for (const [option, parameter] of Object.entries(QUERY_PARAMETERS)) {
            if (o[option] !== undefined && option !== 'page' && option !== 'perPage')
              query.set(parameter, String(o[option]));
          }
          const body = await callApi(io, o, 'GET', `/v1/licenses?${query}`);
          const rows = body['licenses'] as Record<string, unknown>[];
          for (const row of rows) {
            write(o.format === 'csv' ? csvLine(exportRow(row)) : `${JSON.stringify(row)}\n`);
          }
          written += rows.length;
          // An empty page ends it too. Licenses deleted meanwhile would otherwise keep it looping.
          if (rows.length === 0 || written >= (body['total'] as number)) break;
        }
        if (out) {
          await new Promise<void>((resolve, reject) =>
            out.end((error?: Error | null) => (error ? reject(error) : resolve())),
          );
          io.stderr(`${written} licenses written to ${o.output}\n`);
        }
      },
    );
}
