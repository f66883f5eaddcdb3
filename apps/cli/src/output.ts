import type { CliIo } from './cli-io';

/** Prints JSON with --json, for scripts. Otherwise prints the text that `human` makes. */
export function print(io: CliIo, options: { json?: boolean }, value: unknown, human: () => string): void {
  io.stdout(options.json ? `${JSON.stringify(value)}\n` : human());
}

/** Rows as aligned columns under a header, or one `key  value` line per field if vertical. */
export function table(rows: Record<string, unknown>[], vertical = false): string {
  const show = (value: unknown): string =>
    value === null || value === undefined
      ? ''
      : Array.isArray(value)
        ? value.join(',')
        : typeof value === 'object'
          ? JSON.stringify(value)
          : String(value);
  if (vertical) {
    return rows
      .map((row) => {
        const width = Math.max(...Object.keys(row).map((k) => k.length));
        return Object.entries(row)
          .map(([k, v]) => `${k.padEnd(width)}  ${show(v)}\n`)
          .join('');
      })
      .join('\n');
  }
  if (rows.length === 0) return '';
  const columns = Object.keys(rows[0]!);
  const widths = columns.map((c) => Math.max(c.length, ...rows.map((row) => show(row[c]).length)));
  const line = (cells: string[]) =>
    `${cells
      .map((cell, i) => cell.padEnd(widths[i]!))
      .join('  ')
      .trimEnd()}\n`;
  return (
    line(columns.map((c) => c.toUpperCase())) +
    rows.map((row) => line(columns.map((c) => show(row[c])))).join('')
  );
}
