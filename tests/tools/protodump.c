/*
 * protodump.c — prints what the parser decoded as canonical JSON: every field of every
 * message of oxp_model_proto (or of a lone oxp_tensor), so that tests/diff/proto.py can
 * compare it field by field with what python3-onnx decodes from the same file.
 *
 *   protodump [--tensor] FILE...
 *
 * One line per file: {"path": P, "ok": true, "model": {...}} (with --tensor: "tensor"), or
 * {"path": P, "ok": false, "error": {"code", "offset", "path", "message"}}.  Exit status 0
 * when every file parsed, 1 when one failed, 2 on usage or I/O errors.
 *
 * The JSON format (mirrored by tests/diff/proto.py; keys always in this order):
 *   - each message is an object with one key per onnx.proto field, named as in
 *     onnx.proto; absent scalars print their default, absent messages print null;
 *   - strings and bytes print as JSON strings when they are valid UTF-8, otherwise as
 *     {"hex": "<lower-case hex>"}, so that any byte string has one deterministic form;
 *   - floats print as JSON numbers with 9 significant digits ("%.9g", exact for float32),
 *     NaN, the infinities and negative zero as the strings "nan", "inf", "-inf", "-0";
 *   - TensorProto.raw_data prints as {"len": N, "sha256": HEX}; the typed value fields
 *     (float_data, ...) print as the list of those present ("typed_fields") and their
 *     payload bytes ("typed_bytes"), since values are decoded on demand (parser/tensor.c);
 *     "storage" is the parser's derived storage kind;
 *   - TypeProto prints "kind" (the oneof member set, or null) and that member's fields;
 *     TensorShapeProto.Dimension prints "kind" ("value", "param" or null) and the one set;
 *   - AttributeProto.type prints as a number, "type_inferred" tells when it was absent and
 *     inferred from the value present (IR version 1).
 */
#include "parser/oxp.h"

#include <inttypes.h>
#include <math.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------------------------------
 * A tiny JSON writer: tracks whether a comma is due at each nesting level.
 */
#define JMAX 512

typedef struct jw {
	FILE *f;
	unsigned depth;
	bool first[JMAX];
} jw;

static void sep(jw *w)
{
	if (!w->first[w->depth])
		fputc(',', w->f);
	w->first[w->depth] = false;
}

static void open_(jw *w, char ch)
{
	fputc(ch, w->f);
	if (w->depth + 1 >= JMAX) {
		fprintf(stderr, "protodump: nesting too deep for the JSON writer\n");
		exit(2);
	}
	w->depth++;
	w->first[w->depth] = true;
}

static void close_(jw *w, char ch)
{
	fputc(ch, w->f);
	w->depth--;
}

/* Length of the valid UTF-8 sequence at s[0..n), or 0 when it is not one (overlong forms,
 * surrogates and code points above U+10FFFF are invalid, as in Python's strict codec). */
static size_t utf8_seq(const unsigned char *s, size_t n)
{
	unsigned char c = s[0];
	size_t len;
	uint32_t cp;
	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf) {
		len = 2;
		cp = c & 0x1fu;
	} else if (c >= 0xe0 && c <= 0xef) {
		len = 3;
		cp = c & 0x0fu;
	} else if (c >= 0xf0 && c <= 0xf4) {
		len = 4;
		cp = c & 0x07u;
	} else {
		return 0;
	}
	if (len > n)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3fu);
	}
	if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) || cp > 0x10ffff ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return len;
}

static bool valid_utf8(const unsigned char *s, size_t n)
{
	for (size_t i = 0; i < n;) {
		size_t k = utf8_seq(s + i, n - i);
		if (k == 0)
			return false;
		i += k;
	}
	return true;
}

static void bytes_value(jw *w, const void *p, size_t n)
{
	const unsigned char *s = p;
	sep(w);
	if (!valid_utf8(s, n)) {
		fputs("{\"hex\":\"", w->f);
		for (size_t i = 0; i < n; i++)
			fprintf(w->f, "%02x", s[i]);
		fputs("\"}", w->f);
		return;
	}
	fputc('"', w->f);
	for (size_t i = 0; i < n; i++) {
		unsigned char c = s[i];
		if (c == '"' || c == '\\')
			fprintf(w->f, "\\%c", c);
		else if (c < 0x20 || c == 0x7f)
			fprintf(w->f, "\\u%04x", c);
		else
			fputc(c, w->f);
	}
	fputc('"', w->f);
}

