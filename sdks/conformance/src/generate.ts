// Makes every vector file, in memory. vectors.spec.ts compares them with the committed files
// (and writes them with UPDATE_VECTORS=1).
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { activationVectors } from './activations';
import { checkoutVectors } from './checkouts';
import { licenseVectors } from './licenses';
import { publicKeyVectors } from './public-keys';
import { revocationVectors } from './revocation-lists';
import { SignaturePool } from './signature-pool';
import { signedAnswerVectors } from './signed-answers';
import { loadTestKeys } from './test-keys';
import type { VectorFile } from './vector-file';

export const VECTORS_DIR = path.join(__dirname, '..');

/** The committed vector files: name → text. */
export function readVectorFiles(): Record<string, string> {
  const names = readdirSync(VECTORS_DIR).filter((name) => name.endsWith('.json'));
  return Object.fromEntries(
    names.sort().map((name) => [name, readFileSync(path.join(VECTORS_DIR, name), 'utf8')]),
  );
}

/** Every vector file, as its committed text should read. */
export function generateVectorFiles(options: { createKeys: boolean }): Record<string, string> {
  const committed = readVectorFiles();
  const context = {
    keys: loadTestKeys(options.createKeys),
    pool: SignaturePool.fromVectorFiles(Object.values(committed)),
  };
  const files: Record<string, VectorFile> = {
    'licenses.json': licenseVectors(context),
    'checkouts.json': checkoutVectors(context),
    'revocation-lists.json': revocationVectors(context),
    'signed-answers.json': signedAnswerVectors(context),
    'activations.json': activationVectors(context),
    'public-keys.json': publicKeyVectors(context),
  };
  return Object.fromEntries(
    Object.entries(files).map(([name, file]) => [name, `${JSON.stringify(file, null, 2)}\n`]),
  );
}
