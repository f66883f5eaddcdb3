// Runs in every test file (setupFilesAfterEach): whatever the file created in its own database is
// dropped with it once the file is done. A unit test (`*.spec.ts`) does no I/O and creates no
// database, so it is spared the connection to PostgreSQL.
import { dropTestDatabase } from './cleanup';

const isUnitTest = /\.spec\.ts$/.test(expect.getState().testPath ?? '');

afterAll(async () => {
  if (!isUnitTest) await dropTestDatabase();
});