static void key(jw *w, const char *k)
{
	sep(w);
	fprintf(w->f, "\"%s\":", k);
	w->first[w->depth] = true; /* the value that follows needs no comma */
}

static void str_value(jw *w, oxp_str s)
{
	bytes_value(w, s.p, s.len);
}

static void kstr(jw *w, const char *k, oxp_str s)
{
	key(w, k);
	str_value(w, s);
}

static void kint(jw *w, const char *k, int64_t v)
{
	key(w, k);
	sep(w);
	fprintf(w->f, "%" PRId64, v);
}

static void kbool(jw *w, const char *k, bool v)
{
	key(w, k);
	sep(w);
	fputs(v ? "true" : "false", w->f);
}

static void knull(jw *w, const char *k)
{
	key(w, k);
	sep(w);
	fputs("null", w->f);
}

static void kname(jw *w, const char *k, const char *v)
{
	key(w, k);
	sep(w);
	fprintf(w->f, "\"%s\"", v);
}

static void float_value(jw *w, double v, int digits)
{
	sep(w);
	if (isnan(v))
		fputs("\"nan\"", w->f);
	else if (isinf(v))
		fputs(v > 0 ? "\"inf\"" : "\"-inf\"", w->f);
	else if (v == 0 && signbit(v))
		fputs("\"-0\"", w->f); /* a JSON reader would lose the sign of -0 */
	else
		fprintf(w->f, "%.*g", digits, v);
}

#define BEGIN_OBJ(w) open_(w, '{')
#define END_OBJ(w) close_(w, '}')

static void kobj(jw *w, const char *k)
{
	key(w, k);
	sep(w);
	BEGIN_OBJ(w);
}

static void karr(jw *w, const char *k)
{
	key(w, k);
	sep(w);
	open_(w, '[');
}

static void end_arr(jw *w)
{
	close_(w, ']');
}

/* ---------------------------------------------------------------------------------------
 * Messages
 */
static void kstrs(jw *w, const char *k, size_t n, const oxp_str *a)
{
	karr(w, k);
	for (size_t i = 0; i < n; i++)
		str_value(w, a[i]);
	end_arr(w);
}

static void kints(jw *w, const char *k, size_t n, const int64_t *a)
{
	karr(w, k);
	for (size_t i = 0; i < n; i++) {
		sep(w);
		fprintf(w->f, "%" PRId64, a[i]);
	}
	end_arr(w);
}

static void kentries(jw *w, const char *k, size_t n, const oxp_entry *a)
{
	karr(w, k);
	for (size_t i = 0; i < n; i++) {
		sep(w);
		BEGIN_OBJ(w);
		kstr(w, "key", a[i].key);
		kstr(w, "value", a[i].value);
		END_OBJ(w);
	}
	end_arr(w);
}

static void kopsets(jw *w, const char *k, size_t n, const oxp_opset *a)
{
	karr(w, k);
	for (size_t i = 0; i < n; i++) {
		sep(w);
		BEGIN_OBJ(w);
		kstr(w, "domain", a[i].domain);
		kint(w, "version", a[i].version);
		END_OBJ(w);
	}
	end_arr(w);
}

