// CPU time of processes, from /proc/<pid>/stat (utime + stime, in clock ticks): read before and
// after a run, divided by the requests it served, it is the CPU each process spent per request.
const fs = require('node:fs');

// Linux reports /proc times in USER_HZ, 100 on every platform Node supports.
const TICK_US = 10_000;

/** utime + stime of one process in µs, or undefined once it has exited. */
function cpuOf(pid) {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name may hold spaces and parentheses: the fields start after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * TICK_US;
  } catch {
    return undefined;
  }
}

/** PIDs whose command name (`comm`) is `name`: every PostgreSQL backend, say. */
function pidsNamed(name) {
  const pids = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (fs.readFileSync(`/proc/${entry}/comm`, 'utf8').trim() === name) pids.push(Number(entry));
    } catch {
      // exited meanwhile
    }
  }
  return pids;
}

/**
 * How long all threads of a process have waited for a core while runnable, in µs (the second
 * field of each /proc/<pid>/task/<tid>/schedstat, in ns), or undefined once it has exited. A
 * thread that has exited meanwhile takes its share with it: a lower bound.
 */
function queuedOf(pid) {
  try {
    let ns = 0;
    for (const tid of fs.readdirSync(`/proc/${pid}/task`)) {
      try {
        ns += Number(fs.readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[1]);
      } catch {
        // the thread exited meanwhile
      }
    }
    return ns / 1000;
  } catch {
    return undefined;
  }
}

/**
 * The processes of one measurement, by label: fixed PIDs (`{label, pid}`) and groups found by name
 * at each reading (`{label, comm}`: PostgreSQL forks a backend per connection). The harness's own
 * process (autocannon) is always there, as `loadgen`. `start()` returns a function that returns
 * what each label spent since: CPU time, or with `queuedSampler` the time waited for a core.
 */
function cpuSampler(processes) {
  return sampler(processes, cpuOf, () => {
    const own = process.cpuUsage();
    return own.user + own.system;
  });
}

/** `cpuSampler`, reading how long each process waited for a core while runnable (µs). */
function queuedSampler(processes) {
  return sampler(processes, queuedOf, () => queuedOf(process.pid) ?? 0);
}

function sampler(processes, readPid, readOwn) {
  const read = () => {
    const totals = new Map([['loadgen', readOwn()]]);
    for (const p of processes) {
      const pids = p.pid !== undefined ? [p.pid] : pidsNamed(p.comm);
      const perPid = new Map(pids.map((pid) => [pid, readPid(pid) ?? 0]));
      totals.set(p.label, perPid);
    }
    return totals;
  };
  return {
    start() {
      const before = read();
      return () => {
        const after = read();
        const spent = {};
        for (const [label, value] of after) {
          const was = before.get(label);
          if (typeof value === 'number') {
            spent[label] = value - was;
            continue;
          }
          let sum = 0;
          // A PID absent before was forked during the run: all of its time counts.
          for (const [pid, us] of value) sum += us - (was.get(pid) ?? 0);
          spent[label] = sum;
        }
        return spent;
      };
    },
  };
}

/** How busy `pids` are now, as a share of one core, over `ms`. */
async function busyShare(pids, ms = 500) {
  const sum = () => pids.reduce((total, pid) => total + (cpuOf(pid) ?? 0), 0);
  const before = sum();
  await new Promise((resolve) => setTimeout(resolve, ms));
  return (sum() - before) / (ms * 1000);
}

module.exports = { cpuSampler, queuedSampler, busyShare, pidsNamed };
