/*
 * jsonx.c — jansson helpers: strings of any bytes, numbers JSON cannot hold, and the
 * pieces shared by the document, node and search writers (types, tensors, attributes).
 */
#include "render/jsonx.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------------------------------
 * Allocation.  A document is tens of thousands of small jansson objects built, dumped and
 * freed at once; freeing them one by one cost more than building them.  jansson's
 * allocator hooks are process-wide, so every block carries a 16-byte header saying where
 * it came from: blocks made while this thread has a scratch arena open are bump-allocated
 * and their free() is a no-op (the arena goes in one call); all others are malloc'd.
 * The hooks are installed by a constructor, before main() and any jansson use.
 */
#define JX_HDR 16u
#define JX_MAGIC_ARENA 0x6a78415245u
#define JX_MAGIC_HEAP 0x6a78484550u
#define JX_CHUNK ((size_t)1 << 20)

typedef struct jx_chunk {
	struct jx_chunk *next;
	size_t used, size;
} jx_chunk;

static _Thread_local jx_chunk *tl_chunks;
static _Thread_local bool tl_active;
/* Set by any failed allocation while a JSON answer is built: the builders drop what they
 * could not make (jx_set ignores NULL), and jx_dump() then refuses to write the rest. */
static _Thread_local bool tl_nomem;

void jx_oom(void)
{
	tl_nomem = true;
}

void jx_oom_reset(void)
{
	tl_nomem = false;
}

static void *jx_malloc(size_t n)
{
	if (n > SIZE_MAX - 2 * JX_HDR) {
		tl_nomem = true;
		return NULL;
	}
	size_t need = (n + JX_HDR + 15u) & ~(size_t)15u;
	uint64_t *h;
	if (tl_active && need <= JX_CHUNK / 4) {
		jx_chunk *c = tl_chunks;
		if (c == NULL || c->size - c->used < need) {
			c = malloc(JX_CHUNK);
			if (c == NULL) {
				tl_nomem = true;
				return NULL;
			}
			c->next = tl_chunks;
			c->used = (sizeof(jx_chunk) + 15u) & ~(size_t)15u;
			c->size = JX_CHUNK;
			tl_chunks = c;
		}
		h = (uint64_t *)(void *)((char *)c + c->used);
		c->used += need;
		h[0] = JX_MAGIC_ARENA;
	} else {
		h = malloc(need);
		if (h == NULL) {
			tl_nomem = true;
			return NULL;
		}
		h[0] = JX_MAGIC_HEAP;
	}
	return (char *)h + JX_HDR;
}

static void jx_free(void *p)
{
	if (p == NULL)
		return;
	uint64_t *h = (uint64_t *)(void *)((char *)p - JX_HDR);
	if (h[0] == JX_MAGIC_HEAP)
		free(h);
	/* arena blocks go with their arena */
}

__attribute__((constructor)) static void jx_install(void)
{
	json_set_alloc_funcs(jx_malloc, jx_free);
}

void jx_scratch_begin(void)
{
	tl_active = true;
}

void jx_scratch_end(void)
{
	tl_active = false;
	jx_chunk *c = tl_chunks;
	while (c != NULL) {
		jx_chunk *next = c->next;
		free(c);
		c = next;
	}
	tl_chunks = NULL;
}

json_t *jx_str(oxp_str s)
{
	if (s.len == 0)
		return json_stringn_nocheck("", 0);
	if (oxp_utf8_valid(s.p, s.len))
		return json_stringn_nocheck(s.p, s.len);
	if (s.len > SIZE_MAX / 3)
		return NULL;
	char *tmp = malloc(s.len * 3);
	if (tmp == NULL) {
		tl_nomem = true;
		return NULL;
	}
	size_t o = 0;
	const unsigned char *u = (const unsigned char *)s.p;
	for (size_t i = 0; i < s.len;) {
		uint32_t cp;
		size_t k = oxp_utf8_at(u, s.len, i, &cp);
		if (k == 0) {
			tmp[o++] = (char)0xef; /* U+FFFD */
			tmp[o++] = (char)0xbf;
			tmp[o++] = (char)0xbd;
			i++;
		} else {
			memcpy(tmp + o, u + i, k);
			o += k;
			i += k;
		}
	}
	json_t *j = json_stringn_nocheck(tmp, o);
	free(tmp);
	return j;
}

json_t *jx_cstr(const char *s)
{
	return jx_str((oxp_str){s, strlen(s)});
}

