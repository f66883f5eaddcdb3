// The committed vectors are what the platform's own signing code makes today. The spec makes them
// again in memory and fails when a committed file differs: run it with UPDATE_VECTORS=1 to write
// them (and commit the result). Randomized signatures (ES256, PS256) are kept from the committed
// files while they cover the same bytes, so an unchanged vector stays byte for byte the same.
import { rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { generateVectorFiles, readVectorFiles, VECTORS_DIR } from './src/generate';

const UPDATE = process.env['UPDATE_VECTORS'] === '1';

describe('conformance vectors', () => {
  const generated = generateVectorFiles({ createKeys: UPDATE });

  if (UPDATE) {
    it('writes the vector files (UPDATE_VECTORS=1)', () => {
      for (const name of Object.keys(readVectorFiles())) {
        if (!(name in generated)) rmSync(path.join(VECTORS_DIR, name));
      }
      for (const [name, text] of Object.entries(generated)) writeFileSync(path.join(VECTORS_DIR, name), text);
    });
    return;
  }

  it('has no committed file the generator does not make', () => {
    expect(Object.keys(readVectorFiles()).sort()).toEqual(Object.keys(generated).sort());
  });

  it.each(Object.keys(generated))('%s is up to date (else run the spec with UPDATE_VECTORS=1)', (name) => {
    const committed = readVectorFiles()[name];
    // Vector by vector first, so that a failure names the vector that changed.
    const ids = (text: string | undefined) =>
      text === undefined ? [] : (JSON.parse(text) as { vectors: { id: string }[] }).vectors.map((v) => v.id);
    expect(ids(committed)).toEqual(ids(generated[name]));
    const byId = (text: string) =>
      Object.fromEntries((JSON.parse(text) as { vectors: { id: string }[] }).vectors.map((v) => [v.id, v]));
    const before = byId(committed!);
    for (const [id, vector] of Object.entries(byId(generated[name]!)))
      expect([id, before[id]]).toEqual([id, vector]);
    expect(committed).toBe(generated[name]);
  });
});
