/*
 * test_decode.c — the message decoder (parser/decode.c) through the public API:
 *   - the constructed models of tests/data/models/ (tests/data/make_models.py): each field
 *     the real corpus lacks comes through with its value;
 *   - messages built byte by byte: errors with their exact code, byte offset and field path;
 *     the limits (depth, subgraph depth, counts, allocation budget); protobuf's merge rule
 *     for repeated singular messages; packed and unpacked encodings mixed; unknown fields;
 *     the decisions of docs/decisions.md.
 */
#include "parser/internal.h" /* OXP__OPEN_IN_PLACE, OXP__OPEN_NO_POPULATE */
#include "tests/unit/support_pb.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

static int teardown(void **state)
{
	(void)state;
	support_free_all();
	return 0;
}

static const oxp_model_proto *proto_of(const char *name)
{
	return oxp_model_proto_get(fixture(name));
}

static const oxp_attr *find_attr(const oxp_node *n, const char *name)
{
	for (size_t i = 0; i < n->nattrs; i++)
		if (oxp_str_eq(n->attrs[i].name, name))
			return &n->attrs[i];
	fail_msg("attribute %s not found", name);
	return NULL;
}

static const oxp_tensor *find_init(const oxp_graph *g, const char *name)
{
	for (size_t i = 0; i < g->ninitializers; i++)
		if (oxp_str_eq(g->initializers[i].name, name))
			return &g->initializers[i];
	fail_msg("initializer %s not found", name);
	return NULL;
}

static const oxp_value_info *find_vi(size_t n, const oxp_value_info *a, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (oxp_str_eq(a[i].name, name))
			return &a[i];
	fail_msg("value %s not found", name);
	return NULL;
}

static void assert_entry(const oxp_entry *e, const char *k, const char *v)
{
	assert_str(e->key, k);
	assert_str(e->value, v);
}

/* ---------------------------------------------------------------------------------------
 * Constructed models
 */
static void test_metadata_everywhere(void **state)
{
	(void)state;
	const oxp_model_proto *p = proto_of("metadata.onnx");
	assert_int_equal(p->ir_version, 10);
	assert_int_equal(p->model_version, 42);
	assert_str(p->domain, "com.example.models");
	assert_str(p->producer_name, "make_models.py");
	assert_str(p->doc_string, "model doc \xc3\xa9\xe4\xb8\xad");
	assert_int_equal(p->nopset_import, 2);
	assert_str(p->opset_import[1].domain, "com.example");
	assert_int_equal(p->opset_import[1].version, 3);
	assert_int_equal(p->nmetadata_props, 2);
	assert_entry(&p->metadata_props[0], "author", "onnxviz tests");
	assert_entry(&p->metadata_props[1], "license", "CC0");
	const oxp_graph *g = p->graph;
	assert_str(g->doc_string, "graph doc");
	assert_int_equal(g->nmetadata_props, 2);
	assert_entry(&g->metadata_props[1], "g2", "");
	assert_int_equal(g->nodes[0].nmetadata_props, 1);
	assert_entry(&g->nodes[0].metadata_props[0], "node_key", "node value");
	assert_str(g->nodes[0].doc_string, "node doc");
	assert_entry(&g->inputs[0].metadata_props[0], "vi_key", "vi value");
	assert_str(g->inputs[0].doc_string, "input doc");
	const oxp_tensor *t = find_init(g, "w");
	assert_str(t->doc_string, "tensor doc");
	assert_int_equal(t->nmetadata_props, 1);
	assert_entry(&t->metadata_props[0], "tensor_key", "tensor value");
	assert_int_equal(p->nfunctions, 1);
	assert_entry(&p->functions[0].metadata_props[0], "function_key", "function value");
}

static void test_training_info(void **state)
{
	(void)state;
	const oxp_model_proto *p = proto_of("training.onnx");
	assert_int_equal(p->ntraining_info, 2);
	const oxp_training_info *t = &p->training_info[0];
	assert_non_null(t->initialization);
	assert_str(t->initialization->name, "init");
	assert_str(t->initialization->nodes[0].op_type, "RandomNormal");
	assert_non_null(t->algorithm);
	assert_str(t->algorithm->name, "algo");
	assert_str(t->algorithm->nodes[0].domain, "ai.onnx.preview.training");
	assert_int_equal(t->ninitialization_binding, 1);
	assert_entry(&t->initialization_binding[0], "w", "w0");
	assert_int_equal(t->nupdate_binding, 2);
	assert_entry(&t->update_binding[1], "b", "b_new");
	t = &p->training_info[1];
	assert_null(t->initialization);
	assert_null(t->algorithm);
	assert_int_equal(t->ninitialization_binding + t->nupdate_binding, 0);
}

static void test_functions(void **state)
{
	(void)state;
	const oxp_model_proto *p = proto_of("functions.onnx");
	assert_str(p->graph->nodes[0].overload, "v2");
	assert_str(p->graph->nodes[0].domain, "local");
	assert_int_equal(p->nfunctions, 2);
	const oxp_function *f = &p->functions[0];
	assert_str(f->name, "Scale");
	assert_str(f->domain, "local");
	assert_str(f->overload, "v2");
	assert_str(f->doc_string, "multiplies by factor");
	assert_int_equal(f->ninputs, 1);
	assert_str(f->inputs[0], "X");
	assert_str(f->outputs[0], "Y");
	assert_int_equal(f->nattribute, 2);
	assert_str(f->attribute[1], "unused");
	assert_int_equal(f->nattribute_proto, 2);
	assert_str(f->attribute_proto[0].name, "bias");
	assert_int_equal(f->attribute_proto[0].type, OXP_ATTR_FLOAT);
	assert_true(f->attribute_proto[0].f == 0.5f);
	assert_str(f->attribute_proto[0].doc_string, "default bias");
	assert_int_equal(f->attribute_proto[1].nints, 2);
	assert_int_equal(f->nnodes, 2);
	const oxp_attr *a = &f->nodes[0].attrs[0];
	assert_str(a->name, "value_float");
	assert_str(a->ref_attr_name, "factor");
	assert_int_equal(a->type, OXP_ATTR_FLOAT);
	assert_false(a->type_inferred);
	assert_int_equal(f->nvalue_info, 1);
	assert_str(f->value_info[0].name, "F");
	assert_int_equal(f->nopset_import, 1);
	assert_str(p->functions[1].nodes[0].overload, "v2");
	assert_int_equal(p->functions[1].overload.len, 0);
}

static void test_functions_only(void **state)
{
	(void)state;
	const oxp_model_proto *p = proto_of("functions_only.onnx");
	assert_null(p->graph);
	assert_int_equal(p->ir_version, 0);
	assert_int_equal(p->nfunctions, 1);
	assert_str(p->functions[0].nodes[0].op_type, "Neg");
}

static void test_sparse(void **state)
{
	(void)state;
	const oxp_graph *g = proto_of("sparse.onnx")->graph;
	assert_int_equal(g->nsparse_initializers, 2);
	const oxp_sparse_tensor *s = &g->sparse_initializers[0];
	assert_non_null(s->values);
	assert_non_null(s->indices);
	assert_str(s->values->name, "sp_values");
	assert_int_equal(s->values->storage, OXP_STORE_FLOAT_DATA);
	assert_int_equal(s->indices->ndims, 2);
	assert_int_equal(s->indices->dims[0], 3);
	assert_int_equal(s->indices->dims[1], 2);
	assert_int_equal(s->ndims, 2);
	assert_int_equal(s->dims[0], 4);
	assert_int_equal(s->dims[1], 3);
	assert_int_equal(g->sparse_initializers[1].indices->ndims, 1);
	const oxp_attr *a = find_attr(&g->nodes[1], "sparse_value");
	assert_int_equal(a->type, OXP_ATTR_SPARSE_TENSOR);
	assert_non_null(a->sparse_tensor);
	assert_str(a->sparse_tensor->values->name, "sp_values");
	a = find_attr(&g->nodes[2], "sps");
	assert_int_equal(a->type, OXP_ATTR_SPARSE_TENSORS);
	assert_int_equal(a->nsparse_tensors, 2);
	assert_str(a->sparse_tensors[1].values->name, "sp1");
	const oxp_type *t = g->value_info[0].type;
	assert_int_equal(t->kind, OXP_TYPE_SPARSE_TENSOR);
	assert_int_equal(t->elem_type, OXP_DT_FLOAT);
	assert_int_equal(t->shape->ndims, 2);
	assert_int_equal(t->shape->dims[1].value, 3);
}

