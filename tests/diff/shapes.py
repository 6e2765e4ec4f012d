#!/usr/bin/python3
"""shapes.py — onnxviz's shape inference against onnx.shape_inference on the corpus.

For every corpus model (../shared/corpus/models/**/*.onnx, or $ONNXVIZ_CORPUS/models) run
onnx.shape_inference.infer_shapes (strict_mode=False; once plain and once with
data_prop=True) and $BUILD/tools/shapedump, and compare value by value, scope by scope:

  conflict  a value both sides know with different elem types, different ranks, two
            different integers for a dim, or an integer against a symbol / two different
            symbols.  Unknown on either side is never a conflict; symbols onnx makes up
            ("unk__N") count as unknown; a symbol the model itself declares for a dim we
            infer under another symbol is a second name, not a conflict.
  missing   a value onnx types that we know nothing about (neither inferred nor declared);
  weaker    a value we know less about than onnx (no rank, or an unknown dim where onnx
            has an integer or a real symbol), counting what the model declares as known;
  sharper   a value with a rank or dim we know and onnx leaves unknown.

Our inferred types are also checked against the types the model itself declares
(value_info, graph outputs): an integer or rank or elem-type disagreement there is a
conflict too.  Failures of the oracle itself are listed apart and do not fail the run.
Exit status 1 when any conflict was found or shapedump failed.

Usage: shapes.py [--verbose] [--only SUBSTRING]  (run from the repository root)
"""
import glob
import json
import os
import re
import subprocess
import sys
import time

import onnx
from onnx import shape_inference

IDENT = re.compile(r'^[A-Za-z_][A-Za-z0-9_]{0,63}$')
FOCUS = ['transformer_12x12', 'squeezenet1_1', 'silero_vad_v5', 'light/']


def dim_of(d):
    if d.HasField('dim_value'):
        return d.dim_value if d.dim_value >= 0 else None
    if d.HasField('dim_param') and d.dim_param and not d.dim_param.startswith('unk__'):
        return d.dim_param
    return None


def type_of(tp):
    """(elem, dims or None) of a tensor TypeProto, or None when it says nothing."""
    if tp.WhichOneof('value') != 'tensor_type':
        return None
    tt = tp.tensor_type
    dims = [dim_of(d) for d in tt.shape.dim] if tt.HasField('shape') else None
    if tt.elem_type == 0 and dims is None:
        return None
    return (tt.elem_type, dims)


def scopes_of(model):
    """{scope id: graph} with the ids graph.c gives (main graph "")."""
    out = {}
    stack = [(model.graph, '')]
    while stack:
        g, sid = stack.pop()
        out[sid] = g
        for i, n in enumerate(g.node):
            nid = f'{sid}.n{i}' if sid else f'n{i}'
            for a, attr in enumerate(n.attribute):
                name = attr.name if IDENT.match(attr.name) else f'a{a}'
                if attr.HasField('g'):
                    stack.append((attr.g, f'{nid}.{name}'))
                for k, sg in enumerate(attr.graphs):
                    stack.append((sg, f'{nid}.{name}.{k}'))
    return out


def onnx_known(model):
    """{scope: {value name: type}} for what onnx's result types: value_info and outputs."""
    res = {}
    for sid, g in scopes_of(model).items():
        d = res.setdefault(sid, {})
        for vi in list(g.value_info) + list(g.output):
            t = type_of(vi.type)
            if t is not None and vi.name not in d:
                d[vi.name] = t
    return res


def first_pairs(pairs):
    d = {}
    for k, v in pairs:
        if k not in d:
            d[k] = v
    return d


def compare(ours, theirs, declared=None):
    """Conflict description or None.  ours/theirs: (elem, dims or None).  declared: the
    model's own type for the value, whose symbols only name dims (another name for a dim
    we infer under a different symbol is not a conflict)."""
    (oe, od), (te, td) = ours, theirs
    if oe and te and oe != te:
        return f'elem {oe} vs {te}'
    if od is None or td is None:
        return None
    if len(od) != len(td):
        return f'rank {len(od)} vs {len(td)}'
    dd = declared[1] if declared and declared[1] and len(declared[1]) == len(td) else None
    for k, (a, b) in enumerate(zip(od, td)):
        if a is None or b is None or a == b:
            continue
        if isinstance(a, str) and isinstance(b, str) and dd and dd[k] == b:
            continue
        return f'dim {k}: {a!r} vs {b!r}'
    return None


