/** Where the CLI reads and writes: the process's, or a test's. */
export interface CliIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  env: Record<string, string | undefined>;
  /** stderr is a terminal: long commands draw a progress bar there. */
  interactive?: boolean;
}

/** A failure with the one line to print and the exit code. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
  }
}
