// How `npm start` shows the services' log lines. Each process writes one JSON object per line
// (pino). On a terminal `npm start` prints them for a person to read; off one (a file, a pipe, a
// log collector) they pass through as they came. LOG_FORMAT=json or pretty overrides the choice.

/** Whether `npm start` rewrites log lines for a person: on a terminal, unless LOG_FORMAT says. */
function wantsPretty(stream, env = process.env) {
  if (env.LOG_FORMAT === 'json') return false;
  if (env.LOG_FORMAT === 'pretty') return true;
  return Boolean(stream.isTTY);
}

/** The fields every line has, which the pretty form places itself; the rest are listed after the message. */
const PLACED = new Set(['level', 'time', 'service', 'msg', 'context', 'pid', 'hostname']);

/**
 * One log line for a person: `12:03:04 WARN  license-service  message  key=value …`. A line that
 * is not a pino JSON object (the first-boot key block, a stack trace) is returned unchanged.
 */
function prettyLine(line) {
  if (!line.startsWith('{')) return line;
  let entry;
  try {
    entry = JSON.parse(line);
  } catch {
    return line;
  }
  if (typeof entry !== 'object' || entry === null || typeof entry.level !== 'string') return line;
  const time = typeof entry.time === 'string' ? entry.time.slice(11, 19) : '';
  const extra = Object.entries(entry)
    .filter(([key, value]) => !PLACED.has(key) && value !== undefined && value !== null)
    .map(([key, value]) => `${key}=${typeof value === 'string' ? value : JSON.stringify(value)}`);
  const message = [entry.context ? `[${entry.context}]` : '', entry.msg ?? ''].filter(Boolean).join(' ');
  return [time, entry.level.toUpperCase().padEnd(5), String(entry.service ?? ''), message, ...extra]
    .filter(Boolean)
    .join('  ');
}

/**
 * Calls `onLine` with each complete line of a stream, and once more with what is left when it
 * ends; lines split across chunks are joined first.
 */
function eachLine(stream, onLine) {
  let rest = '';
  stream.setEncoding('utf8');
  stream.on('data', (chunk) => {
    const lines = (rest + chunk).split('\n');
    rest = lines.pop();
    for (const line of lines) onLine(line);
  });
  stream.on('end', () => {
    if (rest) onLine(rest);
  });
}

module.exports = { eachLine, prettyLine, wantsPretty };
