#!/usr/bin/python3
"""make_models.py — writes the small models tests/unit/test_shape.c infers shapes on.

Run once with Debian's python3 (python3-onnx) from anywhere; the .onnx files land next to
this script and are committed with it.  The expected shapes live in test_shape.c, written
by hand from the ONNX operator specification (not from onnx's own inference).

Models are not checked with onnx.checker: several are wrong on purpose ("bad_*" values).
"""
import os

import numpy as np
from onnx import AttributeProto, TensorProto, helper, numpy_helper, save

HERE = os.path.dirname(os.path.abspath(__file__))
F, I64, B = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL


def vi(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


def node(op, ins, outs, **attrs):
    return helper.make_node(op, ins, outs, name=outs[0] if outs else op, **attrs)


def const_ints(name, values):
    """A Constant node with value_ints (known without decoding a tensor)."""
    return node('Constant', [], [name], value_ints=list(values))


def const_tensor(name, values, dtype=np.int64):
    """A Constant node holding a TensorProto (needs the tensor decoder)."""
    arr = np.array(values, dtype=dtype)
    return node('Constant', [], [name], value=numpy_helper.from_array(arr, name))


def model(name, nodes, inputs, outputs, opset, initializers=(), functions=(),
          value_info=(), extra_opsets=()):
    g = helper.make_graph(nodes, name, inputs, outputs, initializer=list(initializers),
                          value_info=list(value_info))
    ops = [helper.make_opsetid('', opset)] + list(extra_opsets)
    m = helper.make_model(g, opset_imports=ops, functions=list(functions),
                          producer_name='onnxviz-tests')
    save(m, os.path.join(HERE, name + '.onnx'))


def elementwise():
    nodes = [
        node('Add', ['X', 'Y'], ['add']),              # [N,3,1]+[1,3,5] -> [N,3,5]
        node('Mul', ['add', 'Z'], ['mul']),            # [4,1,1,1] -> [4,N,3,5]
        node('Relu', ['mul'], ['relu']),
        node('Less', ['X', 'Y'], ['less']),            # bool [N,3,5]
        node('Where', ['less', 'X', 'Y'], ['where']),  # [N,3,5]
        node('Sum', ['X', 'Y', 'Z'], ['sum']),         # [4,N,3,5]
        node('Add', ['P', 'Q'], ['sym_sym']),          # [M,1]+[1,M] -> [M,M]
        node('Add', ['S', 'T5'], ['sym_known']),       # [M]+[5] -> [5]
        node('Add', ['S', 'K'], ['sym_other']),        # [M]+[K] -> [?]
        node('Add', ['U', 'X'], ['unknown_rank']),     # no shape + [N,3,1] -> float, rank ?
        node('Cast', ['X'], ['cast'], to=I64),
        node('IsNaN', ['X'], ['isnan']),
        node('Not', ['less'], ['not']),
        node('Pow', ['X', 'T5'], ['pow']),             # [N,3,1]^[5] -> [N,3,5]
        node('Softmax', ['X'], ['softmax'], axis=-1),
        node('Identity', ['X'], ['declared_out']),     # declared [N,3,1] too
        node('Relu', ['U'], ['relu_u']),               # declared [9,9] in value_info
        node('Relu', ['relu_u'], ['after_decl']),      # [9,9]: from the declared type
        node('Relu', ['add'], ['after_add']),          # declared [N,?,5] + inferred -> [N,3,5]
    ]
    model('elementwise', nodes,
          [vi('X', F, ['N', 3, 1]), vi('Y', F, [1, 3, 5]), vi('Z', F, [4, 1, 1, 1]),
           vi('P', F, ['M', 1]), vi('Q', F, [1, 'M']), vi('S', F, ['M']), vi('T5', F, [5]),
           vi('K', F, ['K']), vi('U', F, None)],
          [vi('relu', F, None), vi('declared_out', F, ['N', 3, 1])], 17,
          value_info=[vi('relu_u', F, [9, 9]), vi('add', F, ['N', None, 5])])


def legacy():
    nodes = [
        node('Add', ['A', 'B'], ['add_bcast'], broadcast=1, axis=1),  # -> A's shape
        node('Max', ['A', 'A2'], ['max6']),                           # same shapes merged
        node('Less', ['A', 'B'], ['less6'], broadcast=1, axis=1),     # bool, A's shape
        node('Reshape', ['A'], ['reshape1'], shape=[2, -1]),         # opset < 5: attribute
    ]
    model('legacy', nodes,
          [vi('A', F, [2, 3, 4, 5]), vi('B', F, [3, 4]), vi('A2', F, [2, 'C', 4, 5])],
          [vi('add_bcast', F, None)], 4)


def conv():
    nodes = [
        node('Conv', ['X', 'W'], ['c_pad1'], pads=[1, 1, 1, 1]),                 # 32
        node('Conv', ['X', 'W'], ['c_s2'], strides=[2, 2]),                     # 15
        node('Conv', ['X', 'W'], ['c_same'], strides=[2, 2], auto_pad='SAME_UPPER'),  # 16
        node('Conv', ['X', 'W'], ['c_lower'], strides=[3, 3], auto_pad='SAME_LOWER'),  # 11
        node('Conv', ['X', 'W'], ['c_valid'], dilations=[2, 2], auto_pad='VALID'),  # 28
        node('Conv', ['X', 'W'], ['c_kattr'], kernel_shape=[3, 3], pads=[0, 1, 2, 3]),  # 32x34
        node('Conv', ['XS', 'W1'], ['c_sym1x1']),                               # [N,8,H,W]
        node('Conv', ['XS', 'W'], ['c_sym3x3']),                                # [N,8,?,?]
        node('Conv', ['XS', 'W'], ['c_symsame'], auto_pad='SAME_UPPER'),        # [N,8,H,W]
        node('Conv', ['X1d', 'W1d'], ['c_1d'], strides=[2], pads=[2, 2]),      # [1,4,50]
        node('ConvTranspose', ['XT', 'WT'], ['ct'], strides=[2, 2], pads=[1, 1, 1, 1],
             output_padding=[1, 1]),                                            # [1,4,32,32]
        node('ConvTranspose', ['XT', 'WT'], ['ct_group'], group=2, strides=[2, 2]),  # 8, 33
        node('ConvTranspose', ['XT', 'WT'], ['ct_oshape'], strides=[2, 2],
             output_shape=[40, 41]),
        node('ConvTranspose', ['XT', 'WT'], ['ct_same'], strides=[2, 2], auto_pad='SAME_UPPER'),
        node('MaxPool', ['X'], ['mp', 'mp_idx'], kernel_shape=[3, 3], strides=[2, 2]),  # 15
        node('MaxPool', ['X'], ['mp_ceil'], kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1),
        node('MaxPool', ['X5'], ['mp_drop'], kernel_shape=[2, 2], strides=[2, 2],
             pads=[1, 1, 1, 1], ceil_mode=1),                                   # 3, not 4
        node('AveragePool', ['X'], ['ap'], kernel_shape=[2, 2], strides=[2, 2]),   # 16
        node('GlobalAveragePool', ['X'], ['gap']),                              # [1,3,1,1]
        node('BatchNormalization', ['c_pad1', 'C8', 'C8', 'C8', 'C8'], ['bn']),
        node('Conv', ['X', 'W'], ['bad_strides'], strides=[2]),                 # wrong length
        node('Conv', ['X', 'W'], ['bad_kernel'], kernel_shape=[-3, 3]),         # negative
        node('Conv', ['X', 'W'], ['bad_pads'], pads=[-1, 0, 0, 0]),
        node('Conv', ['X', 'W'], ['bad_autopad'], auto_pad='SIDEWAYS'),
        node('Conv', ['X', 'W'], ['bad_huge'], kernel_shape=[9223372036854775807, 3],
             dilations=[9223372036854775807, 1]),
        node('MaxPool', ['X'], ['bad_nokernel']),
        # ceil_mode past INT64_MAX: the last window's start 2 x (2^62 + 1) overflowed
        node('MaxPool', ['XH'], ['mp_ceil_huge'], kernel_shape=[1, 1], strides=[2**62 + 1, 1],
             ceil_mode=1),                                                      # 2 windows
    ]
    model('conv', nodes,
          [vi('X', F, [1, 3, 32, 32]), vi('W', F, [8, 3, 3, 3]), vi('W1', F, [8, 3, 1, 1]),
           vi('XS', F, ['N', 3, 'H', 'W']), vi('X1d', F, [1, 2, 100]), vi('W1d', F, [4, 2, 5]),
           vi('XT', F, [1, 8, 16, 16]), vi('WT', F, [8, 4, 3, 3]), vi('X5', F, [1, 1, 5, 5]),
           vi('C8', F, [8]), vi('XH', F, [1, 1, 2**63 - 10, 4])],
          [vi('bn', F, None)], 11)


def tensor_ops():
    """Opset 13 tensor ops with constant arguments given as value_ints (no decoding)."""
    nodes = [
        const_ints('shape_a', [0, -1]),
        node('Reshape', ['X', 'shape_a'], ['reshape_0m1']),      # [2,3,4] -> [2,12]
        const_ints('shape_b', [-1, 4, 1]),
        node('Reshape', ['X', 'shape_b'], ['reshape_m1']),       # [6,4,1]
        node('Transpose', ['X'], ['transpose_default']),          # [4,3,2]
        node('Transpose', ['X'], ['transpose_perm'], perm=[1, 0, 2]),  # [3,2,4]
        node('Concat', ['X', 'X2'], ['concat_neg'], axis=-1),    # [2,3,4]+[2,3,S] -> [2,3,?]
        node('Concat', ['X', 'X'], ['concat0'], axis=0),         # [4,3,4]
        node('Split', ['X'], ['split_a', 'split_b'], axis=2),    # [2,3,2] x2
        const_ints('split_sizes', [1, 3]),
        node('Split', ['X', 'split_sizes'], ['split_c', 'split_d'], axis=-1),  # 1, 3
        const_ints('sl_starts', [1]), const_ints('sl_ends', [1000]),
        const_ints('sl_axes', [-1]), const_ints('sl_steps', [2]),
        node('Slice', ['X', 'sl_starts', 'sl_ends', 'sl_axes', 'sl_steps'], ['slice']),  # [2,3,2]
        const_ints('sl_rs', [-1]), const_ints('sl_re', [-1000]), const_ints('sl_rstep', [-1]),
        node('Slice', ['XS', 'sl_rs', 'sl_re', 'sl_axes', 'sl_rstep'], ['slice_rev']),  # 3
        const_ints('sl_zero', [0]), const_ints('sl_max', [9223372036854775807]),
        node('Slice', ['XS', 'sl_zero', 'sl_max', 'sl_zero'], ['slice_sym_all']),  # [N,S,3]
        node('Slice', ['XS', 'sl_starts', 'sl_max', 'sl_zero'], ['slice_sym_cut']),  # [?,S,3]
        const_ints('sl_min', [-9223372036854775808]),
        node('Slice', ['XS', 'sl_rs', 'sl_min', 'sl_zero', 'sl_rstep'], ['slice_sym_rev']),
        node('Slice', ['XS', 'sl_rs', 'sl_re', 'sl_zero', 'sl_rstep'], ['slice_sym_rev1000']),
        node('Gather', ['X', 'idx2'], ['gather'], axis=1),       # [2] idx [5,6] -> [2,5,6,4]
        node('Gather', ['X', 'idx0'], ['gather_scalar'], axis=-1),  # [2,3]
        const_ints('axes_0', [0]),
        node('Unsqueeze', ['X', 'axes_0'], ['unsqueeze']),       # [1,2,3,4]
        const_ints('axes_m1', [-1, 1]),
        node('Unsqueeze', ['X', 'axes_m1'], ['unsqueeze_neg']),  # [2,1,3,4,1]
        node('Squeeze', ['unsqueeze', 'axes_0'], ['squeeze']),   # [2,3,4]
        node('Squeeze', ['unsqueeze'], ['squeeze_all']),         # [2,3,4]
        node('Squeeze', ['XS'], ['squeeze_sym']),                # rank unknown
        node('Flatten', ['X'], ['flatten']),                     # [2,12]
        node('Flatten', ['XS'], ['flatten_sym'], axis=-1),       # [?, 3]... [N*S, 3]
        node('Shape', ['XS'], ['shape_of']),                     # i64 [3]
        node('Size', ['X'], ['size_of']),                        # i64 []
        node('Gemm', ['G1', 'G2'], ['gemm'], transB=1),          # [5,7]x[9,7]^T -> [5,9]
        node('MatMul', ['MA', 'MB'], ['matmul']),                # [2,1,5,6]x[3,6,7] -> [2,3,5,7]
        node('MatMul', ['MV', 'MB'], ['matmul_vec']),            # [6]x[3,6,7] -> [3,7]
        node('ReduceMean', ['X'], ['reducemean'], axes=[-1], keepdims=0),  # [2,3]
        node('ReduceSum', ['X', 'axes_0'], ['reducesum']),       # [1,3,4]
        node('ReduceMax', ['X'], ['reducemax_all']),             # [1,1,1]
        node('ArgMax', ['X'], ['argmax'], axis=1, keepdims=0),   # i64 [2,4]
        node('TopK', ['X', 'k2'], ['topk_v', 'topk_i']),         # [2,3,2], i64
        const_ints('tile_reps', [2, 1, 3]),
        node('Tile', ['X', 'tile_reps'], ['tile']),              # [4,3,12]
        const_ints('pads', [0, 1, 0, 0, 2, -1]),
        node('Pad', ['X', 'pads'], ['pad']),                     # [2,6,3]
        const_ints('exp_shape', [5, 1, 1, 4]),
        node('Expand', ['X', 'exp_shape'], ['expand']),          # [5,2,3,4]
        node('ConstantOfShape', ['exp_shape'], ['cos'],
             value=numpy_helper.from_array(np.array([1], dtype=np.int64), 'v')),  # i64 [5,1,1,4]
        node('Constant', [], ['r_start'], value_int=2),
        node('Constant', [], ['r_limit'], value_int=12),
        node('Constant', [], ['r_delta'], value_int=2),
        node('Range', ['r_start', 'r_limit', 'r_delta'], ['range']),  # [5]
        node('NonZero', ['X'], ['nonzero']),                     # i64 [3, ?]
        node('OneHot', ['idx2', 'depth', 'onehot_vals'], ['onehot'], axis=0),  # [10, 5, 6]
    ]
    inits = [numpy_helper.from_array(np.array(7, dtype=np.int64), 'depth')]
    model('tensor_ops', nodes,
          [vi('X', F, [2, 3, 4]), vi('X2', F, [2, 3, 'S']), vi('XS', F, ['N', 'S', 3]),
           vi('idx2', I64, [5, 6]), vi('idx0', I64, []), vi('G1', F, [5, 7]),
           vi('G2', F, [9, 7]), vi('MA', F, [2, 1, 5, 6]), vi('MB', F, [3, 6, 7]),
           vi('MV', F, [6]), vi('k2', I64, [1]), vi('onehot_vals', F, [2])],
          [vi('reshape_0m1', F, None)], 13, initializers=inits)


def dataprop():
    """Shape -> Gather -> Unsqueeze -> Concat -> Reshape, as PyTorch exports it."""
    nodes = [
        node('Shape', ['X'], ['shp']),                                  # [1, L, 64]
        node('Constant', [], ['one'], value_int=1),
        node('Gather', ['shp', 'one'], ['len']),                        # scalar L
        const_ints('axes0', [0]),
        node('Unsqueeze', ['len', 'axes0'], ['len1']),                  # [L]
        const_ints('eight8', [8, 8]),
        node('Concat', ['len1', 'eight8'], ['tgt'], axis=0),            # [L, 8, 8]
        node('Reshape', ['X', 'tgt'], ['r_l88']),                       # [L, 8, 8]
        const_ints('m1', [-1]),
        node('Concat', ['len1', 'm1'], ['tgt2'], axis=0),               # [L, -1]
        node('Reshape', ['X', 'tgt2'], ['r_lm1']),                      # [L, 64]
        const_ints('m1_8', [-1, 8]),
        node('Reshape', ['X', 'm1_8'], ['r_unknown']),                  # [?, 8]
        node('Reshape', ['X', 'm1'], ['r_flat']),                       # [?]
        node('ConstantOfShape', ['shp'], ['zeros']),                    # f32 [1, L, 64]
        node('Expand', ['V', 'shp'], ['expanded']),                     # [1, L, 64]
        node('Constant', [], ['two'], value_int=2),
        node('Mul', ['len', 'two'], ['len_x2']),                        # unknown value
        node('Constant', [], ['zero'], value_int=0),
        node('Add', ['len', 'zero'], ['len_p0']),                       # L
        node('Unsqueeze', ['len_p0', 'axes0'], ['len_p0_1']),
        node('Concat', ['m1', 'len_p0_1'], ['tgt3'], axis=0),           # [-1, L]
        node('Reshape', ['X', 'tgt3'], ['r_m1l']),                      # [64, L]
        const_ints('s_start', [1]), const_ints('s_end', [3]),
        node('Slice', ['shp', 's_start', 's_end'], ['shp_tail']),       # [L, 64]
        node('Reshape', ['X', 'shp_tail'], ['r_tail']),                 # [L, 64]
        node('Cast', ['shp'], ['shp_i32'], to=TensorProto.INT32),
        node('Cast', ['shp_i32'], ['shp_back'], to=I64),
        node('Reshape', ['X', 'shp_back'], ['r_cast']),                 # [1, L, 64]
        node('Size', ['X'], ['numel']),
        node('Range', ['zero', 'two', 'one'], ['range2']),              # i64 [2] = [0, 1]
        node('Gather', ['shp', 'range2'], ['shp_head']),                # [1, L]
        node('Reshape', ['X', 'shp_head'], ['r_head']),                 # [1, L]: invalid size
        node('Equal', ['shp_tail', 'm1'], ['eq']),                      # bool [2]
        node('Where', ['eq', 'm1', 'shp_tail'], ['wh']),                # [L, 64]
        node('Expand', ['V', 'wh'], ['expanded2']),                     # [L, 64]
    ]
    model('dataprop', nodes, [vi('X', F, [1, 'L', 64]), vi('V', F, [64])],
          [vi('r_l88', F, None)], 14)


def dataprop_tensors():
    """The same chains with constants held in TensorProtos (initializers and Constant
    nodes): needs oxp_tensor_read_i64."""
    nodes = [
        node('Shape', ['X'], ['shp']),
        const_tensor('one', 1),
        node('Gather', ['shp', 'one'], ['len']),
        node('Unsqueeze', ['len', 'axes0'], ['len1']),                  # axes0: initializer
        const_tensor('eight8', [8, 8]),
        node('Concat', ['len1', 'eight8'], ['tgt'], axis=0),
        node('Reshape', ['X', 'tgt'], ['r_l88']),                       # [L, 8, 8]
        node('Reshape', ['X', 'shape_0m1'], ['r_0m1']),                 # [1, 64L]? -> [1, ?]
        node('Reshape', ['X', 'shape_m10'], ['r_m10']),                 # [-1, 0, 64]? see test
        node('Squeeze', ['X', 'axes0'], ['squeezed']),                  # [L, 64]
        node('Slice', ['X', 'starts', 'ends', 'axes2'], ['sliced']),    # [1, L, 16]
        node('Split', ['X', 'splits'], ['sp1', 'sp2'], axis=2),         # 24, 40
        node('ConstantOfShape', ['cshape'], ['filled'],
             value=numpy_helper.from_array(np.array([3], dtype=np.int64), 'v')),  # i64 [2,5]
        node('Resize', ['IMG', '', 'scales'], ['resized'], mode='nearest'),  # [1,3,64,48]
        node('Resize', ['IMG', '', '', 'sizes'], ['resized_sizes']),   # [1,3,10,20]
        node('Tile', ['X', 'reps'], ['tiled']),                         # [2, L, 128]
        node('ReduceSum', ['X', 'axes2'], ['rsum'], keepdims=0),        # [1, L]
        node('Range', ['f_start', 'f_limit', 'f_delta'], ['frange']),   # f32 [4]
    ]
    t = numpy_helper.from_array
    inits = [t(np.array([0], dtype=np.int64), 'axes0'),
             t(np.array([2], dtype=np.int64), 'axes2'),
             t(np.array([0, -1], dtype=np.int64), 'shape_0m1'),
             t(np.array([-1, 0, 64], dtype=np.int64), 'shape_m10'),
             t(np.array([0], dtype=np.int64), 'starts'),
             t(np.array([16], dtype=np.int64), 'ends'),
             t(np.array([24, 40], dtype=np.int64), 'splits'),
             t(np.array([2, 5], dtype=np.int64), 'cshape'),
             t(np.array([1, 1, 2, 1.5], dtype=np.float32), 'scales'),
             t(np.array([1, 3, 10, 20], dtype=np.int64), 'sizes'),
             t(np.array([2, 1, 2], dtype=np.int64), 'reps'),
             t(np.array(0.5, dtype=np.float32), 'f_start'),
             t(np.array(2.5, dtype=np.float32), 'f_limit'),
             t(np.array(0.5, dtype=np.float32), 'f_delta')]
    model('dataprop_tensors', nodes, [vi('X', F, [1, 'L', 64]), vi('IMG', F, [1, 3, 32, 32])],
          [vi('r_l88', F, None)], 13, initializers=inits)


def misc17():
    """Einsum, windows, losses (opset 17)."""
    nodes = [
        node('Einsum', ['A', 'B'], ['ein_bmm'], equation='bij,bjk->bik'),     # [2,3,5]
        node('Einsum', ['M1', 'M2'], ['ein_implicit'], equation='ij,jk'),     # [3,5]
        node('Einsum', ['E'], ['ein_ellipsis'], equation='...ij->...ji'),    # [N,7,4,6]
        node('Einsum', ['Q'], ['ein_diag'], equation='ii->i'),               # [4]
        node('Einsum', ['A', 'B'], ['ein_bad'], equation='bij,bjk->bxk'),    # x unknown: *
        node('Einsum', ['A'], ['ein_badcount'], equation='bij,bjk->bik'),    # 2 terms, 1 input
        node('Constant', [], ['wsize'], value_int=10),
        node('HannWindow', ['wsize'], ['hann']),                             # f32 [10]
        node('SoftmaxCrossEntropyLoss', ['S', 'L'], ['sce', 'sce_logp']),    # [], [8,5,3]
        node('NegativeLogLikelihoodLoss', ['S', 'L'], ['nll'], reduction='none'),  # [8,3]
    ]
    model('misc17', nodes,
          [vi('A', F, [2, 3, 4]), vi('B', F, [2, 4, 5]), vi('M1', F, [3, 4]), vi('M2', F, [4, 5]),
           vi('E', F, ['N', 7, 6, 4]), vi('Q', F, [4, 4]), vi('S', F, [8, 5, 3]),
           vi('L', I64, [8, 3])],
          [vi('ein_bmm', F, None)], 17)


def subgraphs():
    then_g = helper.make_graph(
        [node('Relu', ['X'], ['t_out']), node('Shape', ['X'], ['t_shape']),
         node('Add', ['X', 'X'], ['t_other'])],
        'then', [], [vi('t_out', F, None), vi('t_shape', I64, None), vi('t_other', F, None)])
    else_g = helper.make_graph(
        [node('Sigmoid', ['X'], ['e_out']), node('Shape', ['X'], ['e_shape']),
         node('ReduceSum', ['X'], ['e_other'], keepdims=0)],
        'else', [], [vi('e_out', F, None), vi('e_shape', I64, None), vi('e_other', F, None)])
    # Loop: carried value of changing shape; a scan output
    body = helper.make_graph(
        [node('Identity', ['cond_in'], ['cond_out']),
         node('Concat', ['acc_in', 'acc_in'], ['acc_out'], axis=0),
         node('Relu', ['X'], ['scan_out'])],
        'body', [vi('i', I64, []), vi('cond_in', B, []), vi('acc_in', F, None)],
        [vi('cond_out', B, []), vi('acc_out', F, None), vi('scan_out', F, None)])
    sbody = helper.make_graph(
        [node('Add', ['s_in', 'x_t'], ['s_out']), node('Relu', ['x_t'], ['y_t'])],
        'sbody', [vi('s_in', F, None), vi('x_t', F, None)],
        [vi('s_out', F, None), vi('y_t', F, None)])
    nodes = [
        node('If', ['C'], ['if_out', 'if_shape', 'if_other'], then_branch=then_g,
             else_branch=else_g),
        node('Loop', ['M', 'C', 'A'], ['loop_acc', 'loop_scan'], body=body),
        node('Scan', ['S0', 'SX'], ['scan_state', 'scan_y'], body=sbody, num_scan_inputs=1,
             scan_input_axes=[1], scan_output_axes=[-1]),
    ]
    model('subgraphs', nodes,
          [vi('X', F, ['N', 3]), vi('C', B, []), vi('M', I64, []), vi('A', F, [2, 3]),
           vi('S0', F, [4]), vi('SX', F, [7, 'T', 4])],
          [vi('if_out', F, None)], 16)


def order():
    """Nodes listed backwards, and a two-node cycle."""
    nodes = [
        node('Relu', ['b'], ['c']),
        node('Transpose', ['a'], ['b']),
        node('Abs', ['X'], ['a']),
        node('Add', ['X', 'cyc2'], ['cyc1']),
        node('Neg', ['cyc1'], ['cyc2']),
    ]
    model('order', nodes, [vi('X', F, [2, 5])], [vi('c', F, None)], 13)


def function():
    fn = helper.make_function(
        'local', 'ShapeOf', ['x'], ['s', 'y'],
        [node('Shape', ['x'], ['s']), node('LeakyRelu', ['x'], ['y'])],
        [helper.make_opsetid('', 13)], attributes=['alpha'])
    # the attribute reference (alpha) is irrelevant to shapes; a Transpose whose perm is a
    # reference cannot be inferred
    fn2 = helper.make_function(
        'local', 'Perm', ['x'], ['y'], [helper.make_node('Transpose', ['x'], ['y'])],
        [helper.make_opsetid('', 13)], attributes=['perm'])
    ref = AttributeProto()
    ref.name, ref.ref_attr_name, ref.type = 'perm', 'perm', AttributeProto.INTS
    fn2.node[0].attribute.append(ref)
    nodes = [helper.make_node('ShapeOf', ['X'], ['call_s', 'call_y'], domain='local'),
             helper.make_node('Perm', ['X'], ['call_perm'], domain='local', perm=[1, 0])]
    model('function', nodes, [vi('X', F, [2, 5])], [vi('call_s', I64, None)], 13,
          functions=[fn, fn2], extra_opsets=[helper.make_opsetid('local', 1)])


def bad():
    nodes = [
        node('Transpose', ['X'], ['bad_perm_dup'], perm=[0, 0, 1]),
        node('Transpose', ['X'], ['bad_perm_len'], perm=[0, 1]),
        node('Transpose', ['X'], ['bad_perm_big'], perm=[0, 1, 9223372036854775807]),
        node('Concat', ['X', 'X'], ['bad_concat_axis'], axis=3),
        node('Concat', ['X', 'X'], ['bad_concat_noaxis']),
        node('Gather', ['X', 'I'], ['bad_gather_axis'], axis=-4),
        node('Flatten', ['X'], ['bad_flatten'], axis=99),
        const_ints('bad_axes', [5]),
        node('Squeeze', ['X', 'bad_axes'], ['bad_squeeze']),
        node('Squeeze', ['X', 'axes_dup'], ['bad_squeeze_notone']),
        const_ints('two_m1', [-1, -1]),
        node('Reshape', ['X', 'two_m1'], ['bad_reshape']),
        const_ints('split_wrong', [1, 1]),
        node('Split', ['X', 'split_wrong'], ['bad_split_a', 'bad_split_b', 'bad_split_c']),
        const_ints('zero', [0]), const_ints('ten', [10]),
        node('Slice', ['X', 'zero', 'ten', 'zero', 'zero'], ['bad_slice_step0']),
        node('Softmax', ['X'], ['softmax_typed_attr'], axis=1.5),      # float axis: ignored
        node('Concat', ['X', 'X'], ['bad_axis_type'], axis=1.5),
        node('Add', ['X', 'Y'], ['bad_broadcast']),                    # [2,3,4]+[5]: 3 vs ?
        node('Relu', ['BIG'], ['big_rank']),                           # rank 70: unknown
        const_ints('huge', [9223372036854775807, 9223372036854775807]),
        node('Reshape', ['X', 'huge'], ['bad_reshape_huge']),
        node('Tile', ['X', 'huge'], ['bad_tile']),
        node('Expand', ['X', 'neg_shape'], ['bad_expand']),
        node('Upsample', ['X'], ['bad_upsample'], scales=[1.0, float('nan'), -2.0]),
        node('Unsqueeze', ['X', 'bad_axes_u'], ['bad_unsqueeze']),
        node('CustomOp', ['X'], ['custom'], domain='com.example'),
    ]
    nodes.insert(9, const_ints('axes_dup', [0]))
    nodes.insert(0, const_ints('neg_shape', [-2, 3, 4]))
    nodes.insert(0, const_ints('bad_axes_u', [0, 0]))
    model('bad', nodes,
          [vi('X', F, [2, 3, 4]), vi('I', I64, [2]), vi('Y', F, [5]),
           vi('BIG', F, [1] * 70)],
          [vi('custom', F, None)], 13,
          extra_opsets=[helper.make_opsetid('com.example', 1)])


def bookkeeping():
    """Which nodes compute without input data (oxp_dnode.bookkeeping), what folds, and the
    PyTorch pads chain (a small matrix through Reshape, Slice, Transpose)."""
    f32 = lambda name, v: node('Constant', [], [name], value=numpy_helper.from_array(
        np.array(v, dtype=np.float32), name))
    then_g = helper.make_graph(
        [node('Constant', [], ['in_c'], value_int=5),
         node('Add', ['in_c', 'len'], ['in_bk']),              # outer bookkeeping value
         node('Add', ['in_c', 'xs'], ['in_data'])],            # outer data
        'then', [], [vi('in_bk', I64, None), vi('in_data', F, None)])
    else_g = helper.make_graph(
        [node('Identity', ['len'], ['e_bk']), node('Identity', ['xs'], ['e_data'])],
        'else', [], [vi('e_bk', I64, None), vi('e_data', F, None)])
    fn = helper.make_function('local', 'Twice', ['x'], ['y'], [node('Add', ['x', 'x'], ['y'])],
                              [helper.make_opsetid('', 14)])
    big = -9223372036854775807
    nodes = [
        node('Shape', ['X'], ['shp']),                               # bk: [N, 3, 8]
        node('Constant', [], ['c0'], value_int=0),
        node('Gather', ['shp', 'c0'], ['len']),                      # bk: N
        const_ints('axes0', [0]),
        node('Unsqueeze', ['len', 'axes0'], ['len1']),               # bk: [N]
        const_ints('m1', [-1]),
        node('Concat', ['len1', 'm1'], ['tgt'], axis=0),             # bk: [N, -1]
        node('Reshape', ['X', 'tgt'], ['r']),                        # data: [N, 24]
        node('Transpose', ['W'], ['wt']),                            # bk: from a weight
        node('MatMul', ['r3', 'wt'], ['mm']),                        # data
        node('Reshape', ['X', 'c_n38'], ['r3']),                     # data
        const_ints('c_n38', [-1, 3, 8]),
        f32('two', 2.0), f32('four', 4.0),
        node('Div', ['two', 'four'], ['half']),                      # bk: f32 0.5
        node('Mul', ['X', 'half'], ['xs']),                          # data
        node('RandomNormal', [], ['rnd'], shape=[2]),                # random: not bk
        node('CastLike', ['c0', 'X'], ['cl']),                       # bk: X's type only
        node('Size', ['X'], ['sz']),                                 # bk
        node('EyeLike', ['E'], ['eye']),                             # bk: E's shape only
        node('Add', ['eye', 'E'], ['eye_e']),                        # data
        node('If', ['C'], ['if_bk', 'if_data'], then_branch=then_g,  # holds subgraphs
             else_branch=else_g),
        helper.make_node('Op', ['c0'], ['custom'], name='custom', domain='com.example'),
        helper.make_node('Twice', ['c0'], ['fcall'], name='fcall', domain='local'),
        node('Add', ['c0', 'cyc2'], ['cyc1']),                       # on a cycle
        node('Neg', ['cyc1'], ['cyc2']),
        node('Dropout', ['two'], ['drop']),                          # random
        node('Shape', ['X'], ['dead']),                              # bk, consumed by nobody
        node('Concat', ['len1', 'axes0'], ['shp_out'], axis=0),      # bk, a graph output
        node('Range', ['c0', 'len', 'c1'], ['rng']),                 # bk: [N] values 0..N-1
        node('Constant', [], ['c1'], value_int=1),
        node('Unsqueeze', ['rng', 'axes0'], ['rng2']),               # bk: [1, N]
        node('Cast', ['rng2'], ['mask'], to=F),                      # bk: f32 [1, N]
        node('Add', ['r', 'mask'], ['masked']),                      # data
        # a chain reading Y, which nothing else brings to ry: a dotted edge
        node('Shape', ['Y'], ['sy']),
        node('Gather', ['sy', 'c0'], ['ny']),
        node('Unsqueeze', ['ny', 'axes0'], ['ny1']),
        node('Concat', ['ny1', 'm1'], ['tgt_y'], axis=0),
        node('Reshape', ['X', 'tgt_y'], ['ry']),                     # data: [4, ?]
        # PyTorch's pads: [0, 1, 2, 3] -> [[0, 1], [2, 3]] -> reversed rows -> transposed
        # -> flat [2, 0, 3, 1] (begin d0, begin d1, end d0, end d1)
        const_ints('p01', [0, 1]), const_ints('p23', [2, 3]),
        node('Concat', ['p01', 'p23'], ['pflat'], axis=0),
        const_ints('m1_2', [-1, 2]),
        node('Reshape', ['pflat', 'm1_2'], ['pmat']),               # [[0, 1], [2, 3]]
        const_ints('s_m1', [-1]), const_ints('s_big', [big]),
        node('Slice', ['pmat', 's_m1', 's_big', 'axes0', 'm1'], ['prev']),  # [[2, 3], [0, 1]]
        node('Transpose', ['prev'], ['ptr'], perm=[1, 0]),           # [[2, 0], [3, 1]]
        node('Reshape', ['ptr', 'm1'], ['pads']),                    # [2, 0, 3, 1]
        node('Pad', ['P', 'pads'], ['padded']),                      # [5, 6] -> [10, 7]
        node('Slice', ['pmat', 'c_1', 'c_2', 'c_1'], ['pcol']),      # [[1], [3]]
        const_ints('c_1', [1]), const_ints('c_2', [2]),
        node('Reshape', ['pcol', 'm1'], ['pcol_flat']),              # [1, 3]
    ]
    model('bookkeeping', nodes,
          [vi('X', F, ['N', 3, 8]), vi('Y', F, [4, 'K']), vi('E', F, [3, 3]), vi('C', B, []),
           vi('P', F, [5, 6])],
          [vi('mm', F, None), vi('shp_out', I64, None), vi('masked', F, None),
           vi('ry', F, None), vi('padded', F, None), vi('if_bk', I64, None),
           vi('custom', I64, None), vi('fcall', I64, None), vi('cyc2', I64, None),
           vi('drop', F, None), vi('rnd', F, None), vi('cl', F, None), vi('sz', I64, None),
           vi('eye_e', F, None), vi('if_data', F, None), vi('pcol_flat', I64, None)],
          14, initializers=[numpy_helper.from_array(np.ones((3, 8), np.float32), 'W')],
          functions=[fn], extra_opsets=[helper.make_opsetid('local', 1),
                                        helper.make_opsetid('com.example', 1)],
          # as onnx.shape_inference writes it: a made-up symbol for a dim it cannot compute
          value_info=[vi('pflat', I64, ['unk__9'])])


def contrib():
    """onnxruntime's contrib ops (com.microsoft; parser/shape_ms.c), shapes from
    onnxruntime's docs/ContribOperators.md."""
    ms = dict(domain='com.microsoft')
    def mnode(op, ins, outs, **attrs):
        n = node(op, ins, outs, **attrs)
        n.domain = 'com.microsoft'
        return n
    nodes = [
        mnode('MatMulNBits', ['X', 'Wq', 'Sq'], ['nb'], K=64, N=96, bits=4, block_size=32),   # [B,S,96]
        # packed QKV: 96 = (4 + 2 x 1) x 16: head 16, output 4 x 16
        mnode('GroupQueryAttention', ['nb', '', '', 'pk', 'pv', 'sl', 'tl'],
              ['gqa', 'gqa_pk', 'gqa_pv'], num_heads=4, kv_num_heads=1),      # [B,S,64] [B,1,?,16]
        mnode('GroupQueryAttention', ['X', 'K32', 'V32', 'pk2', 'pv2', 'sl', 'tl'],
              ['gqa2', 'gqa2_pk', 'gqa2_pv'], num_heads=4, kv_num_heads=2),   # [B,S,64] [B,2,?,16]
        mnode('MultiHeadAttention', ['X', 'K4', 'V4'], ['mha4'], num_heads=4),    # V [B,4,L,8]: [B,S,32]
        mnode('MultiHeadAttention', ['X', 'K3', 'V3'], ['mha3', 'mha3_pk', 'mha3_pv'], num_heads=4),  # [B,S,48], [B,4,?,16]
        mnode('Attention', ['X', 'Watt'], ['att', 'att_present'], num_heads=4),   # [B,S,64], [2,B,4,?,16]
        mnode('Attention', ['X', 'Watt2'], ['att2'], num_heads=2, qkv_hidden_sizes=[64, 64, 32]),  # [B,S,32]
        mnode('SkipSimplifiedLayerNormalization', ['X', 'X', 'G'], ['ssln', 'ssln_m', 'ssln_i', 'ssln_sum']),
        mnode('FusedMatMul', ['X', 'Wt'], ['fmm'], transB=1),                     # Wt [10,64]: [B,S,10]
        mnode('RotaryEmbedding', ['X', 'pos', 'cos', 'sin'], ['rot']),
        node('SimplifiedLayerNormalization', ['X', 'G'], ['sln']),                # ONNX domain, as ORT registers it
        mnode('MatMulNBits', ['X', 'Wq', 'Sq'], ['nb_noN'], K=64, bits=4, block_size=32),  # no N: [B,S,?]
    ]
    model('contrib', nodes,
          [vi('X', F, ['B', 'S', 64]), vi('pk', F, ['B', 1, 'P', 16]), vi('pv', F, ['B', 1, 'P', 16]),
           vi('pk2', F, ['B', 2, 'P', 16]), vi('pv2', F, ['B', 2, 'P', 16]),
           vi('sl', TensorProto.INT32, ['B']), vi('tl', TensorProto.INT32, []),
           vi('K32', F, ['B', 'S', 32]), vi('V32', F, ['B', 'S', 32]),
           vi('K4', F, ['B', 4, 'L', 8]), vi('V4', F, ['B', 4, 'L', 8]),
           vi('K3', F, ['B', 'L', 64]), vi('V3', F, ['B', 'L', 48]),
           vi('Watt', F, [64, 192]), vi('Watt2', F, [64, 160]), vi('G', F, [64]),
           vi('Wt', F, [10, 64]), vi('pos', I64, ['B', 'S']), vi('cos', F, [128, 8]),
           vi('sin', F, [128, 8]), vi('Wq', TensorProto.UINT8, [96, 2, 16]), vi('Sq', F, [192])],
          [vi('gqa', F, None)], 17, extra_opsets=[helper.make_opsetid('com.microsoft', 1)])


if __name__ == '__main__':
    contrib()
    bookkeeping()
    elementwise()
    legacy()
    conv()
    tensor_ops()
    misc17()
    dataprop()
    dataprop_tensors()
    subgraphs()
    order()
    function()
    bad()
    print('written to', HERE)
