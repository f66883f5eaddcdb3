/** The most entity tags of an If-None-Match that are looked at; a list longer than that is unusual. */
const MAX_TAGS = 16;
const VERSION_TAG = /^(?:W\/)?"(\d{1,15})"$/;

/** A revocation list's entity tag: its version, which names its content. */
export const versionTag = (version: number): string => `"${version}"`;

/**
 * The list versions an `If-None-Match` names (`"12"`, `W/"12"`, comma separated). Tags that are
 * not a version, and `*`, name none: the list is then sent in full, which is always correct.
 */
export function versionsOf(ifNoneMatch: string | undefined): number[] {
  if (!ifNoneMatch) return [];
  const versions: number[] = [];
  for (const tag of ifNoneMatch.split(',').slice(0, MAX_TAGS)) {
    const match = VERSION_TAG.exec(tag.trim());
    if (match) versions.push(Number(match[1]));
  }
  return versions;
}