static void tensor(jw *w, const oxp_tensor *t)
{
	sep(w);
	BEGIN_OBJ(w);
	kints(w, "dims", t->ndims, t->dims);
	kint(w, "data_type", t->data_type);
	if (t->has_segment) {
		kobj(w, "segment");
		kint(w, "begin", t->segment_begin);
		kint(w, "end", t->segment_end);
		END_OBJ(w);
	} else {
		knull(w, "segment");
	}
	kstr(w, "name", t->name);
	kstr(w, "doc_string", t->doc_string);
	if (t->has_raw_data) {
		/* EVP_Digest: libonnxviz.a forwards it to the libcrypto it loads on first use
		 * (store/crypto.c); SHA256() would need libcrypto linked */
		unsigned char md[32];
		unsigned int mdlen = 0;
		if (EVP_Digest(t->raw_data.len ? t->raw_data.p : "", t->raw_data.len, md, &mdlen,
		               EVP_sha256(), NULL) != 1 || mdlen != sizeof(md))
			memset(md, 0, sizeof(md));
		kobj(w, "raw_data");
		kint(w, "len", (int64_t)t->raw_data.len);
		key(w, "sha256");
		sep(w);
		fputc('"', w->f);
		for (size_t i = 0; i < sizeof(md); i++)
			fprintf(w->f, "%02x", md[i]);
		fputc('"', w->f);
		END_OBJ(w);
	} else {
		knull(w, "raw_data");
	}
	kstrs(w, "string_data", t->nstring_data, t->string_data);
	kentries(w, "external_data", t->nexternal_data, t->external_data);
	kint(w, "data_location", t->data_location);
	static const struct {
		unsigned num;
		const char *name;
	} typed[] = {{4, "float_data"}, {5, "int32_data"}, {7, "int64_data"},
	             {10, "double_data"}, {11, "uint64_data"}};
	karr(w, "typed_fields");
	for (size_t i = 0; i < sizeof(typed) / sizeof(typed[0]); i++) {
		if (t->typed_fields & (1u << typed[i].num)) {
			sep(w);
			fprintf(w->f, "\"%s\"", typed[i].name);
		}
	}
	end_arr(w);
	kint(w, "typed_bytes", (int64_t)t->typed_bytes);
	kname(w, "storage", oxp_storage_name(t->storage));
	kentries(w, "metadata_props", t->nmetadata_props, t->metadata_props);
	END_OBJ(w);
}

static void ktensor(jw *w, const char *k, const oxp_tensor *t)
{
	if (t == NULL) {
		knull(w, k);
		return;
	}
	key(w, k);
	tensor(w, t);
}

static void sparse(jw *w, const oxp_sparse_tensor *s)
{
	sep(w);
	BEGIN_OBJ(w);
	ktensor(w, "values", s->values);
	ktensor(w, "indices", s->indices);
	kints(w, "dims", s->ndims, s->dims);
	END_OBJ(w);
}

static void ksparse(jw *w, const char *k, const oxp_sparse_tensor *s)
{
	if (s == NULL) {
		knull(w, k);
		return;
	}
	key(w, k);
	sparse(w, s);
}

static void kdim_choice(jw *w, oxp_dim_kind kind, int64_t value, oxp_str param)
{
	if (kind == OXP_DIM_VALUE) {
		kname(w, "kind", "value");
		kint(w, "dim_value", value);
	} else if (kind == OXP_DIM_PARAM) {
		kname(w, "kind", "param");
		kstr(w, "dim_param", param);
	} else {
		knull(w, "kind");
	}
}

static void type(jw *w, const oxp_type *t);

static void ktype(jw *w, const char *k, const oxp_type *t)
{
	if (t == NULL) {
		knull(w, k);
		return;
	}
	key(w, k);
	type(w, t);
}

static void type(jw *w, const oxp_type *t)
{
	static const char *const kinds[] = {NULL,     "tensor_type",        "sequence_type",
	                                    "map_type", "optional_type",     "sparse_tensor_type",
	                                    "opaque_type"};
	sep(w);
	BEGIN_OBJ(w);
	kstr(w, "denotation", t->denotation);
	if ((unsigned)t->kind >= sizeof(kinds) / sizeof(kinds[0]) || kinds[t->kind] == NULL) {
		knull(w, "kind");
		END_OBJ(w);
		return;
	}
	kname(w, "kind", kinds[t->kind]);
	switch (t->kind) {
	case OXP_TYPE_TENSOR:
	case OXP_TYPE_SPARSE_TENSOR:
		kint(w, "elem_type", t->elem_type);
		if (t->shape == NULL) {
			knull(w, "shape");
			break;
		}
		karr(w, "shape");
		for (size_t i = 0; i < t->shape->ndims; i++) {
			const oxp_dim *d = &t->shape->dims[i];
			sep(w);
			BEGIN_OBJ(w);
			kdim_choice(w, d->kind, d->value, d->param);
			kstr(w, "denotation", d->denotation);
			END_OBJ(w);
		}
		end_arr(w);
		break;
	case OXP_TYPE_SEQUENCE:
	case OXP_TYPE_OPTIONAL:
		ktype(w, "elem_type", t->elem);
		break;
	case OXP_TYPE_MAP:
		kint(w, "key_type", t->key_type);
		ktype(w, "value_type", t->elem);
		break;
	case OXP_TYPE_OPAQUE:
		kstr(w, "domain", t->opaque_domain);
		kstr(w, "name", t->opaque_name);
		break;
	default:
		break;
	}
	END_OBJ(w);
}