def merge(declared, inferred):
    (de, dd), (ie, idims) = declared, inferred
    e = de or ie
    if dd is None:
        return (e, idims)
    if idims is None or len(idims) != len(dd):
        return (e, dd)
    return (e, [a if a is not None else b for a, b in zip(dd, idims)])


def sharper(ours, theirs):
    """Whether we know a dim or the rank that onnx leaves unknown."""
    (_, od), (_, td) = ours, theirs
    if od is None:
        return False
    if td is None:
        return True
    return len(od) == len(td) and any(a is not None and b is None for a, b in zip(od, td))


def weaker(ours, theirs):
    (oe, od), (te, td) = ours, theirs
    if te and not oe:
        return True
    if td is None:
        return False
    if od is None or len(od) != len(td):
        return True
    return any(a is None and b is not None for a, b in zip(od, td))


def run_model(path, tool, verbose):
    r = {'ours': 0, 'onnx': 0, 'compared': 0, 'conflicts': 0, 'missing': 0, 'weaker': 0,
         'sharper': 0,
         'declared_conflicts': 0, 'oracle_error': None, 'tool_error': None, 'notes': []}
    p = subprocess.run([tool, path], capture_output=True, timeout=60)
    if p.returncode != 0:
        r['tool_error'] = p.stderr.decode(errors='replace').strip()
        return r
    dump = json.loads(p.stdout.decode('utf-8', errors='surrogateescape'),
                      object_pairs_hook=first_pairs)
    inferred = {}
    best = {}  # what an edge shows: declared dims first, inferred ones filling the gaps
    for sid, vals in dump.items():
        for name, e in vals.items():
            t = (e['elem_type'], e['dims'])
            if e['source'] != 'inferred':
                best[(sid, name)] = t
                continue
            inferred[(sid, name)] = t
            best[(sid, name)] = merge(
                (e['declared']['elem_type'], e['declared']['dims']), t) if 'declared' in e else t
            if 'declared' in e:
                de = e['declared']
                why = compare(t, (de['elem_type'], de['dims']))
                # two names for one symbolic dim are not an error of inference
                if why and not (why.startswith('dim') and ("'" in why.split(':', 1)[1])):
                    r['declared_conflicts'] += 1
                    r['notes'].append(f'  declared-conflict {sid or "main"}/{name}: {why}')
    r['ours'] = len(inferred)
    model = onnx.load(path)
    declared = {}
    for sid, vals in onnx_known(model).items():
        for name, t in vals.items():
            declared[(sid, name)] = t
    theirs = {}
    for data_prop in (False, True):
        try:
            m = shape_inference.infer_shapes(model, strict_mode=False, data_prop=data_prop)
        except Exception as ex:  # the oracle's own failure
            r['oracle_error'] = f'{type(ex).__name__}: {str(ex).splitlines()[0][:160]}'
            continue
        for sid, vals in onnx_known(m).items():
            for name, t in vals.items():
                key = (sid, name)
                if key not in theirs:
                    theirs[key] = [t]
                elif t not in theirs[key]:
                    theirs[key].append(t)
    r['onnx'] = len(theirs)
    for key, ts in theirs.items():
        o = inferred.get(key)
        if o is not None:
            r['compared'] += 1
            for t in ts:
                why = compare(o, t, declared.get(key))
                if why:
                    r['conflicts'] += 1
                    r['notes'].append(f'  CONFLICT {key[0] or "main"}/{key[1]}: ours {o} '
                                      f'onnx {t}: {why}')
                    break
        b = best.get(key)
        if b is None:
            r['missing'] += 1
            if verbose:
                r['notes'].append(f'  missing {key[0] or "main"}/{key[1]}: onnx {ts[0]}')
        elif sharper(b, ts[-1]):
            r['sharper'] += 1
            if verbose:
                r['notes'].append(f'  sharper {key[0] or "main"}/{key[1]}: ours {b} '
                                  f'onnx {ts[-1]}')
        if b is not None and weaker(b, ts[-1]):
            r['weaker'] += 1
            if verbose:
                r['notes'].append(f'  weaker {key[0] or "main"}/{key[1]}: ours {b} '
                                  f'onnx {ts[-1]}')
    return r


