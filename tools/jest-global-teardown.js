// Once per `npm test`, after the last test file: every process a test started and did not stop
// (a redis-server, a nats-server, a service) is named and killed. A process left running would
// otherwise keep jest waiting for ever after the summary; with `forceExit` jest ends regardless,
// and this makes the leak visible instead of silent.
const { readFileSync, readdirSync } = require('node:fs');

/** The processes whose parent is `pid`, read from /proc (Linux); none elsewhere. */
function childrenOf(pid) {
  let entries;
  try {
    entries = readdirSync('/proc').filter((name) => /^\d+$/.test(name));
  } catch {
    return [];
  }
  const children = [];
  for (const entry of entries) {
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // The command name is in parentheses and may hold spaces: the fields after it are fixed.
      const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (parent !== pid) continue;
      const command = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').join(' ').trim();
      children.push({ pid: Number(entry), command });
    } catch {
      // Gone meanwhile.
    }
  }
  return children;
}

module.exports = async function globalTeardown() {
  const leaked = childrenOf(process.pid);
  for (const child of leaked) {
    process.stderr.write(`A test left process ${child.pid} running: ${child.command.slice(0, 200)}\n`);
    try {
      process.kill(child.pid, 'SIGKILL');
    } catch {
      // Gone meanwhile.
    }
  }
};
