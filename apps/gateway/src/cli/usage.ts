/** How an operator runs these commands. Every help text shows it. */
export const RUN = 'npm run operator --';

/** Help asked for: printed on stdout, exit status 0. */
export interface Help {
  kind: 'help';
  text: string;
}

/** Arguments that name no command: printed on stderr, exit status 2. */
export interface Usage {
  kind: 'usage';
  message?: string;
  text: string;
}

export const wantsHelp = (args: readonly string[]): boolean =>
  args.some((arg) => arg === '--help' || arg === '-h');

/** Help if the arguments ask for it, else a usage error. */
export function helpOrUsage(args: readonly string[], text: string): Help | Usage {
  return wantsHelp(args) ? { kind: 'help', text } : { kind: 'usage', text };
}