static void kvalue_infos(jw *w, const char *k, size_t n, const oxp_value_info *a)
{
	karr(w, k);
	for (size_t i = 0; i < n; i++) {
		sep(w);
		BEGIN_OBJ(w);
		kstr(w, "name", a[i].name);
		ktype(w, "type", a[i].type);
		kstr(w, "doc_string", a[i].doc_string);
		kentries(w, "metadata_props", a[i].nmetadata_props, a[i].metadata_props);
		END_OBJ(w);
	}
	end_arr(w);
}

static void graph(jw *w, const oxp_graph *g);

static void kgraph(jw *w, const char *k, const oxp_graph *g)
{
	if (g == NULL) {
		knull(w, k);
		return;
	}
	key(w, k);
	graph(w, g);
}

static void attr(jw *w, const oxp_attr *a)
{
	sep(w);
	BEGIN_OBJ(w);
	kstr(w, "name", a->name);
	kstr(w, "ref_attr_name", a->ref_attr_name);
	kstr(w, "doc_string", a->doc_string);
	kint(w, "type", a->type);
	kbool(w, "type_inferred", a->type_inferred);
	key(w, "f");
	float_value(w, a->f, 9);
	kint(w, "i", a->i);
	kstr(w, "s", a->s);
	ktensor(w, "t", a->t);
	kgraph(w, "g", a->g);
	ksparse(w, "sparse_tensor", a->sparse_tensor);
	ktype(w, "tp", a->tp);
	karr(w, "floats");
	for (size_t i = 0; i < a->nfloats; i++)
		float_value(w, a->floats[i], 9);
	end_arr(w);
	kints(w, "ints", a->nints, a->ints);
	kstrs(w, "strings", a->nstrings, a->strings);
	karr(w, "tensors");
	for (size_t i = 0; i < a->ntensors; i++)
		tensor(w, &a->tensors[i]);
	end_arr(w);
	karr(w, "graphs");
	for (size_t i = 0; i < a->ngraphs; i++)
		graph(w, &a->graphs[i]);
	end_arr(w);
	karr(w, "sparse_tensors");
	for (size_t i = 0; i < a->nsparse_tensors; i++)
		sparse(w, &a->sparse_tensors[i]);
	end_arr(w);
	karr(w, "type_protos");
	for (size_t i = 0; i < a->ntype_protos; i++)
		type(w, &a->type_protos[i]);
	end_arr(w);
	END_OBJ(w);
}

static void sharding_spec(jw *w, const oxp_sharding_spec *s)
{
	sep(w);
	BEGIN_OBJ(w);
	kstr(w, "tensor_name", s->tensor_name);
	kints(w, "device", s->ndevice, s->device);
	karr(w, "index_to_device_group_map");
	for (size_t i = 0; i < s->nindex_to_device_group_map; i++) {
		const oxp_int_list_entry *e = &s->index_to_device_group_map[i];
		sep(w);
		BEGIN_OBJ(w);
		kint(w, "key", e->key);
		kints(w, "value", e->nvalue, e->value);
		END_OBJ(w);
	}
	end_arr(w);
	karr(w, "sharded_dim");
	for (size_t i = 0; i < s->nsharded_dim; i++) {
		const oxp_sharded_dim *d = &s->sharded_dim[i];
		sep(w);
		BEGIN_OBJ(w);
		kint(w, "axis", d->axis);
		karr(w, "simple_sharding");
		for (size_t j = 0; j < d->nsimple_sharding; j++) {
			const oxp_simple_sharded_dim *sd = &d->simple_sharding[j];
			sep(w);
			BEGIN_OBJ(w);
			kdim_choice(w, sd->kind, sd->dim_value, sd->dim_param);
			kint(w, "num_shards", sd->num_shards);
			END_OBJ(w);
		}
		end_arr(w);
		END_OBJ(w);
	}
	end_arr(w);
	END_OBJ(w);
}

