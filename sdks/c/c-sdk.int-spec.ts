import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const SDK = __dirname;
const VECTORS = join(__dirname, '..', 'conformance');
// Builds are slow on a busy machine: ten minutes for each step at most.
const STEP_MS = 600_000;

interface Output {
  stdout: string;
  stderr: string;
}

/** Runs a command and fails with its whole output when it fails. */
async function step(
  command: string,
  args: string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv } = {},
): Promise<Output> {
  try {
    return await run(command, args, { ...options, maxBuffer: 64 * 1024 * 1024, timeout: STEP_MS });
  } catch (error) {
    const failed = error as Error & Partial<Output>;
    throw new Error(
      `${command} ${args.join(' ')} failed: ${failed.message}\n${failed.stdout ?? ''}\n${failed.stderr ?? ''}`,
    );
  }
}

/** The first file of this name under dir. */
function find(dir: string, name: string): string | undefined {
  for (const entry of readdirSync(dir)) {
    const path = join(dir, entry);
    if (entry === name) return path;
    if (statSync(path).isDirectory()) {
      const found = find(path, name);
      if (found) return found;
    }
  }
  return undefined;
}

interface LicenseVectorFile {
  keys: Record<string, { pem?: string }>;
  vectors: {
    id: string;
    key: string;
    input: { text?: string };
    options: { now?: number };
    expected: { license: { serial: string } };
  }[];
}

/** A C string literal of ASCII text (JSON's escapes for it are C's too). */
const cString = (text: string): string => JSON.stringify(text);

/**
 * What a C developer gets: the toolchain script, the CMake build with the tests under
 * AddressSanitizer and UndefinedBehaviorSanitizer (every conformance vector, the fuzz pass, the
 * header from C++), and the installed library, used by a program through pkg-config and through
 * CMake's find_package.
 */
describe('the C SDK', () => {
  const dir = mkdtempSync(join(tmpdir(), 'licensing-c-sdk-'));
  const build = join(dir, 'build');
  const prefix = join(dir, 'prefix');
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it(
    'has its toolchain: the script installs what is missing, and says nothing when nothing is',
    async () => {
      await step('bash', [join(SDK, 'scripts', 'ensure-toolchain.sh')]);
      const again = await step('bash', [join(SDK, 'scripts', 'ensure-toolchain.sh')]);
      expect(again).toEqual({ stdout: '', stderr: '' });
    },
    STEP_MS,
  );

  it(
    'builds with warnings as errors, and passes its tests under the sanitizers',
    async () => {
      await step('cmake', [
        '-S',
        SDK,
        '-B',
        build,
        '-DCMAKE_BUILD_TYPE=Debug',
        '-DLICV_SANITIZE=ON',
        '-DLICV_WERROR=ON',
      ]);
      await step('cmake', ['--build', build, '--parallel', '2']);
      const { stdout } = await step('ctest', ['--test-dir', build, '--output-on-failure', '--verbose']);
      expect(stdout).toMatch(/100% tests passed, 0 tests failed out of 3/);
      const all = /all\s+(\d+)\/(\d+) vectors passed/.exec(stdout);
      expect(all && all[1] === all[2] && Number(all[1]) > 0).toBe(true);
      expect(stdout).toMatch(/fuzz: \d+ iterations .* 0 failures/);
    },
    3 * STEP_MS,
  );

  it(
    'installs a header, a library, a pkg-config file and a CMake package that a program builds against',
    async () => {
      await step('cmake', ['--install', build, '--prefix', prefix]);
      const pc = find(prefix, 'licensing-verifier.pc');
      expect(pc).toBeDefined();
      expect(find(prefix, 'licensing_verifier.h')).toBeDefined();
      expect(find(prefix, 'liblicensing_verifier.a')).toBeDefined();

      const licenses = JSON.parse(readFileSync(join(VECTORS, 'licenses.json'), 'utf8')) as LicenseVectorFile;
      const vector = licenses.vectors.find((v) => v.id === 'ed25519/valid-pem')!;
      const pem = licenses.keys[vector.key]!.pem!;
      const app = join(dir, 'app');
      mkdirSync(app);
      writeFileSync(
        join(app, 'main.c'),
        `#include <stdio.h>
#include <string.h>
#include <licensing_verifier.h>

int main(void) {
  const char *pem = ${cString(pem)};
  const char *file = ${cString(vector.input.text!)};
  licv_keys *keys = NULL;
  licv_license_options options;
  licv_license_result *result = NULL;
  int valid;
  if (licv_keys_from_pem(pem, strlen(pem), &keys) != LICV_OK) return 2;
  licv_license_options_init(&options);
  options.use_now = 1;
  options.now = ${vector.options.now!};
  if (licv_verify_license(file, strlen(file), keys, &options, &result) != LICV_OK) return 3;
  valid = result->valid;
  printf("%s %s\\n", valid ? "valid" : licv_error_code_name(result->errors[0]), result->license->serial);
  licv_license_result_free(result);
  licv_keys_free(keys);
  return valid ? 0 : 1;
}
`,
      );
      writeFileSync(
        join(app, 'CMakeLists.txt'),
        `cmake_minimum_required(VERSION 3.16)
project(app LANGUAGES C)
find_package(LicensingVerifier REQUIRED)
add_executable(app main.c)
target_link_libraries(app PRIVATE LicensingVerifier::licensing_verifier)
`,
      );
      const expected = `valid ${vector.expected.license.serial}\n`;

      // pkg-config, from wherever the prefix is.
      const env = { ...process.env, PKG_CONFIG_PATH: join(pc!, '..') };
      const flags = (await step('pkg-config', ['--cflags', '--libs', 'licensing-verifier'], { env })).stdout
        .trim()
        .split(/\s+/);
      await step('cc', [
        '-std=c99',
        '-Wall',
        '-Werror',
        '-o',
        join(app, 'with-pkg-config'),
        join(app, 'main.c'),
        ...flags,
      ]);
      expect((await step(join(app, 'with-pkg-config'), [])).stdout).toBe(expected);

      // The README's example, pasted as it is: checked at the current time, the vector's license is
      // not valid yet (before 2027-02-28), valid, or expired (after 2027-03-31).
      const readme = readFileSync(join(SDK, 'README.md'), 'utf8');
      const example = /```c\n(#include[^`]*check_license[^`]*)```/.exec(readme)![1]!;
      writeFileSync(
        join(app, 'example.c'),
        `${example}\nint main(void) {\n  return check_license(${cString(pem)}, ${cString(vector.input.text!)});\n}\n`,
      );
      await step('cc', [
        '-std=c99',
        '-Wall',
        '-Werror',
        '-o',
        join(app, 'example'),
        join(app, 'example.c'),
        ...flags,
      ]);
      const checked = await run(join(app, 'example'), []).then(
        ({ stdout }) => ({ code: 0, stdout }),
        (error: { code: number; stdout: string }) => ({ code: error.code, stdout: error.stdout }),
      );
      expect([
        { code: 1, stdout: 'refused: not_yet_valid\n' },
        { code: 0, stdout: '' },
        { code: 1, stdout: 'refused: expired\n' },
      ]).toContainEqual(checked);

      // CMake's find_package.
      const appBuild = join(app, 'build');
      await step('cmake', ['-S', app, '-B', appBuild, `-DCMAKE_PREFIX_PATH=${prefix}`]);
      await step('cmake', ['--build', appBuild]);
      expect((await step(join(appBuild, 'app'), [])).stdout).toBe(expected);
    },
    3 * STEP_MS,
  );
});