void jx_set(json_t *obj, const char *key, json_t *value)
{
	if (value != NULL)
		json_object_set_new_nocheck(obj, key, value);
}

static json_t *hex_of(oxp_str s)
{
	static const char digits[] = "0123456789abcdef";
	if (s.len > SIZE_MAX / 2)
		return NULL;
	char *tmp = malloc(s.len * 2 + 1);
	if (tmp == NULL) {
		tl_nomem = true;
		return NULL;
	}
	for (size_t i = 0; i < s.len; i++) {
		unsigned char c = (unsigned char)s.p[i];
		tmp[2 * i] = digits[c >> 4];
		tmp[2 * i + 1] = digits[c & 15];
	}
	json_t *j = json_stringn_nocheck(tmp, s.len * 2);
	free(tmp);
	return j;
}

void jx_set_str(json_t *obj, const char *key, oxp_str s)
{
	jx_set(obj, key, jx_str(s));
	if (s.len > 0 && !oxp_utf8_valid(s.p, s.len)) {
		char k2[64];
		snprintf(k2, sizeof(k2), "%s_hex", key);
		jx_set(obj, k2, hex_of(s));
	}
}

void jx_set_str_array(json_t *obj, const char *key, const oxp_str *s, size_t n)
{
	json_t *a = json_array();
	bool invalid = false;
	for (size_t i = 0; a != NULL && i < n; i++) {
		json_array_append_new(a, jx_str(s[i]));
		invalid |= !oxp_utf8_valid(s[i].p, s[i].len);
	}
	jx_set(obj, key, a);
	if (!invalid)
		return;
	char k2[64];
	snprintf(k2, sizeof(k2), "%s_hex", key);
	json_t *h = json_array();
	for (size_t i = 0; h != NULL && i < n; i++)
		json_array_append_new(h, oxp_utf8_valid(s[i].p, s[i].len) ? json_null() : hex_of(s[i]));
	jx_set(obj, k2, h);
}

void jx_set_str_nonempty(json_t *obj, const char *key, oxp_str s)
{
	if (s.len > 0)
		jx_set_str(obj, key, s);
}

json_t *jx_real(double v)
{
	if (isnan(v))
		return json_string("NaN");
	if (isinf(v))
		return json_string(v > 0 ? "Infinity" : "-Infinity");
	return json_real(v);
}

json_t *jx_int(int64_t v)
{
	return json_integer((json_int_t)v);
}

json_t *jx_count(uint64_t v)
{
	return json_integer((json_int_t)(v > (uint64_t)INT64_MAX ? (uint64_t)INT64_MAX : v));
}

json_t *jx_entries(const oxp_entry *e, size_t n)
{
	json_t *a = json_array();
	for (size_t i = 0; a != NULL && i < n; i++) {
		json_t *o = json_object();
		jx_set_str(o, "key", e[i].key);
		jx_set_str(o, "value", e[i].value);
		json_array_append_new(a, o);
	}
	return a;
}

json_t *jx_dims(const int64_t *dims, size_t n)
{
	json_t *a = json_array();
	for (size_t i = 0; a != NULL && i < n; i++)
		json_array_append_new(a, jx_int(dims[i]));
	return a;
}

json_t *jx_ggml_ne(const int64_t *dims, size_t n)
{
	int64_t ne[4] = {1, 1, 1, 1};
	for (size_t i = 0; i < n && i < 3; i++)
		ne[i] = dims[n - 1 - i];
	if (n >= 4) {
		int64_t rest = 1;
		for (size_t i = 0; i + 3 < n; i++) {
			if (dims[i] != 0 && rest > INT64_MAX / dims[i]) {
				rest = -1; /* cannot happen for validated dims; keep JSON honest */
				break;
			}
			rest *= dims[i];
		}
		ne[3] = rest;
	}
	return jx_dims(ne, 4);
}

void jx_set_dims(json_t *obj, const char *key, const oxp_dim *dims, int32_t rank)
{
	jx_set(obj, key, jx_dim_list(dims, rank));
	bool invalid = false;
	for (int32_t i = 0; i < rank; i++)
		invalid |= dims[i].kind == OXP_DIM_PARAM &&
		           !oxp_utf8_valid(dims[i].param.p, dims[i].param.len);
	if (!invalid)
		return;
	char k2[64];
	snprintf(k2, sizeof(k2), "%s_hex", key);
	json_t *h = json_array();
	for (int32_t i = 0; h != NULL && i < rank; i++) {
		const oxp_dim *d = &dims[i];
		bool bad = d->kind == OXP_DIM_PARAM && !oxp_utf8_valid(d->param.p, d->param.len);
		json_array_append_new(h, bad ? hex_of(d->param) : json_null());
	}
	jx_set(obj, k2, h);
}

