// The order jest starts test files in. Two workers share the files, so a long file started last
// keeps one worker busy while the other waits: the longest files must start first.
//
// Jest's own order does that from the durations it cached on an earlier run. CI runs on a fresh
// clone, with no such cache, and jest then falls back on file size. That fails for the process
// tests (tools/*.int-spec.ts, the SDK specs, the console in Chromium): they start whole platforms,
// compilers or browsers, and the smallest of them take a minute. Without a cached duration, this
// sequencer starts those first, the longest known ones first, then the rest by file size.
const { default: Sequencer } = require('@jest/test-sequencer');

/**
 * Seconds each slow file took in CI (a 2-core machine, 2026-11-27), rounded. A file not listed
 * here and not in jest's cache is ordered by its size after these. The figures only order the
 * files: stale ones cost minutes, never a failure.
 */
const KNOWN_SECONDS = {
  'tools/scale-out.int-spec.ts': 180,
  'apps/gateway-e2e/src/console.e2e-spec.ts': 110,
  'tools/pg-failover.int-spec.ts': 90,
  'tools/bench-smoke.int-spec.ts': 90,
  'apps/gateway-e2e/src/fuzz.e2e-spec.ts': 90,
  'tools/rolling-upgrade.int-spec.ts': 85,
  'tools/relay-e2e.int-spec.ts': 60,
  'apps/gateway-e2e/src/faults.e2e-spec.ts': 50,
  'tools/two-stacks.int-spec.ts': 45,
  'tools/graceful-shutdown.int-spec.ts': 42,
  'tools/soak-smoke.int-spec.ts': 35,
  'tools/readme-walkthrough.int-spec.ts': 33,
  'apps/gateway-e2e/src/webhooks.e2e-spec.ts': 33,
  'apps/gateway-e2e/src/offline-fleets-docs.e2e-spec.ts': 30,
  'apps/gateway-e2e/src/policies.e2e-spec.ts': 29,
  'tools/bench-events-smoke.int-spec.ts': 26,
  'sdks/python/pytest.int-spec.ts': 25,
  'sdks/go/go-sdk.int-spec.ts': 25,
  'sdks/python/online.int-spec.ts': 25,
  'apps/relay/src/relay-process.int-spec.ts': 23,
  'sdks/go/online.int-spec.ts': 23,
  'tools/bench-analytics-smoke.int-spec.ts': 23,
  'sdks/c/c-sdk.int-spec.ts': 14,
};

class LongestFirstSequencer extends Sequencer {
  sort(tests) {
    const root = `${__dirname.replace(/tools$/, '')}`;
    const weight = (test) => {
      const failed = this.hasFailed(test) ? 1e9 : 0;
      const cached = this.time(test);
      if (cached !== undefined && cached !== null) return failed + cached / 1000;
      const known = KNOWN_SECONDS[test.path.slice(root.length)];
      if (known !== undefined) return failed + known;
      // Unknown: after every known file, larger files first (as jest does without a cache).
      return failed + (test.context.hasteFS.getSize(test.path) ?? 0) / 1e9;
    };
    const weights = new Map(tests.map((test) => [test, weight(test)]));
    return [...tests].sort((a, b) => weights.get(b) - weights.get(a));
  }
}

module.exports = LongestFirstSequencer;
