// weights.js — the weights follow a structure upload (issue 23, part 2).
//
// The boundary: sendWeights({file, structure, sha256, onProgress}) answers {promise,
// abort}; the promise resolves to the id of the whole model (the file's SHA-256) once the
// server holds it.  `structure` is structure.js's answer: `ranges` lists every payload
// cut out ({tensor, offset, length} in the file), which is what a resumable transfer of
// the weights alone sends.
//
// Until the server takes weights in parts, they follow as the whole file through the
// one-shot POST /models: the server then holds exactly what a plain upload gives (same
// id, same previews), and the page moves to it (app.js keeps the view).

import { upload } from './api.js';

export function sendWeights({ file, onProgress }) {
  const up = upload(file, { onProgress });
  return {
    promise: up.promise.then((res) => res.body.id),
    abort: up.abort,
  };
}