static void test_external_data(void **state)
{
	(void)state;
	const oxp_graph *g = proto_of("external.onnx")->graph;
	const oxp_tensor *t = find_init(g, "ext0");
	assert_int_equal(t->data_location, 1);
	assert_int_equal(t->storage, OXP_STORE_EXTERNAL);
	assert_false(t->has_raw_data);
	assert_int_equal(t->nexternal_data, 3);
	assert_entry(&t->external_data[0], "location", "weights.bin");
	assert_entry(&t->external_data[1], "offset", "0");
	assert_entry(&t->external_data[2], "length", "16");
	t = find_init(g, "ext1");
	assert_int_equal(t->nexternal_data, 5);
	assert_entry(&t->external_data[1], "offset", "64");
	assert_entry(&t->external_data[4], "__unknown_key", "x");
	assert_int_equal(t->ndims, 2);
	t = find_init(g, "ext2");
	assert_int_equal(t->nexternal_data, 1);
	assert_entry(&t->external_data[0], "location", "sub dir/w \xc3\xa9.bin");
	t = find_init(g, "not_external");
	assert_int_equal(t->data_location, 0);
	assert_int_equal(t->storage, OXP_STORE_RAW);
	assert_int_equal(t->nexternal_data, 1);
}

static void test_all_dtypes(void **state)
{
	(void)state;
	const oxp_graph *g = proto_of("dtypes.onnx")->graph;
	static const unsigned bits[27] = {0,  32, 8, 8, 16, 16, 32, 64, 0, 8, 16, 64, 32, 64,
	                                  64, 128, 16, 8, 8, 8, 8, 4, 4, 4, 8, 2, 2};
	for (int dt = 1; dt <= 26; dt++) {
		char name[16];
		snprintf(name, sizeof(name), "raw_%d", dt);
		const oxp_tensor *t = find_init(g, name);
		assert_int_equal(t->data_type, dt);
		assert_int_equal(oxp_dtype_bits(dt), bits[dt]);
		assert_string_not_equal(oxp_dtype_name(dt), "UNDEFINED");
		assert_int_equal(t->ndims, 2);
		if (dt == OXP_DT_STRING) {
			assert_int_equal(t->storage, OXP_STORE_STRING_DATA);
			assert_int_equal(t->nstring_data, 6);
			assert_int_equal(t->string_data[3].len, 2);
			assert_memory_equal(t->string_data[3].p, "\xff\xfe", 2);
			continue;
		}
		assert_int_equal(t->storage, OXP_STORE_RAW);
		assert_int_equal(t->raw_data.len, (6 * bits[dt] + 7) / 8);
		assert_int_equal((uint8_t)t->raw_data.p[0], dt); /* (0 * 37 + dt) & 0xff */
		/* the value type of each dtype, too */
		snprintf(name, sizeof(name), "vi_%d", dt);
		const oxp_value_info *v = find_vi(g->nvalue_info, g->value_info, name);
		assert_int_equal(v->type->elem_type, dt);
	}
	/* typed storage: kinds and payload bytes (varints measured as encoded) */
	static const struct {
		const char *name;
		oxp_storage storage;
		unsigned field;
		size_t bytes;
	} typed[] = {
	    {"f32_typed", OXP_STORE_FLOAT_DATA, 4, 12},
	    {"f16_typed", OXP_STORE_INT32_DATA, 5, 2 + 3}, /* 0x3c00, 0x4000 as varints */
	    {"i32_typed", OXP_STORE_INT32_DATA, 5, 1 + 10 + 5 + 10},
	    {"i64_typed", OXP_STORE_INT64_DATA, 7, 1 + 10 + 9},
	    {"f64_typed", OXP_STORE_DOUBLE_DATA, 10, 16},
	    {"u64_typed", OXP_STORE_UINT64_DATA, 11, 1 + 10},
	    {"u32_typed", OXP_STORE_UINT64_DATA, 11, 1 + 5},
	    {"c64_typed", OXP_STORE_FLOAT_DATA, 4, 8},
	    {"bool_typed", OXP_STORE_INT32_DATA, 5, 3},
	    {"scalar", OXP_STORE_FLOAT_DATA, 4, 4},
	};
	for (size_t i = 0; i < sizeof(typed) / sizeof(typed[0]); i++) {
		const oxp_tensor *t = find_init(g, typed[i].name);
		assert_int_equal(t->storage, typed[i].storage);
		assert_int_equal(t->typed_fields, 1u << typed[i].field);
		assert_int_equal(t->typed_bytes, typed[i].bytes);
		assert_false(t->has_raw_data);
	}
	const oxp_tensor *t = find_init(g, "scalar");
	assert_int_equal(t->ndims, 0);
	assert_null(t->dims);
	t = find_init(g, "empty");
	assert_int_equal(t->ndims, 2);
	assert_int_equal(t->dims[0], 0);
	assert_int_equal(t->storage, OXP_STORE_NONE);
	t = find_init(g, "segmented");
	assert_true(t->has_segment);
	assert_int_equal(t->segment_begin, 2);
	assert_int_equal(t->segment_end, 5);
	t = find_init(g, "segment_zero");
	assert_true(t->has_segment);
	assert_int_equal(t->segment_begin, 0);
	assert_int_equal(t->segment_end, 0);
	assert_false(find_init(g, "raw_1")->has_segment);
	t = find_init(g, "dtype_99");
	assert_int_equal(t->data_type, 99); /* kept as stored */
	assert_string_equal(oxp_dtype_name(99), "UNDEFINED");
}

static void test_types(void **state)
{
	(void)state;
	const oxp_graph *g = proto_of("types.onnx")->graph;
	const oxp_type *t = find_vi(g->ninputs, g->inputs, "t")->type;
	assert_int_equal(t->kind, OXP_TYPE_TENSOR);
	assert_str(t->denotation, "TENSOR");
	assert_int_equal(t->elem_type, OXP_DT_FLOAT);
	assert_int_equal(t->shape->ndims, 4);
	assert_int_equal(t->shape->dims[0].kind, OXP_DIM_VALUE);
	assert_int_equal(t->shape->dims[0].value, 1);
	assert_str(t->shape->dims[0].denotation, "DATA_BATCH");
	assert_int_equal(t->shape->dims[1].kind, OXP_DIM_PARAM);
	assert_str(t->shape->dims[1].param, "batch");
	assert_str(t->shape->dims[1].denotation, "DATA_CHANNEL");
	assert_int_equal(t->shape->dims[2].kind, OXP_DIM_UNKNOWN);
	assert_int_equal(t->shape->dims[3].kind, OXP_DIM_VALUE);
	assert_int_equal(t->shape->dims[3].value, 0);
	t = find_vi(g->ninputs, g->inputs, "scalar")->type;
	assert_non_null(t->shape);
	assert_int_equal(t->shape->ndims, 0);
	t = find_vi(g->ninputs, g->inputs, "unranked")->type;
	assert_int_equal(t->kind, OXP_TYPE_TENSOR);
	assert_int_equal(t->elem_type, OXP_DT_BFLOAT16);
	assert_null(t->shape);
	t = find_vi(g->ninputs, g->inputs, "seq")->type;
	assert_int_equal(t->kind, OXP_TYPE_SEQUENCE);
	assert_int_equal(t->elem->kind, OXP_TYPE_TENSOR);
	assert_str(t->elem->shape->dims[0].param, "n");
	t = find_vi(g->ninputs, g->inputs, "map")->type;
	assert_int_equal(t->kind, OXP_TYPE_MAP);
	assert_int_equal(t->key_type, OXP_DT_STRING);
	assert_int_equal(t->elem->kind, OXP_TYPE_SEQUENCE);
	t = find_vi(g->ninputs, g->inputs, "opt")->type;
	assert_int_equal(t->kind, OXP_TYPE_OPTIONAL);
	assert_int_equal(t->elem->elem_type, OXP_DT_INT32);
	t = find_vi(g->ninputs, g->inputs, "opt_seq")->type;
	assert_int_equal(t->elem->kind, OXP_TYPE_SEQUENCE);
	t = find_vi(g->ninputs, g->inputs, "sparse")->type;
	assert_int_equal(t->kind, OXP_TYPE_SPARSE_TENSOR);
	assert_str(t->shape->dims[1].param, "m");
	t = find_vi(g->ninputs, g->inputs, "opaque")->type;
	assert_int_equal(t->kind, OXP_TYPE_OPAQUE);
	assert_str(t->opaque_domain, "com.example");
	assert_str(t->opaque_name, "Handle");
	assert_str(t->denotation, "OPAQUE_THING");
	t = find_vi(g->ninputs, g->inputs, "opaque_empty")->type;
	assert_int_equal(t->kind, OXP_TYPE_OPAQUE);
	assert_null(find_vi(g->ninputs, g->inputs, "untyped")->type);
	t = find_vi(g->ninputs, g->inputs, "type_without_value")->type;
	assert_int_equal(t->kind, OXP_TYPE_NONE);
	assert_str(t->denotation, "IMAGE");
	t = find_vi(g->nvalue_info, g->value_info, "deep")->type;
	for (int i = 0; i < 6; i++) {
		assert_int_equal(t->kind, OXP_TYPE_SEQUENCE);
		t = t->elem;
	}
	assert_int_equal(t->kind, OXP_TYPE_MAP);
	assert_int_equal(t->key_type, OXP_DT_INT64);
	assert_int_equal(t->elem->elem_type, OXP_DT_DOUBLE);
}

