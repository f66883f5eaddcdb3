// The processes a test started and did not stop: read from /proc (Linux; none elsewhere), named on
// stderr and killed. Used after each test file (tools/jest-environment.js) and after the whole
// run (tools/jest-global-teardown.js). A process left running would otherwise outlive its test:
// it keeps a port, a database connection or a pipe open, and can keep CI waiting after the summary.
const { readFileSync, readdirSync } = require('node:fs');

/** The processes whose parent is `pid`. */
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

/** A worker of jest's own, which jest ends itself. */
const isJestWorker = (command) => command.includes('jest-worker');

/** Names and kills (SIGKILL) every child of this process; `who` says which test left them. */
function killLeakedChildren(who) {
  for (const child of childrenOf(process.pid)) {
    if (isJestWorker(child.command)) continue;
    process.stderr.write(`${who} left process ${child.pid} running: ${child.command.slice(0, 200)}\n`);
    try {
      process.kill(child.pid, 'SIGKILL');
    } catch {
      // Gone meanwhile.
    }
  }
}

module.exports = { childrenOf, killLeakedChildren };
