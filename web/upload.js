// upload.js — uploads from the page: the upload button, the drop zone and drops anywhere
// on the window; several models with their external data files; one .onnx alone goes
// structure first (docs/web.md, first.js, weights.js); the upload card with progress,
// errors and the token form.

import { dataLocation, gzipped, setToken, upload } from './api.js';
import { fileProblem } from './filecheck.js';
import { serverHas, structures, structureWorker } from './first.js';
import { DEFAULTS } from './route.js';
import { h, clear, fmtBytes, shortId } from './util.js';
import { bundleOf, sendWeights } from './weights.js';

const $ = (id) => document.getElementById(id);

// navigate(patch, {model}) changes the route (model: patch.id names a model, its drawing
// is asked for at once); modelId(): the model shown; names: the file names of
// models uploaded here; announce(text); compareFiles(files): a drop on the Compare zone;
// showWhole(structureId, id): the whole model is on the server, show it instead of its
// structure; overlayFiles(files): a drop of a profile (.json, .csv) on an open model, true
// when taken as an overlay (heat.js), else the files are uploaded as models.
// Answers {closeCard, closeCardIfDone, finishedCardOpen}.
export function initUpload({ navigate, modelId, names, announce, compareFiles, showWhole, overlayFiles }) {
  const fileInput = $('file-input');
  const uploadCard = $('upload-card');
  const uploadState = { abort: null, done: true, files: null, following: false };

  $('btn-upload').addEventListener('click', () => fileInput.click());
  $('dropzone').addEventListener('click', () => fileInput.click());
  $('dropzone').addEventListener('keydown', (e) => {
    if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); fileInput.click(); }
  });
  fileInput.addEventListener('change', () => {
    const files = [...fileInput.files];
    fileInput.value = '';
    uploadFiles(files);
  });

  // Drag and drop anywhere on the window.
  let dragDepth = 0;
  const hasFiles = (e) => e.dataTransfer && [...e.dataTransfer.types].includes('Files');
  window.addEventListener('dragenter', (e) => {
    if (!hasFiles(e)) return;
    e.preventDefault();
    dragDepth++;
    $('drop-overlay-text').textContent = modelId()
      ? 'Drop a model (.onnx) to upload it, or a profile or node data (.json, .csv) to colour this one'
      : 'Drop to upload';
    $('drop-overlay').hidden = false;
    $('dropzone').classList.add('over');
  });
  window.addEventListener('dragover', (e) => { if (hasFiles(e)) { e.preventDefault(); e.dataTransfer.dropEffect = 'copy'; } });
  window.addEventListener('dragleave', (e) => {
    if (!hasFiles(e)) return;
    if (--dragDepth <= 0) { dragDepth = 0; $('drop-overlay').hidden = true; $('dropzone').classList.remove('over'); }
  });
  window.addEventListener('drop', (e) => {
    if (!hasFiles(e)) return;
    e.preventDefault();
    dragDepth = 0;
    $('drop-overlay').hidden = true;
    $('dropzone').classList.remove('over');
    if (e.target.closest && e.target.closest('#compare-drop')) { compareFiles(e.dataTransfer.files); return; }
    const files = [...e.dataTransfer.files];
    if (overlayFiles && overlayFiles(files)) return;
    uploadFiles(files);
  });

  $('upload-cancel').addEventListener('click', () => {
    if (uploadState.abort && (!uploadState.done || uploadState.following)) uploadState.abort();
    else hideUploadCard();
  });
  $('upload-token').addEventListener('submit', (e) => {
    e.preventDefault();
    setToken($('token-input').value.trim());
    $('token-input').value = '';
    $('upload-token').hidden = true;
    if (uploadState.files) uploadFiles(uploadState.files);
  });

  function hideUploadCard() { uploadCard.hidden = true; }

  function setUploadDetail(...parts) { clear($('upload-detail')).append(...parts.filter(Boolean)); }

  // Split a selection into models (.onnx) and data files (external data, sent with each
  // model); a lone file of another kind (a TensorProto .pb) is uploaded as it is.
  async function uploadFiles(files) {
    if (!files.length || !uploadState.done) return;
    if (uploadState.following && uploadState.abort) uploadState.abort(); // a new upload ends the last one's weights
    let models = files.filter((f) => /\.onnx$/i.test(f.name));
    if (!models.length) models = files.length === 1 ? files : [];
    const extra = files.filter((f) => !models.includes(f));
    uploadState.files = files;
    uploadCard.hidden = false;
    uploadCard.classList.remove('error', 'following', 'warning');
    for (const k of ['structureBytes', 'sentBytes', 'structureId', 'fileBytes', 'weights', 'toGraph', 'walkMs', 'hashMs']) delete uploadCard.dataset[k];
    $('upload-token').hidden = true;
    if (!models.length) {
      uploadCard.classList.add('error');
      $('upload-name').textContent = `${files.length} files`;
      setUploadDetail(h('span', { class: 'err-title', text: 'No .onnx file among them' }), 'Choose the model file (.onnx) together with its external data files.');
      return;
    }
    // a file that is plainly no model is told here, before anything is sent
    for (const f of models) {
      const problem = await fileProblem(f);
      if (!problem) continue;
      uploadCard.classList.add('error');
      $('upload-progress').hidden = true;
      $('upload-name').textContent = f.name;
      setUploadDetail(h('span', { class: 'err-title', text: problem }),
        h('span', { class: 'err-detail', text: `Nothing was sent. Choose the model's .onnx file (${fmtBytes(f.size)} chosen).` }));
      announce(`${f.name}: ${problem}`);
      return;
    }
    const extraNote = extra.length
      ? h('span', { class: 'note-ok', text: `With ${extra.length} data file${extra.length === 1 ? '' : 's'}: ${extra.map(dataLocation).join(', ')}` })
      : null;
    let last = null;
    // one .onnx (with its data files or not): its structure first (docs/web.md)
    if (models.length === 1 && /\.onnx$/i.test(models[0].name) && typeof Worker !== 'undefined' && structureFirstOn()) {
      await structureFirst(models[0], extra);
      return;
    }
    for (const [i, f] of models.entries()) {
      const res = await uploadOne(f, extra, models.length > 1 ? `(${i + 1} of ${models.length}) ` : '', extraNote);
      if (!res) return;
      last = res;
    }
    if (last) openUploaded(last, extraNote);
  }

  function openUploaded(res, ...notes) {
    setUploadDetail(`${res.status === 201 ? 'Stored' : 'Already stored'} · opening it…`, ...notes);
    // the card closes once the graph is drawn (loadGraph), or now if it already was
    return navigate({ id: res.body.id, opts: { ...DEFAULTS }, expand: [], unfold: [], node: null, value: null, tensor: null },
      { model: res.body.kind === 'model' }).then(() => {
      if (uploadState.done && !uploadState.following && !cardStays()) hideUploadCard();
      else if (uploadState.done && !uploadState.following && !uploadCard.classList.contains('error')) setUploadDetail(`${res.status === 201 ? 'Stored' : 'Already stored'} · shown`, ...notes);
    });
  }

  // An error, or a warning to read (data files the model names, not chosen), keeps the
  // card open until it is closed.
  const cardStays = () => uploadCard.classList.contains('error') || uploadCard.classList.contains('warning');

  // The data files a model's tensors name (structure.js's walk) when none was chosen with
  // it: said on the card, which stays (a model.onnx sent without its .data file was stored
  // with no word, and only a weight's preview failed later; issue 39).  Null when none.
  function missingData(file, external) {
    if (!external || !external.length) return null;
    uploadCard.classList.add('warning');
    const one = external.length === 1;
    const text = `${file.name} keeps its weights in ${external.join(', ')}, which ${one ? 'was' : 'were'} not chosen: the graph is shown, but its weights cannot be previewed. To send them, choose the .onnx together with its data file${one ? '' : 's'} (select or drop them all at once).`;
    announce(text);
    return h('span', { class: 'note-warn', id: 'data-missing', text });
  }

  // Off in this browser with localStorage['onnxviz.structureFirst'] = 'off' (the bench's
  // anchor, the whole file as before).
  function structureFirstOn() {
    try { return localStorage.getItem('onnxviz.structureFirst') !== 'off'; } catch { return true; }
  }

  // The SHA-256 of files this browser hashed before, by name, size and modification time
  // (localStorage 'onnxviz.hashes', the 256 latest): reopening a model of gigabytes asks
  // the server at once instead of hashing it all again (a minute per 4 GB here).  A file
  // changed without its size or time changing would be named by its old hash: the server
  // then holds that other model (it is shown), or refuses the last part of the upload
  // (422 checksum_mismatch): the entry is dropped and the file hashed.
  const HASHES = 'onnxviz.hashes';
  const hashKey = (f) => `${f.name}\u0000${f.size}\u0000${f.lastModified}`;
  function knownHashes() {
    try { const o = JSON.parse(localStorage.getItem(HASHES) || '{}'); return o && typeof o === 'object' ? o : {}; } catch { return {}; }
  }
  function knownHash(f) {
    const v = knownHashes()[hashKey(f)];
    return Array.isArray(v) && /^[0-9a-f]{64}$/.test(v[0]) ? v[0] : null;
  }
  function rememberHash(f, hex) {
    try {
      const o = knownHashes();
      if (hex) o[hashKey(f)] = [hex, Date.now()]; else delete o[hashKey(f)];
      const keys = Object.keys(o);
      if (keys.length > 256) keys.sort((a, b) => o[a][1] - o[b][1]).slice(0, keys.length - 256).forEach((k) => delete o[k]);
      localStorage.setItem(HASHES, JSON.stringify(o));
    } catch { /* storage full or off: hash next time */ }
  }
  const HASH_WAIT_MS = 3000; // the most the hash waits for the structure's drawing
  // f's SHA-256: remembered, or hashed by the worker (and remembered).
  async function hashOf(f, hashWith) {
    const known = knownHash(f);
    if (known) return { hex: known, remembered: true };
    const hex = await hashWith();
    rememberHash(f, hex);
    return { hex, remembered: false };
  }

  // Structure first (issue 23): the worker cuts the weights out, the structure goes up and
  // is drawn; then the file's SHA-256 asks the server whether it holds the whole model
  // (the listing), and otherwise the weights follow (weights.js).  Either way the page then moves
  // to the whole model's id and keeps the view.  A single file whose hash is not
  // remembered does not wait for it (issue 37, decision 97): its weights go at once while
  // it is hashed, and stop (the upload deleted) if the hash names a model the server has.
  // A file the walk cannot read, and a structure the server refuses, go up as they are:
  // the server's message names the file's own bytes.
  // With data files (a model with external data), the model file alone is the structure and
  // the data files are the weights (a bundle: web/weights.js).
  async function structureFirst(file, data = [], rehash = false) {
    const t0 = performance.now();
    $('upload-name').textContent = file.name;
    $('upload-progress').hidden = true;
    uploadState.done = false;
    setUploadDetail('Reading the structure…');
    announce(`Reading the structure of ${file.name}…`);
    const sw = structureWorker(file);
    let s;
    if (data.length) s = { bytes: file, ms: 0 }; // the model file is the structure as it is
    else try { s = await sw.read(); } catch (e) { s = { bytes: null, reason: e.message }; }
    const total = file.size + data.reduce((n, d) => n + d.size, 0);
    const warn = data.length ? null : missingData(file, s.external);
    if (!s.bytes) {
      sw.close();
      uploadCard.dataset.structureBytes = String(file.size);
      const res = await uploadOne(file, [], '', warn);
      if (res) openUploaded(res, warn);
      return;
    }
    const structure = data.length ? file : new File([s.bytes], file.name, { type: 'application/octet-stream' });
    uploadCard.dataset.structureBytes = String(structure.size);
    uploadCard.dataset.fileBytes = String(total);
    uploadCard.dataset.walkMs = String(Math.round(s.ms));
    // gzip'd: a server that does not take the coding (415) gets the structure plain
    let encoded = await gzipped(structure);
    uploadCard.dataset.sentBytes = String(encoded ? encoded.size : structure.size);
    const gz = () => (encoded ? `sent gzip'd as ${fmtBytes(encoded.size)}` : '');
    const sizes = () => h('span', { class: 'note-ok', id: 'structure-sizes', text: data.length
      ? `Model file ${fmtBytes(structure.size)} of ${fmtBytes(total)}${encoded ? ` (${gz()})` : ''}, then ${data.length} data file${data.length === 1 ? '' : 's'}: ${data.map(dataLocation).join(', ')}`
      : `Structure ${fmtBytes(structure.size)} of ${fmtBytes(file.size)} (read in ${Math.round(s.ms)} ms${encoded ? `, ${gz()}` : ''})` });
    // listed apart from the whole model that follows (two entries of one name, the same
    // node count, told nothing apart in the home list; issue 39)
    const listName = `${file.name} (${data.length ? 'without its data' : 'structure only'})`;
    let res = await uploadOne(structure, [], '', sizes(), { refused: () => 'refused', encoded, unsupported: () => 'plain', listName });
    if (res === 'plain') {
      encoded = null;
      uploadCard.dataset.sentBytes = String(structure.size);
      res = await uploadOne(structure, [], '', sizes(), { refused: () => 'refused', listName });
    }
    if (res === 'refused') { // the server judges the file itself
      sw.close();
      uploadCard.dataset.structureBytes = String(file.size);
      const whole = await uploadOne(file, data, '', null);
      if (whole) openUploaded(whole, null);
      return;
    }
    if (!res) { sw.close(); return; }
    const sid = res.body.id;
    uploadCard.dataset.structureId = sid;
    const info = { name: file.name, size: total, bytes: structure.size, state: 'checking whether the server holds them', full: null, toGraph: 0 };
    structures.set(sid, info);
    uploadState.following = true;
    uploadCard.classList.add('following');
    uploadCard.dataset.weights = 'checking';
    const state = (text, step) => {
      info.state = text;
      if (step) uploadCard.dataset.weights = step;
      if (!uploadCard.hidden && uploadState.following) setUploadDetail(sizes(), h('span', { id: 'weights-state', text: `Weights: ${text}` }), warn);
      const m = document.getElementById('weights-missing');
      if (m && modelId() === sid) m.lastChild.textContent = ` — this is the structure of ${info.name} (${fmtBytes(info.bytes)} of ${fmtBytes(info.size)}); ${text}.`;
    };
    const shown = openUploaded(res, sizes(), warn).then(() => { info.toGraph = performance.now() - t0; uploadCard.dataset.toGraph = String(Math.round(info.toGraph)); });
    let abort = () => sw.close();
    uploadState.abort = () => abort();
    const done = (text, step) => {
      state(text, step);
      uploadState.following = false;
      uploadCard.classList.remove('following');
      $('upload-cancel').setAttribute('aria-label', 'Close');
    };
    const used = []; // files named by a remembered hash
    const progress = (t2, hashed) => (loaded, total) => {
      const bar = $('upload-progress'); // the bar follows the weights now
      bar.hidden = false;
      bar.value = total ? (100 * loaded) / total : 0;
      const secs = (performance.now() - t2) / 1000;
      const h = hashed();
      state(`arriving: ${Math.floor((100 * loaded) / total)}% · ${fmtBytes(loaded)} of ${fmtBytes(total)}${secs > 0.3 ? ` · ${fmtBytes(loaded / secs)}/s` : ''}${h < 1 ? ` · hashed ${Math.floor(100 * h)}%` : ''}`, 'sending');
    };
    // the drawing, or HASH_WAIT_MS, whichever comes first: the hash waits for it.  On two
    // cores the hash took the CPU the graph's fetch and drawing needed (the worker hashing,
    // the browser copying the file's slices), and a graph shown sooner is worth more than
    // weights started half a second sooner.  A remembered hash costs nothing and does not wait.
    const drawn = () => Promise.race([shown.catch(() => {}), new Promise((r) => setTimeout(r, HASH_WAIT_MS))]);
    // The weights sent while the files are hashed (w: sendWeights's), the whole model
    // named by the id `named` resolves to (the file's or the bundle's).
    const whileHashing = async (w, named, what) => {
      named.catch(() => {}); // (a failed hash fails w: not unhandled meanwhile)
      abort = () => { sw.close(); w.abort(); };
      const r = await w.promise;
      const id = await named;
      if (r.id !== id) throw new Error(`the server stored the ${what} as ${shortId(r.id)}, not ${shortId(id)}`);
      if (r.held) done('the server already holds this model: the rest is not sent', 'held');
      else done('sent: the page now shows the whole model', 'sent');
      info.full = id;
      names.set(id, file.name);
      showWhole(sid, id);
    };
    try {
      if (!data.length && !knownHash(file)) {
        delete uploadCard.dataset.hashRemembered;
        let share = 0;
        const hash = drawn().then(() => {
          const t1 = performance.now();
          return hashOf(file, () => sw.sha256((n) => { share = n / file.size; })).then((h) => {
            share = 1;
            uploadCard.dataset.hashMs = String(Math.round(performance.now() - t1));
            sw.close();
            info.sha256 = h.hex;
            return h.hex;
          });
        });
        await whileHashing(sendWeights({ file, hash, held: serverHas, structureId: sid, onProgress: progress(performance.now(), () => share) }), hash, 'file');
        return;
      }
      // A bundle whose hashes are not all remembered: its data files go while the files
      // are hashed (each unnamed, named by its last part; the manifest once every hash is
      // there), and stop when the bundle's id names a model the server has.
      if (data.length && [file, ...data].some((f) => !knownHash(f))) {
        delete uploadCard.dataset.hashRemembered;
        let share = 0, hashed = 0;
        const t1 = drawn().then(() => performance.now());
        let chain = t1; // the worker hashes one file after the other, the model file first
        const hashOne = (f) => (chain = chain.then(() => hashOf(f, () => sw.sha256Of(f, (n) => { share = (hashed + n) / total; })))
          .then((hd) => { hashed += f.size; if (hd.remembered) used.push(f); return hd.hex; }));
        const modelHash = hashOne(file);
        const files = data.map((d) => ({ file: d, location: dataLocation(d), size: d.size, hash: hashOne(d) }));
        const ready = Promise.all([modelHash, t1, ...files.map((f) => f.hash)]).then(([mhex, start, ...hexes]) => {
          share = 1;
          files.forEach((f, i) => { f.sha256 = hexes[i]; });
          uploadCard.dataset.hashMs = String(Math.round(performance.now() - start));
          if (used.length) uploadCard.dataset.hashRemembered = '1';
          sw.close();
          const b = bundleOf({ sha256: mhex, size: file.size }, files);
          info.sha256 = b.id;
          return b;
        });
        // (a failed hash fails the transfer that waits for it: not unhandled meanwhile)
        for (const x of [ready, ...files.map((f) => f.hash)]) x.catch(() => {});
        await whileHashing(sendWeights({ file, held: serverHas, structureId: sid, bundle: { files, ready }, onProgress: progress(performance.now(), () => share) }), ready.then((b) => b.id), 'bundle');
        return;
      }
      // Every hash is remembered (a file to hash took one of the ways above): the model's
      // id at once, with no hashing and no wait.
      const t1 = performance.now();
      used.push(file, ...data);
      let hex = knownHash(file);
      let bundle = null;
      if (data.length) { // the bundle's id: every file's hash in its manifest
        const files = data.map((d) => ({ file: d, location: dataLocation(d), size: d.size, sha256: knownHash(d) }));
        bundle = { files, ...bundleOf({ sha256: hex, size: file.size }, files) };
        hex = bundle.id;
      }
      uploadCard.dataset.hashMs = String(Math.round(performance.now() - t1));
      uploadCard.dataset.hashRemembered = '1';
      sw.close();
      info.sha256 = hex;
      if (await serverHas(hex)) {
        done('the server already holds this model: nothing more is sent', 'held');
      } else {
        const w = sendWeights({ file, sha256: hex, structureId: sid, bundle, onProgress: progress(performance.now(), () => 1) });
        abort = w.abort;
        const { id } = await w.promise;
        if (id !== hex) throw new Error(`the server stored the file as ${shortId(id)}, not ${shortId(hex)}`);
        done('sent: the page now shows the whole model', 'sent');
      }
      info.full = hex;
      names.set(hex, file.name);
      showWhole(sid, hex);
    } catch (e) {
      sw.close();
      // a remembered hash may be what failed: forget it; a file that changed since (or an
      // upload resumed by the file's name that held another file's bytes) is hashed and
      // sent again, once
      if (used.length && e.code !== 'aborted') used.forEach((f) => rememberHash(f, null));
      if (e.code === 'checksum_mismatch' && !rehash) return structureFirst(file, data, true);
      done(e.code === 'aborted' ? 'not sent (cancelled)' : `not sent: ${e.message}`, 'failed');
    }
  }

  // listName: what the server lists it as (default the file's name).
  function uploadOne(file, data, prefix, extraNote, { refused: onRefused, encoded = null, unsupported: onUnsupported, listName = file.name } = {}) {
    const bar = $('upload-progress');
    $('upload-name').textContent = `${prefix}${file.name}`;
    bar.max = 100;
    bar.value = 0;
    bar.hidden = false;
    delete bar.dataset.sent;
    uploadState.done = false;
    $('upload-cancel').setAttribute('aria-label', 'Cancel upload');
    const t0 = performance.now();
    let lastAnnounce = 0;
    setUploadDetail(`Uploading · 0 of ${fmtBytes(encoded ? encoded.size : file.size + data.reduce((n, d) => n + d.size, 0))}`, extraNote);
    announce(`Uploading ${file.name}…`);
    const up = upload(file, {
      data,
      encoded,
      name: listName,
      onProgress: (loaded, total) => {
        const pct = total ? Math.min(100, (100 * loaded) / total) : 0;
        bar.value = pct;
        const secs = (performance.now() - t0) / 1000;
        const rate = secs > 0.3 ? ` · ${fmtBytes(loaded / secs)}/s` : '';
        setUploadDetail(`Uploading · ${fmtBytes(loaded)} of ${fmtBytes(total)} · ${Math.floor(pct)}%${rate}`, extraNote);
        if (performance.now() - lastAnnounce > 2000) { lastAnnounce = performance.now(); announce(`Uploading: ${Math.floor(pct)}%`); }
      },
      onSent: () => {
        bar.value = 100;
        bar.dataset.sent = '1';
        setUploadDetail('Uploaded · the server is checking the model…', extraNote);
        announce('Upload complete; the server is checking the model.');
      },
    });
    uploadState.abort = up.abort;
    return up.promise.then((res) => {
      uploadState.done = true;
      $('upload-cancel').setAttribute('aria-label', 'Close');
      if (res.body && res.body.id) names.set(res.body.id, listName);
      announce(`${file.name}: ${res.status === 201 ? 'stored' : 'already stored'}.`);
      return res;
    }, (e) => {
      uploadState.done = true;
      $('upload-cancel').setAttribute('aria-label', 'Close');
      uploadCard.classList.add('error');
      bar.value = 0;
      if (e.code === 'aborted') {
        setUploadDetail(h('span', { class: 'err-title', text: 'Upload cancelled' }));
        announce('Upload cancelled.');
        return null;
      }
      if (e.status === 401) $('upload-token').hidden = false;
      bar.hidden = true;
      // 415: a server that decodes no gzip; 413 inflate_ratio_exceeded: one whose
      // --inflate-ratio-limit this structure's compression passes (docs/api.md): plain then
      const plainAgain = e.status === 415 || (e.status === 413 && e.code === 'inflate_ratio_exceeded');
      if (plainAgain && encoded && onUnsupported) { uploadCard.classList.remove('error'); uploadState.done = false; return onUnsupported(e); }
      const refused = e.status === 400 || e.status === 422;
      if (refused && onRefused) { uploadCard.classList.remove('error'); uploadState.done = false; return onRefused(e); }
      // what a person can act on first (the server's headline), the exact message below
      setUploadDetail(
        h('span', { class: 'err-title', text: e.headline || (refused ? 'Not an ONNX model this server accepts' : 'Upload failed') }),
        h('span', { class: 'err-detail', text: `${e.message}${e.where() ? ` ${e.where()}` : ''}` }),
        e.code ? h('span', { class: 'err-where', text: `error code ${e.code}${e.status ? ` (HTTP ${e.status})` : ''}` }) : null);
      announce(`Upload failed: ${e.headline || e.message}`);
      return null;
    });
  }

  return {
    closeCard: hideUploadCard,
    // once the uploaded model is drawn: the card of a finished upload closes
    closeCardIfDone: () => {
      if (uploadState.done && !uploadState.following && !cardStays()) hideUploadCard();
    },
    finishedCardOpen: () => !uploadCard.hidden && uploadState.done,
  };
}