static void knodes(jw *w, const char *k, size_t n, const oxp_node *a)
{
	karr(w, k);
	for (size_t i = 0; i < n; i++) {
		const oxp_node *nd = &a[i];
		sep(w);
		BEGIN_OBJ(w);
		kstrs(w, "input", nd->ninputs, nd->inputs);
		kstrs(w, "output", nd->noutputs, nd->outputs);
		kstr(w, "name", nd->name);
		kstr(w, "op_type", nd->op_type);
		kstr(w, "domain", nd->domain);
		kstr(w, "overload", nd->overload);
		karr(w, "attribute");
		for (size_t j = 0; j < nd->nattrs; j++)
			attr(w, &nd->attrs[j]);
		end_arr(w);
		kstr(w, "doc_string", nd->doc_string);
		kentries(w, "metadata_props", nd->nmetadata_props, nd->metadata_props);
		karr(w, "device_configurations");
		for (size_t j = 0; j < nd->ndevice_configurations; j++) {
			const oxp_node_device_config *dc = &nd->device_configurations[j];
			sep(w);
			BEGIN_OBJ(w);
			kstr(w, "configuration_id", dc->configuration_id);
			karr(w, "sharding_spec");
			for (size_t m = 0; m < dc->nsharding_spec; m++)
				sharding_spec(w, &dc->sharding_spec[m]);
			end_arr(w);
			kint(w, "pipeline_stage", dc->pipeline_stage);
			END_OBJ(w);
		}
		end_arr(w);
		END_OBJ(w);
	}
	end_arr(w);
}

static void graph(jw *w, const oxp_graph *g)
{
	sep(w);
	BEGIN_OBJ(w);
	knodes(w, "node", g->nnodes, g->nodes);
	kstr(w, "name", g->name);
	karr(w, "initializer");
	for (size_t i = 0; i < g->ninitializers; i++)
		tensor(w, &g->initializers[i]);
	end_arr(w);
	karr(w, "sparse_initializer");
	for (size_t i = 0; i < g->nsparse_initializers; i++)
		sparse(w, &g->sparse_initializers[i]);
	end_arr(w);
	kstr(w, "doc_string", g->doc_string);
	kvalue_infos(w, "input", g->ninputs, g->inputs);
	kvalue_infos(w, "output", g->noutputs, g->outputs);
	kvalue_infos(w, "value_info", g->nvalue_info, g->value_info);
	karr(w, "quantization_annotation");
	for (size_t i = 0; i < g->nquantization_annotation; i++) {
		const oxp_tensor_annotation *qa = &g->quantization_annotation[i];
		sep(w);
		BEGIN_OBJ(w);
		kstr(w, "tensor_name", qa->tensor_name);
		kentries(w, "quant_parameter_tensor_names", qa->nquant_parameter_tensor_names,
		         qa->quant_parameter_tensor_names);
		END_OBJ(w);
	}
	end_arr(w);
	kentries(w, "metadata_props", g->nmetadata_props, g->metadata_props);
	END_OBJ(w);
}

static void function(jw *w, const oxp_function *f)
{
	sep(w);
	BEGIN_OBJ(w);
	kstr(w, "name", f->name);
	kstrs(w, "input", f->ninputs, f->inputs);
	kstrs(w, "output", f->noutputs, f->outputs);
	kstrs(w, "attribute", f->nattribute, f->attribute);
	karr(w, "attribute_proto");
	for (size_t i = 0; i < f->nattribute_proto; i++)
		attr(w, &f->attribute_proto[i]);
	end_arr(w);
	knodes(w, "node", f->nnodes, f->nodes);
	kstr(w, "doc_string", f->doc_string);
	kopsets(w, "opset_import", f->nopset_import, f->opset_import);
	kstr(w, "domain", f->domain);
	kstr(w, "overload", f->overload);
	kvalue_infos(w, "value_info", f->nvalue_info, f->value_info);
	kentries(w, "metadata_props", f->nmetadata_props, f->metadata_props);
	END_OBJ(w);
}