static void test_attribute_types(void **state)
{
	(void)state;
	const oxp_graph *g = proto_of("attributes.onnx")->graph;
	const oxp_node *n = &g->nodes[1];
	assert_int_equal(n->ninputs, 3);
	assert_int_equal(n->inputs[1].len, 0); /* omitted optional input */
	assert_int_equal(n->noutputs, 2);
	assert_int_equal(n->outputs[1].len, 0);
	const oxp_attr *a = find_attr(n, "f");
	assert_int_equal(a->type, OXP_ATTR_FLOAT);
	assert_true(a->f == 0.1f);
	a = find_attr(n, "f_neg_zero");
	assert_true(a->f == 0.0f && signbit(a->f));
	assert_true(isinf(find_attr(n, "f_inf")->f) && find_attr(n, "f_inf")->f > 0);
	assert_true(isinf(find_attr(n, "f_ninf")->f) && find_attr(n, "f_ninf")->f < 0);
	assert_true(find_attr(n, "f_tiny")->f == 1e-45f);
	a = find_attr(n, "i");
	assert_int_equal(a->type, OXP_ATTR_INT);
	assert_true(a->i == INT64_MIN);
	assert_str(a->doc_string, "the smallest int64");
	assert_true(find_attr(n, "i_max")->i == INT64_MAX);
	a = find_attr(n, "s");
	assert_int_equal(a->type, OXP_ATTR_STRING);
	assert_str(a->s, "hello \"world\"\n\t\\");
	a = find_attr(n, "s_bin");
	assert_int_equal(a->s.len, 5);
	assert_memory_equal(a->s.p, "\x00\x01\xff\xc3\x28", 5);
	a = find_attr(n, "t");
	assert_int_equal(a->type, OXP_ATTR_TENSOR);
	assert_int_equal(a->t->data_type, OXP_DT_INT64);
	a = find_attr(n, "g");
	assert_int_equal(a->type, OXP_ATTR_GRAPH);
	assert_str(a->g->name, "sub");
	a = find_attr(n, "sparse");
	assert_int_equal(a->type, OXP_ATTR_SPARSE_TENSOR);
	assert_int_equal(a->sparse_tensor->dims[0], 5);
	a = find_attr(n, "tp");
	assert_int_equal(a->type, OXP_ATTR_TYPE_PROTO);
	assert_int_equal(a->tp->elem_type, OXP_DT_FLOAT16);
	assert_str(a->tp->shape->dims[1].param, "k");
	a = find_attr(n, "floats");
	assert_int_equal(a->type, OXP_ATTR_FLOATS);
	assert_int_equal(a->nfloats, 3);
	assert_true(a->floats[1] == -2.25f && a->floats[2] == 1e10f);
	a = find_attr(n, "ints");
	assert_int_equal(a->type, OXP_ATTR_INTS);
	assert_int_equal(a->nints, 3);
	assert_true(a->ints[1] == -1 && a->ints[2] == (int64_t)1 << 40);
	a = find_attr(n, "strings");
	assert_int_equal(a->type, OXP_ATTR_STRINGS);
	assert_int_equal(a->nstrings, 3);
	assert_int_equal(a->strings[1].len, 0);
	assert_str(a->strings[2], "\xc3\xbc" "ml\xc3\xa4" "ut");
	a = find_attr(n, "tensors");
	assert_int_equal(a->type, OXP_ATTR_TENSORS);
	assert_int_equal(a->ntensors, 2);
	a = find_attr(n, "graphs");
	assert_int_equal(a->type, OXP_ATTR_GRAPHS);
	assert_int_equal(a->ngraphs, 2);
	assert_str(a->graphs[1].nodes[0].op_type, "Identity");
	a = find_attr(n, "sparses");
	assert_int_equal(a->type, OXP_ATTR_SPARSE_TENSORS);
	a = find_attr(n, "tps");
	assert_int_equal(a->type, OXP_ATTR_TYPE_PROTOS);
	assert_int_equal(a->ntype_protos, 2);
	assert_int_equal(a->type_protos[1].kind, OXP_TYPE_SEQUENCE);
	a = find_attr(n, "empty_ints");
	assert_int_equal(a->type, OXP_ATTR_INTS);
	assert_false(a->type_inferred);
	assert_int_equal(a->nints, 0);
	assert_null(a->ints);
	/* If > else_branch > If > then_branch */
	const oxp_attr *e = find_attr(&g->nodes[2], "else_branch");
	const oxp_attr *t = find_attr(&e->g->nodes[0], "then_branch");
	assert_str(t->g->name, "sub");
}

static void test_device_configurations(void **state)
{
	(void)state;
	const oxp_model_proto *p = proto_of("device.onnx");
	assert_int_equal(p->nconfiguration, 2);
	assert_str(p->configuration[0].name, "mesh");
	assert_int_equal(p->configuration[0].num_devices, 4);
	assert_int_equal(p->configuration[0].ndevice, 4);
	assert_str(p->configuration[0].device[3], "cuda:3");
	assert_str(p->configuration[1].name, "empty");
	const oxp_node *n = &p->graph->nodes[0];
	assert_int_equal(n->ndevice_configurations, 2);
	const oxp_node_device_config *dc = &n->device_configurations[0];
	assert_str(dc->configuration_id, "mesh");
	assert_int_equal(dc->pipeline_stage, 1);
	assert_int_equal(dc->nsharding_spec, 1);
	const oxp_sharding_spec *ss = &dc->sharding_spec[0];
	assert_str(ss->tensor_name, "x");
	assert_int_equal(ss->ndevice, 4);
	assert_int_equal(ss->device[3], 3);
	assert_int_equal(ss->nindex_to_device_group_map, 2);
	assert_int_equal(ss->index_to_device_group_map[1].key, 1);
	assert_int_equal(ss->index_to_device_group_map[1].nvalue, 2);
	assert_int_equal(ss->index_to_device_group_map[1].value[1], 3);
	assert_int_equal(ss->nsharded_dim, 2);
	const oxp_sharded_dim *sd = &ss->sharded_dim[0];
	assert_int_equal(sd->nsimple_sharding, 3);
	assert_int_equal(sd->simple_sharding[0].kind, OXP_DIM_VALUE);
	assert_int_equal(sd->simple_sharding[0].dim_value, 8);
	assert_int_equal(sd->simple_sharding[0].num_shards, 2);
	assert_int_equal(sd->simple_sharding[1].kind, OXP_DIM_PARAM);
	assert_str(sd->simple_sharding[1].dim_param, "batch");
	assert_int_equal(sd->simple_sharding[2].kind, OXP_DIM_UNKNOWN);
	assert_int_equal(ss->sharded_dim[1].axis, -1);
	assert_int_equal(n->device_configurations[1].nsharding_spec, 0);
}

static void test_quantization_annotation(void **state)
{
	(void)state;
	const oxp_graph *g = proto_of("quant.onnx")->graph;
	assert_int_equal(g->nquantization_annotation, 2);
	assert_str(g->quantization_annotation[0].tensor_name, "y");
	assert_int_equal(g->quantization_annotation[0].nquant_parameter_tensor_names, 2);
	assert_entry(&g->quantization_annotation[0].quant_parameter_tensor_names[1],
	             "ZERO_POINT_TENSOR", "y_zp");
	assert_int_equal(g->quantization_annotation[1].nquant_parameter_tensor_names, 0);
}

/* IR version 1: attributes without the type field get it from the value present. */
static void test_ir1_attribute_type_inferred(void **state)
{
	(void)state;
	const oxp_model_proto *p = proto_of("ir1_attrs.onnx");
	assert_int_equal(p->ir_version, 1);
	const oxp_node *n = &p->graph->nodes[1];
	static const struct {
		const char *name;
		int32_t type;
	} want[] = {{"f", OXP_ATTR_FLOAT},         {"i", OXP_ATTR_INT},
	            {"s", OXP_ATTR_STRING},        {"t", OXP_ATTR_TENSOR},
	            {"g", OXP_ATTR_GRAPH},         {"floats", OXP_ATTR_FLOATS},
	            {"ints", OXP_ATTR_INTS},       {"strings", OXP_ATTR_STRINGS},
	            {"tensors", OXP_ATTR_TENSORS}, {"graphs", OXP_ATTR_GRAPHS},
	            {"sparse_tensor", OXP_ATTR_SPARSE_TENSOR},
	            {"sparse_tensors", OXP_ATTR_SPARSE_TENSORS},
	            {"tp", OXP_ATTR_TYPE_PROTO},   {"type_protos", OXP_ATTR_TYPE_PROTOS},
	            {"type_zero", OXP_ATTR_INT}};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		const oxp_attr *a = find_attr(n, want[i].name);
		if (a->type != want[i].type || !a->type_inferred)
			fail_msg("attribute %s: type %d (inferred %d), want %d inferred", want[i].name,
			         a->type, a->type_inferred, want[i].type);
	}
	assert_true(find_attr(n, "f")->f == 2.5f);
	assert_int_equal(find_attr(n, "i")->i, 7);
	const oxp_attr *a = find_attr(n, "no_value");
	assert_int_equal(a->type, OXP_ATTR_UNDEFINED);
	assert_false(a->type_inferred);
}