json_t *jx_dim_list(const oxp_dim *dims, int32_t rank)
{
	if (rank < 0)
		return json_null();
	json_t *a = json_array();
	for (int32_t i = 0; a != NULL && i < rank; i++) {
		const oxp_dim *d = &dims[i];
		if (d->kind == OXP_DIM_VALUE && d->value >= 0)
			json_array_append_new(a, jx_int(d->value));
		else if (d->kind == OXP_DIM_PARAM)
			json_array_append_new(a, jx_str(d->param));
		else
			json_array_append_new(a, json_null());
	}
	return a;
}

static const char *type_kind_name(oxp_type_kind k)
{
	static const char *const names[] = {"none",     "tensor",        "sequence", "map",
	                                    "optional", "sparse_tensor", "opaque"};
	return (unsigned)k < sizeof(names) / sizeof(names[0]) ? names[k] : "none";
}

/* TypeProto nesting is bounded by the parser's message depth (<= 100): the recursion here
 * is too. */
json_t *jx_type(const oxp_type *t)
{
	if (t == NULL)
		return json_null();
	json_t *o = json_object();
	jx_set(o, "kind", json_string(type_kind_name(t->kind)));
	switch (t->kind) {
	case OXP_TYPE_TENSOR:
	case OXP_TYPE_SPARSE_TENSOR:
		jx_set(o, "elem_type", json_string(oxp_dtype_name(t->elem_type)));
		if (t->shape != NULL)
			jx_set_dims(o, "shape", t->shape->dims, (int32_t)t->shape->ndims);
		else
			jx_set(o, "shape", json_null());
		if (t->shape != NULL) {
			bool any = false;
			for (size_t i = 0; i < t->shape->ndims; i++)
				any |= t->shape->dims[i].denotation.len > 0;
			if (any) {
				oxp_str *den = malloc((t->shape->ndims + 1) * sizeof(oxp_str));
				if (den != NULL) {
					for (size_t i = 0; i < t->shape->ndims; i++)
						den[i] = t->shape->dims[i].denotation;
					jx_set_str_array(o, "dim_denotations", den, t->shape->ndims);
					free(den);
				} else {
					tl_nomem = true;
				}
			}
		}
		break;
	case OXP_TYPE_SEQUENCE:
	case OXP_TYPE_OPTIONAL:
		jx_set(o, "elem", jx_type(t->elem));
		break;
	case OXP_TYPE_MAP:
		jx_set(o, "key_type", json_string(oxp_dtype_name(t->key_type)));
		jx_set(o, "value", jx_type(t->elem));
		break;
	case OXP_TYPE_OPAQUE:
		jx_set_str(o, "domain", t->opaque_domain);
		jx_set_str(o, "name", t->opaque_name);
		break;
	default:
		break;
	}
	jx_set_str_nonempty(o, "denotation", t->denotation);
	return o;
}

json_t *jx_value_type(const oxp_value_type *t)
{
	static const char *const src[] = {"none", "declared", "initializer", "inferred"};
	if (t == NULL || t->source == OXP_SHAPE_NONE)
		return json_null();
	json_t *o = json_object();
	jx_set(o, "elem_type", t->elem_type ? json_string(oxp_dtype_name(t->elem_type)) : json_null());
	jx_set_dims(o, "shape", t->dims, t->rank);
	jx_set(o, "source", json_string(src[(unsigned)t->source % 4]));
	return o;
}

