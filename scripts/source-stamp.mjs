/**
 * What a server build was made from: the hash of every project file esbuild read for it (its
 * metafile's inputs outside node_modules) and of package-lock.json (the versions of the packages it
 * compiled in or imports). build-server.mjs writes it beside the bundle; kassa.mjs compares it with
 * the files as they are now, so a command never runs a bundle older than the checkout.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export const STAMP_FILE = 'dist/server/source-stamp.json';

/** The hash of these files' paths and contents, in the order given (relative to `root`). */
export function hashOf(root, files) {
  const hash = createHash('sha256');
  for (const file of files) {
    let content;
    try {
      content = readFileSync(join(root, file));
    } catch {
      content = Buffer.from('\0missing');
    }
    hash.update(`${file}\0${content.length}\0`).update(content);
  }
  return hash.digest('hex');
}

/** The stamp of a build whose esbuild metafile is `metafile`. */
export function stampOf(root, metafile) {
  const files = [...Object.keys(metafile.inputs).filter((path) => !path.includes('node_modules/')), 'package-lock.json'].sort();
  return { files, hash: hashOf(root, files) };
}

/** Whether the build in `root` was made from the files as they are now. */
export function buildIsCurrent(root) {
  let stamp;
  try {
    stamp = JSON.parse(readFileSync(join(root, STAMP_FILE), 'utf8'));
  } catch {
    return false;
  }
  return Array.isArray(stamp.files) && typeof stamp.hash === 'string' && hashOf(root, stamp.files) === stamp.hash;
}