static void test_ir14_and_empty_strings(void **state)
{
	(void)state;
	const oxp_model_proto *p = proto_of("ir14.onnx");
	assert_int_equal(p->ir_version, 14);
	assert_int_equal(p->nopset_import, 2);
	assert_int_equal(p->opset_import[1].version, 24);
	assert_str(p->graph->nodes[0].overload, "o");
	assert_int_equal(p->graph->name.len, 0);
}

/* Names are views of the bytes as stored: no decoding, no validation, no NUL needed. */
static void test_strings_kept_as_bytes(void **state)
{
	(void)state;
	const oxp_graph *g = proto_of("strings.onnx")->graph;
	assert_int_equal(g->nnodes, 12);
	assert_str(g->nodes[0].name, "quote\"back\\slash");
	assert_int_equal(g->nodes[2].name.len, strlen("nul") + 1 + strlen("inside"));
	assert_memory_equal(g->nodes[2].name.p, "nul\0inside", 10);
	assert_str(g->nodes[4].name, "\xc3\xa9\xe4\xb8\xad\xf0\x9f\x98\x80");
	static const struct {
		const char *bytes;
		size_t len;
	} bad[] = {{"\x80lone", 5}, {"\xc0\xafoverlong", 10}, {"\xed\xa0\x80surrogate", 12},
	           {"cut\xe4\xb8", 5}, {"\xff\xfe", 2}, {"\xf4\x90\x80\x80too_big", 11}};
	for (size_t i = 0; i < 6; i++) {
		const oxp_node *n = &g->nodes[6 + i];
		assert_int_equal(n->name.len, bad[i].len);
		assert_memory_equal(n->name.p, bad[i].bytes, bad[i].len);
		assert_int_equal(n->doc_string.len, 4 + bad[i].len);
	}
}

/* Packed and unpacked encodings of one repeated field, mixed in one message. */
static void test_packed_and_unpacked_mixed(void **state)
{
	(void)state;
	const oxp_model_proto *p = proto_of("packed.onnx");
	assert_int_equal(p->nopset_import, 2);
	const oxp_graph *g = p->graph;
	const oxp_tensor *t = find_init(g, "mixed");
	assert_int_equal(t->ndims, 2);
	assert_int_equal(t->dims[0], 2);
	assert_int_equal(t->dims[1], 3);
	assert_int_equal(t->typed_fields, 1u << 7);
	assert_int_equal(t->typed_bytes, 2 + 1 + 9 + 10);
	assert_int_equal(find_init(g, "floats")->typed_bytes, 12);
	assert_int_equal(find_init(g, "doubles")->typed_bytes, 16);
	assert_int_equal(find_init(g, "u64")->typed_bytes, 10 + 2);
	assert_int_equal(find_init(g, "i32")->typed_bytes, 10 + 5);
	const oxp_node *n = &g->nodes[0];
	const oxp_attr *a = find_attr(n, "ints");
	assert_int_equal(a->nints, 4);
	static const int64_t ints[] = {1, 2, 3, -4};
	assert_memory_equal(a->ints, ints, sizeof(ints));
	a = find_attr(n, "floats");
	assert_int_equal(a->nfloats, 3);
	assert_true(a->floats[0] == 1 && a->floats[1] == 2 && a->floats[2] == 3);
	const oxp_sharding_spec *ss = &n->device_configurations[0].sharding_spec[0];
	assert_int_equal(ss->ndevice, 3);
	assert_int_equal(ss->device[2], 2);
}

/* Unknown fields of every wire type, in every kind of message, are skipped. */
static void test_unknown_fields_skipped(void **state)
{
	(void)state;
	const oxp_model_proto *p = proto_of("unknown_fields.onnx");
	assert_int_equal(p->ir_version, 8);
	assert_int_equal(p->opset_import[0].version, 16);
	assert_entry(&p->metadata_props[0], "k", "");
	const oxp_graph *g = p->graph;
	assert_str(g->name, "unknown");
	assert_str(g->nodes[0].op_type, "LeakyRelu");
	const oxp_attr *a = find_attr(&g->nodes[0], "alpha");
	assert_true(a->f == 0.5f);
	const oxp_tensor *t = find_init(g, "w");
	assert_int_equal(t->raw_data.len, 4);
	assert_entry(&t->external_data[0], "k", "v");
	const oxp_type *ty = g->inputs[0].type;
	assert_int_equal(ty->elem_type, OXP_DT_FLOAT);
	assert_int_equal(ty->shape->ndims, 1);
	assert_int_equal(ty->shape->dims[0].value, 4);
}

/* protobuf's merge rule, as in docs/decisions.md #5. */
static void test_merge_fixture(void **state)
{
	(void)state;
	const oxp_model_proto *p = proto_of("merge.onnx");
	assert_int_equal(p->ir_version, 8);        /* last of 3, 8 */
	assert_str(p->producer_name, "p2");        /* last wins */
	assert_int_equal(p->model_version, 2);
	const oxp_graph *g = p->graph;             /* two graph fields, merged */
	assert_str(g->name, "merged");
	assert_int_equal(g->nnodes, 1);
	assert_int_equal(g->ninputs, 1);
	assert_int_equal(g->noutputs, 1);
	const oxp_value_info *x = &g->inputs[0];
	assert_str(x->name, "x2");
	assert_int_equal(x->type->elem_type, OXP_DT_FLOAT); /* from the first type field */
	assert_int_equal(x->type->shape->dims[0].value, 5); /* from the second */
	const oxp_attr *a = &g->nodes[0].attrs[0];
	assert_int_equal(a->i, 2);
	const oxp_tensor *t = a->t;                /* two t fields, merged */
	assert_str(t->name, "second");
	assert_int_equal(t->data_type, OXP_DT_FLOAT);
	assert_int_equal(t->ndims, 2);
	assert_int_equal(t->dims[0], 2);
	assert_int_equal(t->dims[1], 3);
	assert_int_equal(t->raw_data.len, 24);
	assert_int_equal(t->nsegments, 2);
	const oxp_training_info *ti = &p->training_info[0];
	assert_str(ti->initialization->name, "init_a");
	assert_int_equal(ti->initialization->nnodes, 1);
	assert_str(ti->algorithm->name, "algo");
}

static void test_deep_graphs_at_limit(void **state)
{
	(void)state;
	const oxp_graph *g = proto_of("deep_graphs.onnx")->graph;
	int depth = 0;
	while (g->nnodes > 0 && g->nodes[0].nattrs > 0) {
		g = find_attr(&g->nodes[0], "then_branch")->g;
		depth++;
	}
	assert_int_equal(depth, 32);
	assert_str(g->name, "level32");
}

/* ---------------------------------------------------------------------------------------
 * Errors: exact code, offset and path
 */

/* A model {ir_version: 8, graph: {<graph>}}; *gpay gets the graph payload's offset. */
static void model_with_graph(pb *m, const pb *graph, size_t *gpay)
{
	pb_uint(m, 1, 8);
	pb_msg(m, 7, graph, gpay);
}

/* graph {node {<node>}}; *npay gets the node payload's offset within the graph. */
static void graph_with_node(pb *g, const pb *node, size_t *npay)
{
	pb_msg(g, 1, node, npay);
}

static void test_error_wrong_wire_type(void **state)
{
	(void)state;
	pb node = {0}, g = {0}, m = {0};
	pb_str(&node, 4, "Relu");
	size_t at = pb_uint(&node, 3, 5); /* name (a string) sent as a varint */
	size_t npay, gpay;
	graph_with_node(&g, &node, &npay);
	model_with_graph(&m, &g, &gpay);
	oxp_error e = pb_parse_err(&m, NULL, OXP_E_WIRETYPE);
	assert_int_equal(e.offset, gpay + npay + at);
	assert_string_equal(e.path, "graph.node[0].name");
	assert_string_equal(oxp_code_name(e.code), "bad_wire_type");
	char buf[600];
	oxp_error_format(&e, buf, sizeof(buf));
	assert_non_null(strstr(buf, "in graph.node[0].name"));
	pb_free(&node), pb_free(&g), pb_free(&m);
}

static void test_error_bad_dims_path(void **state)
{
	(void)state;
	pb t = {0}, a = {0}, node = {0}, g = {0}, m = {0};
	pb_uint(&t, 1, 3);
	pb_uint(&t, 1, UINT64_MAX); /* dims[1] = -1 */
	pb_uint(&t, 2, 1);
	size_t tpay, apay, npay, gpay;
	pb_str(&a, 1, "other"); /* attribute[0]: an int */
	pb_uint(&a, 3, 1);
	pb_msg(&node, 5, &a, NULL);
	pb_free(&a);
	pb_str(&a, 1, "value"); /* attribute[1]: the tensor */
	pb_uint(&a, 20, OXP_ATTR_TENSOR);
	pb_msg(&a, 5, &t, &tpay);
	pb_msg(&node, 5, &a, &apay);
	for (int i = 0; i < 13; i++) /* node[12] is the bad one */
		pb_msg(&g, 1, i == 12 ? &node : &(pb){0}, i == 12 ? &npay : NULL);
	model_with_graph(&m, &g, &gpay);
	oxp_error e = pb_parse_err(&m, NULL, OXP_E_DIMS);
	assert_string_equal(e.path, "graph.node[12].attribute[1].t.dims[1]");
	assert_int_equal(e.offset, gpay + npay + apay + tpay); /* the tensor's first byte */
	/* a product above 2^63-1 */
	pb_free(&t), pb_free(&a), pb_free(&node), pb_free(&g), pb_free(&m);
	pb_uint(&t, 1, (uint64_t)1 << 62);
	pb_uint(&t, 1, 4);
	pb_msg(&g, 5, &t, NULL);
	model_with_graph(&m, &g, &gpay);
	e = pb_parse_err(&m, NULL, OXP_E_DIMS);
	assert_string_equal(e.path, "graph.initializer[0].dims");
	pb_free(&t), pb_free(&g), pb_free(&m);
}

