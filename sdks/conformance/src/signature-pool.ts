// ECDSA and RSA-PSS signatures are randomized: signing the same bytes twice gives two different
// signatures, both valid. To keep the committed vectors stable, a signature already committed is
// used again when it covers the same signing input and still verifies. Only a changed signing
// input (new claims, a new key) gets a fresh signature. Ed25519 is deterministic and needs none.

const COMPACT_JWS = /^[A-Za-z0-9_-]*\.[A-Za-z0-9_-]*\.[A-Za-z0-9_-]*$/;

export class SignaturePool {
  private readonly bySigningInput = new Map<string, Set<string>>();

  /** Collects every compact JWS found in the given vector files (any string value in them). */
  static fromVectorFiles(texts: string[]): SignaturePool {
    const pool = new SignaturePool();
    const visit = (value: unknown): void => {
      if (typeof value === 'string') pool.add(value);
      else if (Array.isArray(value)) value.forEach(visit);
      else if (typeof value === 'object' && value !== null) Object.values(value).forEach(visit);
    };
    for (const text of texts) visit(JSON.parse(text));
    return pool;
  }

  private add(text: string): void {
    const token = text.trim();
    if (!COMPACT_JWS.test(token)) return;
    const cut = token.lastIndexOf('.');
    const signingInput = token.slice(0, cut);
    const signature = token.slice(cut + 1);
    if (signature === '') return;
    const known = this.bySigningInput.get(signingInput) ?? new Set<string>();
    known.add(signature);
    this.bySigningInput.set(signingInput, known);
  }

  /**
   * The signature segment for `signingInput`: the first committed one (in file order) that
   * `verifies` accepts, or else the one `sign` makes now.
   */
  signature(signingInput: string, sign: () => Buffer, verifies: (signature: Buffer) => boolean): string {
    for (const known of this.bySigningInput.get(signingInput) ?? []) {
      if (verifies(Buffer.from(known, 'base64url'))) return known;
    }
    // Kept, so that every vector of this run that signs the same bytes gets the same signature.
    const made = sign().toString('base64url');
    this.bySigningInput.set(signingInput, new Set([made]));
    return made;
  }
}