json_t *jx_tensor(const oxp_tensor *t, const char *ref)
{
	json_t *o = json_object();
	if (o == NULL)
		return NULL;
	jx_set_str(o, "name", t->name);
	if (ref != NULL)
		jx_set(o, "ref", jx_cstr(ref));
	jx_set(o, "dtype", json_string(oxp_dtype_name(t->data_type)));
	jx_set(o, "data_type", jx_int(t->data_type));
	jx_set(o, "dims", jx_dims(t->dims, t->ndims));
	jx_set(o, "ggml_ne", jx_ggml_ne(t->dims, t->ndims));
	uint64_t count = 0;
	(void)oxp_dims_count(t->dims, t->ndims, &count); /* validated by the parser */
	jx_set(o, "count", json_integer((json_int_t)count));
	uint64_t bytes;
	if (t->data_type == OXP_DT_STRING) {
		bytes = 0;
		for (size_t i = 0; i < t->nstring_data; i++)
			bytes = oxp_sat_add_u64(bytes, t->string_data[i].len);
	} else {
		unsigned bits = oxp_dtype_bits(t->data_type);
		bytes = count > UINT64_MAX / 128 ? 0 : (count * bits + 7) / 8;
	}
	jx_set(o, "bytes", jx_count(bytes)); /* 2^63-1 COMPLEX128 elements: past INT64_MAX */
	jx_set(o, "storage", json_string(oxp_storage_name(t->storage)));
	if (t->storage == OXP_STORE_RAW)
		jx_set(o, "stored_bytes", json_integer((json_int_t)t->raw_data.len));
	else if (t->storage != OXP_STORE_NONE && t->storage != OXP_STORE_EXTERNAL &&
	         t->storage != OXP_STORE_STRING_DATA)
		jx_set(o, "stored_bytes", json_integer((json_int_t)t->typed_bytes));
	if (t->nexternal_data > 0) {
		json_t *x = json_object();
		for (size_t i = 0; i < t->nexternal_data; i++) {
			char key[64];
			size_t kl = t->external_data[i].key.len < 40 ? t->external_data[i].key.len : 40;
			if (!oxp_utf8_valid(t->external_data[i].key.p, kl))
				continue;
			if (kl > 0) /* an empty key may have no bytes at all (p == NULL) */
				memcpy(key, t->external_data[i].key.p, kl);
			key[kl] = '\0';
			if (strlen(key) != kl)
				continue; /* keys with NUL bytes are reported by the preview, not here */
			jx_set_str(x, key, t->external_data[i].value);
		}
		jx_set(o, "external_data", x);
	}
	if (t->has_segment) {
		json_t *sg = json_object();
		jx_set(sg, "begin", jx_int(t->segment_begin));
		jx_set(sg, "end", jx_int(t->segment_end));
		jx_set(o, "segment", sg);
	}
	jx_set_str_nonempty(o, "doc_string", t->doc_string);
	if (t->nmetadata_props > 0)
		jx_set(o, "metadata_props", jx_entries(t->metadata_props, t->nmetadata_props));
	return o;
}

static json_t *sparse_json(const oxp_sparse_tensor *sp, const char *ref)
{
	json_t *o = json_object();
	if (ref != NULL)
		jx_set(o, "ref", jx_cstr(ref));
	jx_set(o, "dims", jx_dims(sp->dims, sp->ndims));
	jx_set(o, "values", sp->values ? jx_tensor(sp->values, NULL) : json_null());
	jx_set(o, "indices", sp->indices ? jx_tensor(sp->indices, NULL) : json_null());
	return o;
}

static json_t *scope_ref(const oxp_dag *d, uint32_t node, const oxp_graph *g)
{
	/* the scope of this graph: one of the node's subscopes */
	const oxp_dag_view *v = oxp_dag_get(d);
	const oxp_dnode *dn = &v->nodes[node];
	for (uint32_t k = 0; k < dn->nsubscopes; k++) {
		const oxp_scope *s = &v->scopes[dn->first_subscope + k];
		if (s->graph == g) {
			json_t *o = json_object();
			jx_set(o, "scope", jx_cstr(s->id));
			jx_set(o, "nodes", json_integer(s->nnodes));
			return o;
		}
	}
	return json_null();
}