def main():
    verbose = '--verbose' in sys.argv
    only = None
    if '--only' in sys.argv:
        only = sys.argv[sys.argv.index('--only') + 1]
    build = os.environ.get('BUILD', 'build')
    tool = os.path.join(build, 'tools', 'shapedump')
    corpus = os.environ.get('ONNXVIZ_CORPUS') or os.path.join('..', 'shared', 'corpus')
    models = sorted(glob.glob(os.path.join(corpus, 'models', '**', '*.onnx'), recursive=True))
    if only:
        models = [m for m in models if only in m]
    if not os.access(tool, os.X_OK):
        print(f'shapes: {tool} missing (make tools)')
        return 1
    if not models:
        print(f'shapes: no models under {corpus}/models')
        return 1
    tot = {}
    bad = []
    oracle_fail = []
    start = time.time()
    focus = []
    for path in models:
        rel = os.path.relpath(path, os.path.join(corpus, 'models'))
        r = run_model(path, tool, verbose)
        if r['tool_error']:
            bad.append(rel)
            print(f'{rel}: SHAPEDUMP FAILED: {r["tool_error"]}')
            continue
        if r['oracle_error']:
            oracle_fail.append((rel, r['oracle_error']))
        for k in ('ours', 'onnx', 'compared', 'conflicts', 'missing', 'weaker', 'sharper',
                  'declared_conflicts'):
            tot[k] = tot.get(k, 0) + r[k]
        if r['conflicts'] or r['declared_conflicts']:
            bad.append(rel)
        print(f'{rel}: inferred ours {r["ours"]} / onnx {r["onnx"]} / compared '
              f'{r["compared"]} / conflicts {r["conflicts"]} / missing {r["missing"]} / '
              f'weaker {r["weaker"]}' +
              (f' / declared-conflicts {r["declared_conflicts"]}'
               if r['declared_conflicts'] else ''))
        for n in r['notes']:
            print(n)
        if any(f in rel for f in FOCUS):
            focus.append((rel, r))
    print()
    print(f'shapes: {len(models)} models in {time.time() - start:.1f} s')
    print('totals: inferred ours {ours} / onnx {onnx} / compared {compared} / conflicts '
          '{conflicts} / missing {missing} / weaker {weaker} / sharper {sharper} / '
          'declared-conflicts {declared_conflicts}'.format(**{k: tot.get(k, 0) for k in (
              'ours', 'onnx', 'compared', 'conflicts', 'missing', 'weaker', 'sharper',
              'declared_conflicts')}))
    print('coverage (values onnx types that we know as precisely, inferred or declared):')
    for rel, r in focus:
        n = r['onnx']
        full = n - r['missing'] - r['weaker']
        pct = 100.0 * full / n if n else 100.0
        print(f'  {rel}: {full}/{n} ({pct:.1f}%), missing {r["missing"]}, '
              f'weaker {r["weaker"]}; sharper than onnx {r["sharper"]}, '
              f'typed by us only {r["ours"] - r["compared"]}')
    if oracle_fail:
        print(f'oracle failures ({len(oracle_fail)}; not counted as ours):')
        for rel, why in oracle_fail:
            print(f'  {rel}: {why}')
    if bad:
        print(f'shapes: FAILED: {len(bad)} model(s): {" ".join(bad)}')
        return 1
    print('shapes: ok, zero conflicts')
    return 0


if __name__ == '__main__':
    sys.exit(main())