static void test_error_length(void **state)
{
	(void)state;
	pb m = {0};
	pb_uint(&m, 1, 8);
	pb_tag(&m, 7, 2);
	pb_varint(&m, 5); /* graph of 5 bytes, 1 present */
	pb_raw(&m, "\x0a", 1);
	oxp_error e = pb_parse_err(&m, NULL, OXP_E_LENGTH);
	assert_int_equal(e.offset, 2);
	assert_string_equal(e.path, "graph");
	pb_free(&m);
	/* lengths of 2^32 and 2^63 */
	uint64_t huge[] = {(uint64_t)1 << 32, (uint64_t)1 << 63, UINT64_MAX};
	for (size_t i = 0; i < 3; i++) {
		pb_uint(&m, 1, 8);
		pb_tag(&m, 2, 2);
		pb_varint(&m, huge[i]);
		pb_raw(&m, "abc", 3);
		e = pb_parse_err(&m, NULL, OXP_E_LENGTH);
		assert_int_equal(e.offset, 2);
		assert_string_equal(e.path, "producer_name");
		pb_free(&m);
	}
}

static void test_error_varint_and_tag(void **state)
{
	(void)state;
	pb m = {0};
	pb_raw(&m, "\x08\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 12); /* 11 bytes */
	oxp_error e = pb_parse_err(&m, NULL, OXP_E_VARINT);
	assert_int_equal(e.offset, 0);
	assert_string_equal(e.path, "ir_version");
	pb_free(&m);
	pb_raw(&m, "\x08\xff\xff\xff\xff\xff\xff\xff\xff\xff\x02", 11); /* above 2^64-1 */
	e = pb_parse_err(&m, NULL, OXP_E_VARINT);
	pb_free(&m);
	/* field number 0 inside a node */
	pb node = {0}, g = {0};
	pb_str(&node, 4, "Relu");
	size_t at = node.n;
	pb_raw(&node, "\x00\x00", 2);
	size_t npay, gpay;
	graph_with_node(&g, &node, &npay);
	model_with_graph(&m, &g, &gpay);
	e = pb_parse_err(&m, NULL, OXP_E_TAG);
	assert_int_equal(e.offset, gpay + npay + at);
	assert_string_equal(e.path, "graph.node[0]");
	pb_free(&node), pb_free(&g), pb_free(&m);
}

static void test_error_groups_and_wire_types(void **state)
{
	(void)state;
	pb g = {0}, m = {0};
	size_t gpay;
	pb_str(&g, 2, "g");
	size_t at = g.n;
	pb_tag(&g, 99, 3); /* an unknown field as a group */
	pb_tag(&g, 99, 4);
	model_with_graph(&m, &g, &gpay);
	oxp_error e = pb_parse_err(&m, NULL, OXP_E_GROUP);
	assert_int_equal(e.offset, gpay + at);
	assert_string_equal(e.path, "graph.<field 99>");
	assert_string_equal(oxp_code_name(e.code), "group_not_supported");
	pb_free(&g), pb_free(&m);
	/* an end-group alone */
	pb_tag(&m, 50, 4);
	pb_parse_err(&m, NULL, OXP_E_GROUP);
	pb_free(&m);
	/* wire types 6 and 7 */
	for (unsigned wt = 6; wt <= 7; wt++) {
		pb_uint(&m, 1, 8);
		pb_tag(&m, 1000, wt);
		e = pb_parse_err(&m, NULL, OXP_E_WIRETYPE);
		assert_int_equal(e.offset, 2);
		pb_free(&m);
	}
	/* a known field as a group: groups are refused wherever they appear (decisions #3) */
	pb_uint(&m, 1, 8);
	pb_tag(&m, 7, 3);
	e = pb_parse_err(&m, NULL, OXP_E_GROUP);
	assert_string_equal(e.path, "graph");
	pb_free(&m);
	/* a known scalar as fixed64 and a message as varint */
	pb_tag(&m, 1, 1);
	pb_raw(&m, "12345678", 8);
	pb_parse_err(&m, NULL, OXP_E_WIRETYPE);
	pb_free(&m);
	pb_uint(&m, 7, 1);
	pb_parse_err(&m, NULL, OXP_E_WIRETYPE);
	pb_free(&m);
}

/* attribute {name: "a", <raw field bytes>} in node 0 of the graph. */
static void model_with_attr_bytes(pb *m, const void *field, size_t n, size_t *field_at)
{
	pb a = {0}, node = {0}, g = {0};
	pb_str(&a, 1, "a");
	size_t at = a.n;
	pb_raw(&a, field, n);
	size_t apay, npay, gpay;
	pb_str(&node, 4, "Op");
	pb_msg(&node, 5, &a, &apay);
	graph_with_node(&g, &node, &npay);
	model_with_graph(m, &g, &gpay);
	*field_at = gpay + npay + apay + at;
	pb_free(&a), pb_free(&node), pb_free(&g);
}

static void test_error_packed(void **state)
{
	(void)state;
	pb m = {0};
	size_t at;
	/* ints packed, the last varint cut short */
	model_with_attr_bytes(&m, "\x42\x02\x01\x81", 4, &at);
	oxp_error e = pb_parse_err(&m, NULL, OXP_E_PACKED);
	assert_int_equal(e.offset, at);
	assert_string_equal(e.path, "graph.node[0].attribute[0].ints");
	pb_free(&m);
	/* ints packed, holding an 11-byte varint: reported at that varint */
	model_with_attr_bytes(&m, "\x42\x0d\x05\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01\x07",
	                      15, &at);
	e = pb_parse_err(&m, NULL, OXP_E_VARINT);
	assert_int_equal(e.offset, at + 3);
	assert_string_equal(e.path, "graph.node[0].attribute[0].ints");
	pb_free(&m);
	/* floats packed, 3 bytes: not a whole float */
	model_with_attr_bytes(&m, "\x3a\x03\x00\x00\x80", 5, &at);
	e = pb_parse_err(&m, NULL, OXP_E_PACKED);
	assert_int_equal(e.offset, at);
	assert_string_equal(e.path, "graph.node[0].attribute[0].floats");
	pb_free(&m);
	/* tensor float_data packed, 6 bytes; double_data packed, 4 bytes */
	static const char *const bad[] = {"\x22\x06" "abcdef", "\x52\x04" "abcd"};
	for (size_t i = 0; i < 2; i++) {
		pb t = {0}, g = {0};
		pb_raw(&t, bad[i], 8 - 2 * i);
		pb_msg(&g, 5, &t, NULL);
		size_t gpay;
		model_with_graph(&m, &g, &gpay);
		e = pb_parse_err(&m, NULL, OXP_E_PACKED);
		assert_string_equal(e.path, i ? "graph.initializer[0].double_data"
		                               : "graph.initializer[0].float_data");
		pb_free(&t), pb_free(&g), pb_free(&m);
	}
}

static void test_error_not_a_model(void **state)
{
	(void)state;
	pb m = {0};
	oxp_error e = pb_parse_err(&m, NULL, OXP_E_NOT_MODEL); /* empty */
	assert_int_equal(e.offset, 0);
	pb_str(&m, 99, "unknown only");
	pb_str(&m, 2, "producer");
	e = pb_parse_err(&m, NULL, OXP_E_NOT_MODEL);
	assert_string_equal(oxp_code_name(e.code), "not_a_model");
	pb_free(&m);
	/* a NULL buffer with a length is refused, not read */
	oxp_model *out = NULL;
	assert_int_equal(oxp_model_parse(&out, NULL, 10, NULL, &e), OXP_E_IO);
	assert_null(out);
	/* errors need no error struct */
	pb_uint(&m, 1, 8);
	pb_tag(&m, 7, 2);
	assert_int_equal(oxp_model_parse(&out, m.p, m.n, NULL, NULL), OXP_E_TRUNCATED);
	assert_null(out);
	pb_free(&m);
}

/* oxp_model_open: regular files only; an empty file is not a model. */
static void test_open_errors(void **state)
{
	(void)state;
	oxp_model *m = NULL;
	oxp_error e;
	assert_int_equal(oxp_model_open(&m, "/nonexistent/model.onnx", NULL, &e), OXP_E_IO);
	assert_string_equal(oxp_code_name(e.code), "io_error");
	assert_int_equal(oxp_model_open(&m, "/", NULL, &e), OXP_E_IO);
	assert_int_equal(oxp_model_open(&m, "/dev/null", NULL, &e), OXP_E_IO);
	char path[] = "/tmp/test_decode_XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(oxp_model_open(&m, path, NULL, &e), OXP_E_NOT_MODEL);
	assert_int_equal(write(fd, "\x08\x07", 2), 2);
	assert_int_equal(oxp_model_open(&m, path, NULL, &e), OXP_OK);
	assert_int_equal(oxp_model_proto_get(m)->ir_version, 7);
	oxp_model_free(m);
	close(fd);
	unlink(path);
	oxp_model_free(NULL); /* a no-op */
}

/* Write b to a fresh temporary file; returns its path (static storage). */
static const char *temp_file(const pb *b)
{
	static char path[64];
	snprintf(path, sizeof(path), "/tmp/test_decode_big_XXXXXX");
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	size_t done = 0;
	while (done < b->n) {
		ssize_t w = write(fd, b->p + done, b->n - done);
		assert_true(w > 0);
		done += (size_t)w;
	}
	close(fd);
	return path;
}

/* oxp_model_open of b from a file must see exactly what oxp_model_parse sees in memory,
 * opened plain and low-RSS: big files (16 MB and more) then have their structure decoded
 * from a compacted copy, or (OXP__OPEN_IN_PLACE) their structure pages made private
 * copies (model.c, split_structure; with the kernel's populate advice and,
 * OXP__OPEN_NO_POPULATE, without), and the buffer must be byte for byte the file. */
static void check_open_flags(const pb *b, const char *path, unsigned flags)
{
	oxp_model *mf = NULL, *mb = NULL;
	oxp_error e;
	oxp_code rf = oxp_model_open_ex(&mf, path, NULL, flags, &e);
	oxp_code rb = oxp_model_parse(&mb, b->p, b->n, NULL, &e);
	assert_int_equal(rf, rb);
	if (rb != OXP_OK)
		return;
	assert_int_equal(oxp_model_size(mf), b->n);
	assert_memory_equal(oxp_model_data(mf), b->p, b->n); /* every byte, copied or mapped */
	const oxp_model_proto *pf = oxp_model_proto_get(mf), *pm = oxp_model_proto_get(mb);
	assert_int_equal(pf->ir_version, pm->ir_version);
	assert_int_equal(oxp_model_arena_bytes(mf), oxp_model_arena_bytes(mb));
	if (pm->graph != NULL) {
		const oxp_graph *gf = pf->graph, *gm = pm->graph;
		assert_int_equal(gf->nnodes, gm->nnodes);
		assert_int_equal(gf->ninitializers, gm->ninitializers);
		for (size_t i = 0; i < gm->ninitializers; i++) {
			const oxp_tensor *tf = &gf->initializers[i], *tm = &gm->initializers[i];
			assert_int_equal(tf->name.len, tm->name.len);
			assert_memory_equal(tf->name.p, tm->name.p, tm->name.len);
			assert_int_equal(tf->raw_data.len, tm->raw_data.len);
			assert_memory_equal(tf->raw_data.p, tm->raw_data.p, tm->raw_data.len);
			assert_int_equal(oxp_model_offset(mf, tf->raw_data.p),
			                 oxp_model_offset(mb, tm->raw_data.p));
			assert_int_equal(oxp_model_offset(mf, tf->name.p),
			                 oxp_model_offset(mb, tm->name.p));
		}
		for (size_t i = 0; i < gm->nnodes; i++)
			assert_int_equal(gf->nodes[i].offset, gm->nodes[i].offset);
	}
	oxp_model_free(mf);
	oxp_model_free(mb);
}

static void check_open_same_as_parse(const pb *b)
{
	const char *path = temp_file(b);
	check_open_flags(b, path, 0);
	check_open_flags(b, path, OXP_OPEN_LOW_RSS);
	check_open_flags(b, path, OXP_OPEN_LOW_RSS | OXP__OPEN_IN_PLACE);
	check_open_flags(b, path, OXP_OPEN_LOW_RSS | OXP__OPEN_NO_POPULATE);
	unlink(path);
}

static void test_open_big_files(void **state)
{
	(void)state;
	size_t big = (size_t)6 << 20;
	uint8_t *payload = malloc(big);
	assert_non_null(payload);
	for (size_t i = 0; i < big; i++)
		payload[i] = (uint8_t)(i * 131 + 7);
	/* three 6 MB initializers (odd offsets, so holes start and end mid-page), nodes
	 * between and after them */
	pb g = {0}, m = {0};
	for (int i = 0; i < 3; i++) {
		pb t = {0};
		char name[16];
		snprintf(name, sizeof(name), "w%d", i);
		pb_str(&t, 8, name);
		pb_uint(&t, 2, OXP_DT_UINT8);
		pb_uint(&t, 1, big - (size_t)i);
		pb_bytes(&t, 9, payload + i, big - (size_t)i, NULL);
		pb_str(&t, 12, "doc after the payload");
		pb_msg(&g, 5, &t, NULL);
		pb_raw(&g, "\x0a\x04\x22\x02Op", 6);
		pb_free(&t);
	}
	pb_str(&g, 2, "big");
	size_t gpay;
	model_with_graph(&m, &g, &gpay);
	assert_true(m.n > ((size_t)16 << 20));
	check_open_same_as_parse(&m);
	/* the payload in an unknown field, and ir_version after it at the very end */
	pb_free(&m);
	pb_bytes(&m, 999, payload, big, NULL);
	pb_bytes(&m, 998, payload, big, NULL);
	pb_bytes(&m, 997, payload, big, NULL);
	pb_uint(&m, 1, 9);
	check_open_same_as_parse(&m);
	/* structure that the scan cannot follow after the first hole (a bad tag): the
	 * parser's verdict must not change */
	m.n -= 2;
	pb_raw(&m, "\x00\x00", 2);
	check_open_same_as_parse(&m);
	/* a length that runs past the end after big payloads */
	m.n -= 2;
	pb_tag(&m, 7, 2);
	pb_varint(&m, 1000);
	check_open_same_as_parse(&m);
	pb_free(&g), pb_free(&m);
	free(payload);
}

static void test_lone_tensor(void **state)
{
	(void)state;
	pb t = {0};
	pb_uint(&t, 1, 2);
	pb_uint(&t, 1, 3);
	pb_uint(&t, 2, OXP_DT_FLOAT);
	pb_bytes(&t, 9, "\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0", 24, NULL);
	oxp_model *m;
	oxp_error e;
	assert_int_equal(oxp_tensor_file_parse(&m, t.p, t.n, NULL, &e), OXP_OK);
	assert_null(oxp_model_proto_get(m));
	const oxp_tensor *tt = oxp_model_tensor_get(m);
	assert_int_equal(tt->ndims, 2);
	assert_int_equal(tt->raw_data.len, 24);
	assert_int_equal(oxp_model_offset(m, tt->raw_data.p), t.n - 24);
	oxp_model_free(m);
	pb_uint(&t, 1, UINT64_MAX);
	assert_int_equal(oxp_tensor_file_parse(&m, t.p, t.n, NULL, &e), OXP_E_DIMS);
	assert_string_equal(e.path, "dims[2]");
	assert_null(oxp_model_tensor_get(fixture("types.onnx")));
	pb_free(&t);
}

/* ---------------------------------------------------------------------------------------
 * Limits
 */

/* A TypeProto nested n levels deep (sequence of sequence of ...), built back to front so
 * that building stays linear; returns the value_info bytes as a model. */
static void deep_type_model(pb *m, size_t n)
{
	size_t cap = n * 16 + 64, at = cap;
	uint8_t *buf = malloc(cap);
	assert_non_null(buf);
	for (size_t i = 0; i < n; i++) {
		for (int k = 0; k < 2; k++) { /* TypeProto.sequence_type(4) > Sequence.elem_type(1) */
			uint8_t lv[10];
			size_t ln = pb_varint_encode(lv, cap - at);
			at -= ln;
			memcpy(buf + at, lv, ln);
			buf[--at] = k == 0 ? 0x0a : 0x22; /* the tag */
		}
	}
	pb type = {buf + at, cap - at, 0}, vi = {0}, g = {0};
	pb_str(&vi, 1, "x");
	pb_msg(&vi, 2, &type, NULL);
	pb_msg(&g, 11, &vi, NULL);
	size_t gpay;
	model_with_graph(m, &g, &gpay);
	free(buf);
	pb_free(&vi), pb_free(&g);
}

static void test_limit_depth(void **state)
{
	(void)state;
	pb m = {0};
	deep_type_model(&m, 50000); /* 100,000 nested messages: bounded stack, quick error */
	oxp_error e = pb_parse_err(&m, NULL, OXP_E_DEPTH);
	assert_int_equal(strncmp(e.path, "graph.input[0].type.sequence_type.elem_type."
	                         "sequence_type.elem_type",
	                         66), 0);
	assert_string_equal(oxp_code_name(e.code), "too_deep");
	pb_free(&m);
	/* just under the default limit of 100 parses */
	deep_type_model(&m, 47);
	pb_parse_ok(&m, NULL);
	pb_free(&m);
	/* a limit of 4: graph(1) > node(2) > attribute(3) > t(4) > external_data(5) */
	pb ent = {0}, t = {0}, a = {0}, node = {0}, g = {0};
	pb_str(&ent, 1, "location");
	pb_msg(&t, 13, &ent, NULL);
	pb_str(&a, 1, "value");
	pb_msg(&a, 5, &t, NULL);
	pb_msg(&node, 5, &a, NULL);
	pb_msg(&g, 1, &node, NULL);
	size_t gpay;
	model_with_graph(&m, &g, &gpay);
	oxp_limits lim = oxp_limits_default();
	lim.max_depth = 4;
	e = pb_parse_err(&m, &lim, OXP_E_DEPTH);
	assert_string_equal(e.path, "graph.node[0].attribute[0].t.external_data[0]");
	lim.max_depth = 5;
	pb_parse_ok(&m, &lim);
	pb_free(&ent), pb_free(&t), pb_free(&a), pb_free(&node), pb_free(&g), pb_free(&m);
}

/* graph {node {attribute {g: <levels more>}}} nested `levels` times below the main graph */
static void nested_graphs(pb *out, int levels)
{
	pb g = {0};
	pb_str(&g, 2, "leaf");
	for (int i = 0; i < levels; i++) {
		pb a = {0}, node = {0}, outer = {0};
		pb_str(&a, 1, "body");
		pb_uint(&a, 20, OXP_ATTR_GRAPH);
		pb_msg(&a, 6, &g, NULL);
		pb_str(&node, 4, "Loop");
		pb_msg(&node, 5, &a, NULL);
		pb_msg(&outer, 1, &node, NULL);
		pb_free(&g), pb_free(&a), pb_free(&node);
		g = outer;
	}
	size_t gpay;
	model_with_graph(out, &g, &gpay);
	pb_free(&g);
}

static void test_limit_graph_depth(void **state)
{
	(void)state;
	pb m = {0};
	nested_graphs(&m, 32);
	pb_parse_ok(&m, NULL);
	pb_free(&m);
	nested_graphs(&m, 33);
	oxp_error e = pb_parse_err(&m, NULL, OXP_E_GRAPH_DEPTH);
	assert_int_equal(strncmp(e.path, "graph.node[0].attribute[0].g.node[0].attribute[0].g.",
	                         51),
	                 0);
	assert_int_equal(strlen(e.path), sizeof(e.path) - 1); /* long paths are cut, not
	                                                          overflowed */
	assert_string_equal(oxp_code_name(e.code), "subgraphs_too_deep");
	pb_free(&m);
	oxp_limits lim = oxp_limits_default();
	lim.max_graph_depth = 2;
	nested_graphs(&m, 3);
	e = pb_parse_err(&m, &lim, OXP_E_GRAPH_DEPTH);
	assert_string_equal(e.path, "graph.node[0].attribute[0].g.node[0].attribute[0].g.node[0]"
	                            ".attribute[0].g");
	pb_free(&m);
	nested_graphs(&m, 2);
	pb_parse_ok(&m, &lim);
	pb_free(&m);
}

static void test_limit_counts(void **state)
{
	(void)state;
	oxp_limits lim = oxp_limits_default();
	pb node = {0}, g = {0}, m = {0}, f = {0};
	size_t gpay;
	/* inputs of one node */
	pb_str(&node, 1, "a");
	pb_str(&node, 1, "b");
	pb_str(&node, 1, "c");
	pb_str(&node, 2, "y");
	graph_with_node(&g, &node, NULL);
	model_with_graph(&m, &g, &gpay);
	lim.max_node_io = 2;
	oxp_error e = pb_parse_err(&m, &lim, OXP_E_LIMIT);
	assert_string_equal(e.path, "graph.node[0].input");
	lim.max_node_io = 3;
	pb_parse_ok(&m, &lim);
	pb_free(&m);
	/* nodes of all graphs and functions together */
	graph_with_node(&g, &node, NULL);
	graph_with_node(&g, &node, NULL); /* 3 nodes in the graph */
	pb_str(&f, 1, "F");
	pb_msg(&f, 7, &node, NULL);
	pb_msg(&f, 7, &node, NULL); /* 2 in a function */
	pb_msg(&m, 25, &f, NULL);
	model_with_graph(&m, &g, &gpay);
	lim = oxp_limits_default();
	lim.max_nodes = 4;
	e = pb_parse_err(&m, &lim, OXP_E_LIMIT);
	assert_string_equal(e.path, "graph.node");
	lim.max_nodes = 5;
	pb_parse_ok(&m, &lim);
	pb_free(&m), pb_free(&f), pb_free(&g), pb_free(&node);
	/* elements of one repeated field: 5 ints (packed and not) against 4 */
	size_t at;
	model_with_attr_bytes(&m, "\x42\x03\x01\x02\x03\x40\x04\x40\x05", 9, &at);
	lim = oxp_limits_default();
	lim.max_repeated = 4;
	e = pb_parse_err(&m, &lim, OXP_E_LIMIT);
	assert_string_equal(e.path, "graph.node[0].attribute[0].ints");
	lim.max_repeated = 5;
	const oxp_attr *a = &oxp_model_proto_get(pb_parse_ok(&m, &lim))->graph->nodes[0].attrs[0];
	assert_int_equal(a->nints, 5);
	assert_int_equal(a->ints[4], 5);
	pb_free(&m);
}

/* Counts come from the bytes present, and the arena has a budget: 100,000 empty nodes
 * (2 bytes each on the wire) need far more than 1 MB of structures. */
static void test_limit_alloc_budget(void **state)
{
	(void)state;
	pb g = {0}, m = {0};
	for (int i = 0; i < 100000; i++)
		pb_raw(&g, "\x0a\x00", 2);
	size_t gpay;
	model_with_graph(&m, &g, &gpay);
	oxp_limits lim = oxp_limits_default();
	lim.max_alloc = (size_t)1 << 20;
	/* over the budget is the model's own (permanent) error, not out of memory */
	oxp_error e = pb_parse_err(&m, &lim, OXP_E_BUDGET);
	assert_string_equal(oxp_code_name(e.code), "over_budget");
	assert_non_null(strstr(e.message, "budget"));
	oxp_model *ok = pb_parse_ok(&m, NULL);
	assert_int_equal(oxp_model_proto_get(ok)->graph->nnodes, 100000);
	assert_true(oxp_model_arena_bytes(ok) > lim.max_alloc);
	assert_true(oxp_model_arena_bytes(ok) <= oxp_limits_default().max_alloc);
	pb_free(&g), pb_free(&m);
}

/* 1 MB of unknown fields of every wire type, interleaved with known ones. */
static void test_many_unknown_fields(void **state)
{
	(void)state;
	pb g = {0}, m = {0};
	size_t nodes = 0;
	while (g.n < (1u << 20)) {
		pb_uint(&g, 1000, UINT64_MAX);
		pb_tag(&g, 1001, 1);
		pb_raw(&g, "12345678", 8);
		pb_str(&g, 1002, "junk");
		pb_float(&g, 1003, 1.0f);
		pb_raw(&g, "\x0a\x04\x22\x02Op", 6); /* node {op_type: "Op"} */
		nodes++;
	}
	size_t gpay;
	model_with_graph(&m, &g, &gpay);
	const oxp_graph *pg = oxp_model_proto_get(pb_parse_ok(&m, NULL))->graph;
	assert_int_equal(pg->nnodes, nodes);
	assert_str(pg->nodes[nodes - 1].op_type, "Op");
	pb_free(&g), pb_free(&m);
}

/* ---------------------------------------------------------------------------------------
 * Merge semantics and documented choices
 */
static void test_merge_singular_messages(void **state)
{
	(void)state;
	pb g1 = {0}, g2 = {0}, a = {0}, node = {0}, g = {0}, m = {0};
	pb_str(&g1, 2, "first");
	pb_raw(&g1, "\x0a\x04\x22\x02" "A1", 6);
	pb_str(&g2, 2, "second");
	pb_raw(&g2, "\x0a\x04\x22\x02" "A2", 6);
	pb_str(&a, 1, "body");
	pb_uint(&a, 20, OXP_ATTR_GRAPH);
	pb_msg(&a, 6, &g1, NULL); /* g twice: one graph with both nodes, the last name */
	pb_msg(&a, 6, &g2, NULL);
	pb sp1 = {0}, sp2 = {0}, v1 = {0}, v2 = {0};
	pb_str(&v1, 8, "values");
	pb_uint(&v2, 1, 3);
	pb_msg(&sp1, 1, &v1, NULL); /* sparse_tensor twice, values twice inside */
	pb_uint(&sp1, 3, 10);
	pb_msg(&sp2, 1, &v2, NULL);
	pb_uint(&sp2, 3, 20);
	pb_msg(&a, 22, &sp1, NULL);
	pb_msg(&a, 22, &sp2, NULL);
	pb_str(&node, 4, "Loop");
	pb_msg(&node, 5, &a, NULL);
	pb_msg(&g, 1, &node, NULL);
	size_t gpay;
	model_with_graph(&m, &g, &gpay);
	const oxp_attr *pa =
	    &oxp_model_proto_get(pb_parse_ok(&m, NULL))->graph->nodes[0].attrs[0];
	assert_str(pa->g->name, "second");
	assert_int_equal(pa->g->nnodes, 2);
	assert_str(pa->g->nodes[0].op_type, "A1");
	assert_str(pa->g->nodes[1].op_type, "A2");
	assert_int_equal(pa->sparse_tensor->ndims, 2);
	assert_int_equal(pa->sparse_tensor->dims[1], 20);
	assert_str(pa->sparse_tensor->values->name, "values");
	assert_int_equal(pa->sparse_tensor->values->ndims, 1);
	assert_int_equal(pa->sparse_tensor->values->nsegments, 2);
	pb_free(&g1), pb_free(&g2), pb_free(&a), pb_free(&node), pb_free(&g), pb_free(&m);
	pb_free(&sp1), pb_free(&sp2), pb_free(&v1), pb_free(&v2);
}

/* graph {input {name: "x", type: <type bytes>}} */
static const oxp_type *parse_type(const void *type, size_t n)
{
	pb t = {0}, vi = {0}, g = {0}, m = {0};
	pb_raw(&t, type, n);
	pb_str(&vi, 1, "x");
	pb_msg(&vi, 2, &t, NULL);
	pb_msg(&g, 11, &vi, NULL);
	size_t gpay;
	model_with_graph(&m, &g, &gpay);
	const oxp_type *ty = oxp_model_proto_get(pb_parse_ok(&m, NULL))->graph->inputs[0].type;
	pb_free(&t), pb_free(&vi), pb_free(&g), pb_free(&m);
	return ty;
}

/* docs/decisions.md #5: the inlined TypeProto members are decoded in turn into one
 * oxp_type, so a second tensor_type replaces the shape of the first (protobuf would
 * concatenate the dims). */
static void test_decision_inlined_type_members(void **state)
{
	(void)state;
	/* tensor_type {elem_type 1}, tensor_type {shape {dim {dim_value 5}}}: merged */
	const oxp_type *t = parse_type("\x0a\x02\x08\x01\x0a\x06\x12\x04\x0a\x02\x08\x05", 12);
	assert_int_equal(t->kind, OXP_TYPE_TENSOR);
	assert_int_equal(t->elem_type, 1);
	assert_int_equal(t->shape->ndims, 1);
	/* two shapes: the second replaces the first */
	t = parse_type("\x0a\x06\x12\x04\x0a\x02\x08\x02\x0a\x06\x12\x04\x0a\x02\x08\x03", 16);
	assert_int_equal(t->shape->ndims, 1);
	assert_int_equal(t->shape->dims[0].value, 3);
}

/* A TypeProto whose oneof member changes: protobuf clears the earlier member, so nothing
 * of it may show through the later one (regression: decode.c once decoded every member into
 * the same flat oxp_type without clearing, so an earlier shape or map value type showed
 * through a later member). */
static void test_oneof_switch_clears_earlier_member(void **state)
{
	(void)state;
	/* tensor_type {elem_type 1, shape [5]}, sparse_tensor_type {elem_type 7} */
	const oxp_type *t = parse_type("\x0a\x08\x08\x01\x12\x04\x0a\x02\x08\x05"
	                               "\x42\x02\x08\x07",
	                               14);
	assert_int_equal(t->kind, OXP_TYPE_SPARSE_TENSOR);
	assert_int_equal(t->elem_type, 7);
	assert_null(t->shape);
	/* tensor_type {elem_type 1, shape [5]}, sequence_type {}, tensor_type {elem_type 1} */
	t = parse_type("\x0a\x08\x08\x01\x12\x04\x0a\x02\x08\x05\x22\x00\x0a\x02\x08\x01", 16);
	assert_int_equal(t->kind, OXP_TYPE_TENSOR);
	assert_null(t->shape);
	/* map_type {key_type 8, value_type {tensor_type {elem_type 1}}}, sequence_type {} */
	t = parse_type("\x2a\x08\x08\x08\x12\x04\x0a\x02\x08\x01\x22\x00", 12);
	assert_int_equal(t->kind, OXP_TYPE_SEQUENCE);
	assert_null(t->elem);
}

/* Dimension and SimpleShardedDim oneofs: the last of dim_value / dim_param wins. */
static void test_dim_oneof_last_wins(void **state)
{
	(void)state;
	/* tensor_type {shape {dim {dim_value 4, dim_param "n"}, dim {dim_param "n",
	 * dim_value 4}}} */
	const oxp_type *t = parse_type("\x0a\x12\x12\x10"
	                               "\x0a\x05\x08\x04\x12\x01n"
	                               "\x0a\x05\x12\x01n\x08\x04"
	                               "\x0a\x00",
	                               20);
	assert_int_equal(t->shape->ndims, 3);
	assert_int_equal(t->shape->dims[0].kind, OXP_DIM_PARAM);
	assert_str(t->shape->dims[0].param, "n");
	assert_int_equal(t->shape->dims[1].kind, OXP_DIM_VALUE);
	assert_int_equal(t->shape->dims[1].value, 4);
	assert_int_equal(t->shape->dims[2].kind, OXP_DIM_UNKNOWN);
}

/* int32 and enum fields keep the low 32 bits of the varint, as protobuf does. */
static void test_int32_truncation(void **state)
{
	(void)state;
	pb t = {0}, g = {0}, m = {0};
	pb_uint(&t, 2, ((uint64_t)1 << 32) | OXP_DT_INT8);
	pb_msg(&g, 5, &t, NULL);
	size_t gpay;
	model_with_graph(&m, &g, &gpay);
	const oxp_tensor *pt = &oxp_model_proto_get(pb_parse_ok(&m, NULL))->graph->initializers[0];
	assert_int_equal(pt->data_type, OXP_DT_INT8);
	pb_free(&t), pb_free(&g), pb_free(&m);
	pb_uint(&t, 2, (uint64_t)-2); /* -2 as a 10-byte varint */
	pb_msg(&g, 5, &t, NULL);
	model_with_graph(&m, &g, &gpay);
	pt = &oxp_model_proto_get(pb_parse_ok(&m, NULL))->graph->initializers[0];
	assert_int_equal(pt->data_type, -2);
	pb_free(&t), pb_free(&g), pb_free(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_teardown(test_metadata_everywhere, teardown),
	    cmocka_unit_test_teardown(test_training_info, teardown),
	    cmocka_unit_test_teardown(test_functions, teardown),
	    cmocka_unit_test_teardown(test_functions_only, teardown),
	    cmocka_unit_test_teardown(test_sparse, teardown),
	    cmocka_unit_test_teardown(test_external_data, teardown),
	    cmocka_unit_test_teardown(test_all_dtypes, teardown),
	    cmocka_unit_test_teardown(test_types, teardown),
	    cmocka_unit_test_teardown(test_attribute_types, teardown),
	    cmocka_unit_test_teardown(test_device_configurations, teardown),
	    cmocka_unit_test_teardown(test_quantization_annotation, teardown),
	    cmocka_unit_test_teardown(test_ir1_attribute_type_inferred, teardown),
	    cmocka_unit_test_teardown(test_ir14_and_empty_strings, teardown),
	    cmocka_unit_test_teardown(test_strings_kept_as_bytes, teardown),
	    cmocka_unit_test_teardown(test_packed_and_unpacked_mixed, teardown),
	    cmocka_unit_test_teardown(test_unknown_fields_skipped, teardown),
	    cmocka_unit_test_teardown(test_merge_fixture, teardown),
	    cmocka_unit_test_teardown(test_deep_graphs_at_limit, teardown),
	    cmocka_unit_test_teardown(test_error_wrong_wire_type, teardown),
	    cmocka_unit_test_teardown(test_error_bad_dims_path, teardown),
	    cmocka_unit_test_teardown(test_error_length, teardown),
	    cmocka_unit_test_teardown(test_error_varint_and_tag, teardown),
	    cmocka_unit_test_teardown(test_error_groups_and_wire_types, teardown),
	    cmocka_unit_test_teardown(test_error_packed, teardown),
	    cmocka_unit_test_teardown(test_error_not_a_model, teardown),
	    cmocka_unit_test_teardown(test_open_errors, teardown),
	    cmocka_unit_test_teardown(test_open_big_files, teardown),
	    cmocka_unit_test_teardown(test_lone_tensor, teardown),
	    cmocka_unit_test_teardown(test_limit_depth, teardown),
	    cmocka_unit_test_teardown(test_limit_graph_depth, teardown),
	    cmocka_unit_test_teardown(test_limit_counts, teardown),
	    cmocka_unit_test_teardown(test_limit_alloc_budget, teardown),
	    cmocka_unit_test_teardown(test_many_unknown_fields, teardown),
	    cmocka_unit_test_teardown(test_merge_singular_messages, teardown),
	    cmocka_unit_test_teardown(test_decision_inlined_type_members, teardown),
	    cmocka_unit_test_teardown(test_dim_oneof_last_wins, teardown),
	    cmocka_unit_test_teardown(test_int32_truncation, teardown),
	    cmocka_unit_test_teardown(test_oneof_switch_clears_earlier_member, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