static void model(jw *w, const oxp_model_proto *p)
{
	sep(w);
	BEGIN_OBJ(w);
	kint(w, "ir_version", p->ir_version);
	kopsets(w, "opset_import", p->nopset_import, p->opset_import);
	kstr(w, "producer_name", p->producer_name);
	kstr(w, "producer_version", p->producer_version);
	kstr(w, "domain", p->domain);
	kint(w, "model_version", p->model_version);
	kstr(w, "doc_string", p->doc_string);
	kgraph(w, "graph", p->graph);
	kentries(w, "metadata_props", p->nmetadata_props, p->metadata_props);
	karr(w, "training_info");
	for (size_t i = 0; i < p->ntraining_info; i++) {
		const oxp_training_info *t = &p->training_info[i];
		sep(w);
		BEGIN_OBJ(w);
		kgraph(w, "initialization", t->initialization);
		kgraph(w, "algorithm", t->algorithm);
		kentries(w, "initialization_binding", t->ninitialization_binding,
		         t->initialization_binding);
		kentries(w, "update_binding", t->nupdate_binding, t->update_binding);
		END_OBJ(w);
	}
	end_arr(w);
	karr(w, "functions");
	for (size_t i = 0; i < p->nfunctions; i++)
		function(w, &p->functions[i]);
	end_arr(w);
	karr(w, "configuration");
	for (size_t i = 0; i < p->nconfiguration; i++) {
		const oxp_device_config *c = &p->configuration[i];
		sep(w);
		BEGIN_OBJ(w);
		kstr(w, "name", c->name);
		kint(w, "num_devices", c->num_devices);
		kstrs(w, "device", c->ndevice, c->device);
		END_OBJ(w);
	}
	end_arr(w);
	END_OBJ(w);
}

/* ---------------------------------------------------------------------------------------
 */
static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (f == NULL)
		return NULL;
	size_t cap = 1 << 16, n = 0;
	char *buf = malloc(cap);
	while (buf != NULL) {
		n += fread(buf + n, 1, cap - n, f);
		if (n < cap)
			break;
		char *nb = realloc(buf, cap * 2);
		if (nb == NULL) {
			free(buf);
			buf = NULL;
			break;
		}
		buf = nb;
		cap *= 2;
	}
	if (buf != NULL && ferror(f)) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	*len = n;
	return buf;
}

static int dump_one(jw *w, const char *path, bool as_tensor)
{
	size_t len;
	char *buf = slurp(path, &len);
	if (buf == NULL) {
		fprintf(stderr, "protodump: %s: cannot read\n", path);
		return 2;
	}
	oxp_model *m;
	oxp_error e;
	oxp_code rc = as_tensor ? oxp_tensor_file_parse(&m, buf, len, NULL, &e)
	                        : oxp_model_parse(&m, buf, len, NULL, &e);
	w->depth = 0;
	w->first[0] = true;
	BEGIN_OBJ(w);
	kstr(w, "path", (oxp_str){path, strlen(path)});
	kbool(w, "ok", rc == OXP_OK);
	if (rc == OXP_OK) {
		if (as_tensor)
			ktensor(w, "tensor", oxp_model_tensor_get(m));
		else {
			key(w, "model");
			model(w, oxp_model_proto_get(m));
		}
		oxp_model_free(m);
	} else {
		kobj(w, "error");
		kname(w, "code", oxp_code_name(e.code));
		kint(w, "offset", (int64_t)e.offset);
		kstr(w, "path", (oxp_str){e.path, strlen(e.path)});
		kstr(w, "message", (oxp_str){e.message, strlen(e.message)});
		END_OBJ(w);
	}
	END_OBJ(w);
	fputc('\n', w->f);
	free(buf);
	return rc == OXP_OK ? 0 : 1;
}

int main(int argc, char **argv)
{
	bool as_tensor = false;
	int first = 1;
	if (argc > 1 && strcmp(argv[1], "--tensor") == 0) {
		as_tensor = true;
		first = 2;
	}
	if (first >= argc) {
		fprintf(stderr, "usage: protodump [--tensor] FILE...\n");
		return 2;
	}
	static jw w;
	w.f = stdout;
	int status = 0;
	for (int i = first; i < argc; i++) {
		int rc = dump_one(&w, argv[i], as_tensor);
		if (rc > status)
			status = rc;
	}
	if (fflush(stdout) != 0)
		return 2;
	return status;
}
