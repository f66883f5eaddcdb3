// Runs in every test file (setupFilesAfterEach): whatever the file created in its own database is
// dropped with it once the file is done.
import { dropTestDatabase } from './cleanup';

afterAll(async () => {
  await dropTestDatabase();
});
