// The Python SDK's own suite, run from jest so that `npm test` (and CI) covers it: the toolchain
// script installs what Debian's Python lacks (python3-cryptography, python3-pytest, the build
// tools), then pytest runs every conformance vector, the fuzz pass, the README's example, the
// online client against a scripted server, and the packaging. A failing pytest fails this spec,
// with pytest's output. The tests marked `online` need the platform: online.int-spec.ts runs them.
import { ensurePython, pytest } from './run-python';

describe('the Python SDK (sdks/python)', () => {
  it('passes its pytest suite', async () => {
    const python = await ensurePython();
    // No skipped packaging test.
    const done = await pytest(python, ['-m', 'not online', 'tests'], { LICENSING_REQUIRE_BUILD: '1' });
    expect(done.out).toMatch(/\d+ passed/);
    expect(done.out).not.toMatch(/skipped|failed|error/i);
  }, 900_000);
});