json_t *jx_attr(const oxp_dag *d, uint32_t node, const oxp_attr *a, size_t index)
{
	const oxp_dag_view *v = oxp_dag_get(d);
	const char *nid = v->nodes[node].id;
	char ref[JX_REF_MAX];
	json_t *o = json_object();
	jx_set_str(o, "name", a->name);
	jx_set(o, "type", json_string(oxp_attr_type_name(a->type)));
	if (a->type_inferred)
		jx_set(o, "type_inferred", json_true());
	jx_set_str_nonempty(o, "ref_attr_name", a->ref_attr_name);
	jx_set_str_nonempty(o, "doc_string", a->doc_string);
	if (a->ref_attr_name.len > 0)
		return o;
	json_t *val = NULL, *arr;
	switch (a->type) {
	case OXP_ATTR_FLOAT:
		val = jx_real(a->f);
		break;
	case OXP_ATTR_INT:
		val = jx_int(a->i);
		break;
	case OXP_ATTR_STRING:
		jx_set_str(o, "value", a->s);
		break;
	case OXP_ATTR_TENSOR:
		snprintf(ref, sizeof(ref), "%s@a%zu", nid, index);
		val = a->t ? jx_tensor(a->t, ref) : json_null();
		break;
	case OXP_ATTR_GRAPH:
		val = a->g ? scope_ref(d, node, a->g) : json_null();
		break;
	case OXP_ATTR_SPARSE_TENSOR:
		snprintf(ref, sizeof(ref), "%s@a%zu", nid, index);
		val = a->sparse_tensor ? sparse_json(a->sparse_tensor, ref) : json_null();
		break;
	case OXP_ATTR_TYPE_PROTO:
		val = jx_type(a->tp);
		break;
	case OXP_ATTR_FLOATS:
		val = arr = json_array();
		for (size_t i = 0; i < a->nfloats; i++)
			json_array_append_new(arr, jx_real(a->floats[i]));
		break;
	case OXP_ATTR_INTS:
		val = jx_dims(a->ints, a->nints);
		break;
	case OXP_ATTR_STRINGS: {
		val = arr = json_array();
		bool invalid = false;
		for (size_t i = 0; i < a->nstrings; i++) {
			json_array_append_new(arr, jx_str(a->strings[i]));
			invalid |= !oxp_utf8_valid(a->strings[i].p, a->strings[i].len);
		}
		if (invalid) {
			json_t *hex = json_array();
			for (size_t i = 0; i < a->nstrings; i++)
				json_array_append_new(hex, hex_of(a->strings[i]));
			jx_set(o, "value_hex", hex);
		}
		break;
	}
	case OXP_ATTR_TENSORS:
		val = arr = json_array();
		for (size_t i = 0; i < a->ntensors; i++) {
			snprintf(ref, sizeof(ref), "%s@a%zu.%zu", nid, index, i);
			json_array_append_new(arr, jx_tensor(&a->tensors[i], ref));
		}
		break;
	case OXP_ATTR_GRAPHS:
		val = arr = json_array();
		for (size_t i = 0; i < a->ngraphs; i++)
			json_array_append_new(arr, scope_ref(d, node, &a->graphs[i]));
		break;
	case OXP_ATTR_SPARSE_TENSORS:
		val = arr = json_array();
		for (size_t i = 0; i < a->nsparse_tensors; i++) {
			snprintf(ref, sizeof(ref), "%s@a%zu.%zu", nid, index, i);
			json_array_append_new(arr, sparse_json(&a->sparse_tensors[i], ref));
		}
		break;
	case OXP_ATTR_TYPE_PROTOS:
		val = arr = json_array();
		for (size_t i = 0; i < a->ntype_protos; i++)
			json_array_append_new(arr, jx_type(&a->type_protos[i]));
		break;
	default:
		val = json_null();
		break;
	}
	if (val != NULL)
		jx_set(o, "value", val);
	return o;
}

typedef struct dumpctx {
	oxr_buf *out;
} dumpctx;

static int dump_cb(const char *buffer, size_t size, void *data)
{
	dumpctx *c = data;
	oxr_buf *b = c->out;
	if (size == 1 && !b->failed && b->len + 1 < b->cap && b->len + 1 <= b->max) {
		/* most tokens are one byte */
		b->data[b->len++] = buffer[0];
		b->data[b->len] = '\0';
		return 0;
	}
	return oxr_buf_append(b, buffer, size) ? 0 : -1;
}

oxr_code jx_nomem(oxr_error *err)
{
	if (err != NULL) {
		err->code = OXR_E_NOMEM;
		snprintf(err->message, sizeof(err->message), "out of memory building JSON");
	}
	return OXR_E_NOMEM;
}

oxr_code jx_dump(const json_t *j, oxr_buf *out, oxr_error *err)
{
	if (j == NULL || tl_nomem) {
		tl_nomem = false;
		return jx_nomem(err);
	}
	dumpctx c = {out};
	if (json_dump_callback(j, dump_cb, &c, JSON_COMPACT | JSON_REAL_PRECISION(9)) != 0) {
		if (err != NULL) {
			err->code = out->failed ? OXR_E_TOO_BIG : OXR_E_NOMEM;
			snprintf(err->message, sizeof(err->message), "JSON output exceeds %zu bytes",
			         out->max);
		}
		return out->failed ? OXR_E_TOO_BIG : OXR_E_NOMEM;
	}
	return OXR_OK;
}
