// filecheck.js — a file that is plainly no ONNX model is told in the page before anything
// is sent (issue 39): an empty file, another format by its first bytes (an image, an
// archive, a checkpoint), text, or a name that says another framework's format.  The
// words are the server's and the CLI's (parser/headline.c, oxp_error_headline): what a
// person can act on, never the encoding's terms.  What this cannot tell (a model cut
// short, a damaged one) the server says in its error's "headline" (api.js).

const MAGIC = [
  [[0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], 'it is a PNG image'],
  [[0xff, 0xd8, 0xff], 'it is a JPEG image'],
  [[0x47, 0x49, 0x46, 0x38], 'it is a GIF image'],
  [[0x25, 0x50, 0x44, 0x46], 'it is a PDF document'],
  [[0x50, 0x4b, 0x03, 0x04], 'it is a zip archive (a PyTorch .pt/.pth checkpoint, a .npz or a .zip?): export the model to ONNX, or unpack the .onnx file'],
  [[0x1f, 0x8b], 'it is gzip-compressed: decompress it first (gunzip)'],
  [[0x89, 0x48, 0x44, 0x46, 0x0d, 0x0a, 0x1a, 0x0a], 'it is an HDF5 file (a Keras .h5 model?): convert it to ONNX first (tf2onnx)'],
  [[0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59], 'it is a NumPy array (.npy)'],
  [[0x47, 0x47, 0x55, 0x46], 'it is a GGUF model (llama.cpp), not ONNX'],
  [[0xfd, 0x37, 0x7a, 0x58, 0x5a], 'it is an xz archive: decompress it first'],
  [[0x42, 0x5a, 0x68], 'it is a bzip2 archive: decompress it first'],
  [[0x28, 0xb5, 0x2f, 0xfd], 'it is a zstd archive: decompress it first'],
];

// Names of other frameworks' files: what to do with them.
const EXTENSIONS = {
  pt: 'a .pt file is a PyTorch checkpoint: export the model to ONNX first (torch.onnx.export)',
  pth: 'a .pth file is a PyTorch checkpoint: export the model to ONNX first (torch.onnx.export)',
  ckpt: 'a .ckpt file is a training checkpoint: export the model to ONNX first',
  safetensors: 'a .safetensors file holds weights without a graph: export the model to ONNX',
  h5: 'a .h5 file is a Keras model: convert it to ONNX first (tf2onnx)',
  keras: 'a .keras file is a Keras model: convert it to ONNX first (tf2onnx)',
  tflite: 'a .tflite file is a TensorFlow Lite model: convert it to ONNX first (tf2onnx)',
  gguf: 'a .gguf file is a llama.cpp model, not ONNX',
  txt: 'a .txt file is text', md: 'a .md file is text', html: 'an .html file is a web page',
  png: 'a .png file is an image', jpg: 'a .jpg file is an image', jpeg: 'a .jpeg file is an image',
  zip: 'a .zip file is an archive: unpack the .onnx file from it',
};

// As parser/headline.c's looks_like_text: printable ASCII, tabs and line ends, and
// well-formed UTF-8 in the first 512 bytes.  A model starts with a control byte (0x08).
function looksLikeText(b) {
  const n = Math.min(b.length, 512);
  for (let i = 0; i < n;) {
    const c = b[i];
    const more = c < 0x80 ? 0 : (c & 0xe0) === 0xc0 ? 1 : (c & 0xf0) === 0xe0 ? 2 : (c & 0xf8) === 0xf0 ? 3 : 9;
    if (more === 0 && c < 0x20 && ![9, 10, 12, 13].includes(c)) return false;
    if (c === 0x7f || more === 9 || (more === 1 && c < 0xc2)) return false;
    for (let k = 1; k <= more && i + k < n; k++) if ((b[i + k] & 0xc0) !== 0x80) return false;
    i += 1 + more;
  }
  return n > 0;
}

function otherFormat(b) {
  for (const [magic, what] of MAGIC) if (magic.length <= b.length && magic.every((x, i) => b[i] === x)) return what;
  if (b.length >= 8 && b[4] === 0x54 && b[5] === 0x46 && b[6] === 0x4c && b[7] === 0x33) return 'it is a TensorFlow Lite model (.tflite): convert it to ONNX first (tf2onnx)';
  if (b.length >= 2 && b[0] === 0x80 && b[1] >= 2 && b[1] <= 5) return 'it is a Python pickle (a PyTorch checkpoint?): export the model to ONNX';
  if (b.length >= 10 && b[8] === 0x7b && b[9] === 0x22 && b[6] === 0 && b[7] === 0) return 'it is a safetensors file (weights without a graph), not an ONNX model';
  if (looksLikeText(b)) {
    let i = 0;
    while (i < b.length && [9, 10, 13, 32].includes(b[i])) i++;
    if (b[i] === 0x3c) return 'it looks like text (HTML or XML: a web page saved instead of the file?)';
    if (b[i] === 0x7b || b[i] === 0x5b) return 'it looks like JSON text';
    if (/^(version |https?:)/.test(String.fromCharCode(...b.slice(0, 8)))) return 'it looks like text (a Git LFS pointer or a link, not the file itself?)';
    return 'it looks like text';
  }
  return null;
}

// What is wrong with file f as a model, in a person's words, or null when it may be one
// (the server has the last word).  Reads the first 512 bytes.
export async function fileProblem(f) {
  if (f.size === 0) return 'the file is empty (0 bytes): was it saved or copied completely?';
  const b = new Uint8Array(await f.slice(0, 512).arrayBuffer());
  const other = otherFormat(b);
  if (other) return `this is not an ONNX model: ${other}`;
  const ext = (/\.([A-Za-z0-9]+)$/.exec(f.name || '') || [])[1];
  const said = ext && EXTENSIONS[ext.toLowerCase()];
  if (said) return `this is not an ONNX model: ${said}`;
  return null;
}
