/*
 * fuzz_parse.c — libFuzzer target: the input parsed as an ONNX model and as a lone
 * TensorProto, with the decoder's invariants (docs/parser-security.md) checked after each.
 *
 * On success: every view (string, raw_data, segment) lies inside the input buffer, every
 * repeated field has an array exactly when its count is non-zero, derived enums are in
 * range, tensor dims are validated, and the arena holds no more than the budget.
 * On failure: the code is a parse error code, the offset is within the input, the message
 * is non-empty and NUL-terminated, and so is the headline (oxp_error_headline).
 * A broken invariant calls abort() (this is a test harness, not the parser), which libFuzzer
 * reports as a crash with the input saved.  Limits are small (64 MB arena) so the target
 * never runs out of memory; a second parse under tight limits (8 KB arena, 6 nodes, depth
 * 12, ...) drives small inputs into every limit and the clean-up after it.  Built with -fsanitize=fuzzer under `make fuzz`, and with
 * tests/fuzz/replay.c into a plain program that `make test` runs over the corpus and the
 * regression inputs.  The same input is also cut as the page cuts a model (oxp_cut).
 */
#include "parser/internal.h" /* oxp__scan_holes: the low-RSS open's file scanner */
#include "parser/oxp.h"
#include "tests/fuzz/fuzz_common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_MAX_ALLOC ((size_t)64 << 20)

typedef struct chk {
	const uint8_t *base;
	size_t size;
	unsigned depth;
} chk;

/* A view is absent (NULL, 0) or lies wholly inside [base, base+size]. */
static void view(const chk *k, const void *p, size_t len)
{
	if (p == NULL) {
		FZ_CHECK(len == 0);
		return;
	}
	const uint8_t *b = p;
	FZ_CHECK(b >= k->base && b <= k->base + k->size);
	FZ_CHECK(len <= (size_t)(k->base + k->size - b));
}

static void str(const chk *k, oxp_str s)
{
	view(k, s.p, s.len);
}

/* An array pointer is present exactly when its count is non-zero. */
#define ARRAY(n, a) FZ_CHECK(((n) == 0) == ((a) == NULL))

static void strs(const chk *k, size_t n, const oxp_str *a)
{
	ARRAY(n, a);
	for (size_t i = 0; i < n; i++)
		str(k, a[i]);
}

static void entries(const chk *k, size_t n, const oxp_entry *a)
{
	ARRAY(n, a);
	for (size_t i = 0; i < n; i++) {
		str(k, a[i].key);
		str(k, a[i].value);
	}
}

static void enter(chk *k)
{
	k->depth++;
	FZ_CHECK(k->depth <= 300); /* the decoder bounds nesting; so must the structure */
}

static void leave(chk *k)
{
	k->depth--;
}

static void graph(chk *k, const oxp_graph *g);
static void type(chk *k, const oxp_type *t);

static void tensor(chk *k, const oxp_tensor *t)
{
	enter(k);
	str(k, t->name);
	str(k, t->doc_string);
	ARRAY(t->ndims, t->dims);
	uint64_t count;
	FZ_CHECK(oxp_dims_count(t->dims, t->ndims, &count));
	FZ_CHECK((unsigned)t->storage <= OXP_STORE_EXTERNAL);
	FZ_CHECK(t->has_raw_data || t->raw_data.p == NULL);
	str(k, t->raw_data);
	FZ_CHECK((t->typed_fields & ~(uint32_t)((1u << 4) | (1u << 5) | (1u << 7) | (1u << 10) |
	                                     (1u << 11))) == 0);
	FZ_CHECK(t->typed_fields != 0 || t->typed_bytes == 0);
	FZ_CHECK(t->typed_bytes <= k->size);
	strs(k, t->nstring_data, t->string_data);
	entries(k, t->nexternal_data, t->external_data);
	entries(k, t->nmetadata_props, t->metadata_props);
	FZ_CHECK(t->nsegments >= 1 && t->segments != NULL);
	for (size_t i = 0; i < t->nsegments; i++)
		view(k, t->segments[i].p, t->segments[i].len);
	if (t->storage == OXP_STORE_EXTERNAL)
		FZ_CHECK(t->data_location == 1);
	if (t->storage == OXP_STORE_RAW)
		FZ_CHECK(t->has_raw_data);
	if (t->storage == OXP_STORE_STRING_DATA)
		FZ_CHECK(t->nstring_data > 0);
	leave(k);
}

static void sparse(chk *k, const oxp_sparse_tensor *s)
{
	if (s->values != NULL)
		tensor(k, s->values);
	if (s->indices != NULL)
		tensor(k, s->indices);
	ARRAY(s->ndims, s->dims);
}

static void shape(chk *k, const oxp_shape *s)
{
	ARRAY(s->ndims, s->dims);
	for (size_t i = 0; i < s->ndims; i++) {
		const oxp_dim *d = &s->dims[i];
		FZ_CHECK((unsigned)d->kind <= OXP_DIM_PARAM);
		str(k, d->param);
		str(k, d->denotation);
	}
}

static void type(chk *k, const oxp_type *t)
{
	enter(k);
	FZ_CHECK((unsigned)t->kind <= OXP_TYPE_OPAQUE);
	str(k, t->denotation);
	str(k, t->opaque_domain);
	str(k, t->opaque_name);
	if (t->shape != NULL)
		shape(k, t->shape);
	if (t->elem != NULL)
		type(k, t->elem);
	leave(k);
}

static void value_infos(chk *k, size_t n, const oxp_value_info *a)
{
	ARRAY(n, a);
	for (size_t i = 0; i < n; i++) {
		str(k, a[i].name);
		str(k, a[i].doc_string);
		if (a[i].type != NULL)
			type(k, a[i].type);
		entries(k, a[i].nmetadata_props, a[i].metadata_props);
	}
}

static void attr(chk *k, const oxp_attr *a)
{
	enter(k);
	str(k, a->name);
	str(k, a->ref_attr_name);
	str(k, a->doc_string);
	str(k, a->s);
	if (a->type_inferred)
		FZ_CHECK(a->type >= OXP_ATTR_FLOAT && a->type <= OXP_ATTR_TYPE_PROTOS);
	if (a->t != NULL)
		tensor(k, a->t);
	if (a->g != NULL)
		graph(k, a->g);
	if (a->sparse_tensor != NULL)
		sparse(k, a->sparse_tensor);
	if (a->tp != NULL)
		type(k, a->tp);
	ARRAY(a->nfloats, a->floats);
	ARRAY(a->nints, a->ints);
	strs(k, a->nstrings, a->strings);
	ARRAY(a->ntensors, a->tensors);
	for (size_t i = 0; i < a->ntensors; i++)
		tensor(k, &a->tensors[i]);
	ARRAY(a->ngraphs, a->graphs);
	for (size_t i = 0; i < a->ngraphs; i++)
		graph(k, &a->graphs[i]);
	ARRAY(a->nsparse_tensors, a->sparse_tensors);
	for (size_t i = 0; i < a->nsparse_tensors; i++)
		sparse(k, &a->sparse_tensors[i]);
	ARRAY(a->ntype_protos, a->type_protos);
	for (size_t i = 0; i < a->ntype_protos; i++)
		type(k, &a->type_protos[i]);
	leave(k);
}

static void device_configs(chk *k, size_t n, const oxp_node_device_config *a)
{
	ARRAY(n, a);
	for (size_t i = 0; i < n; i++) {
		str(k, a[i].configuration_id);
		ARRAY(a[i].nsharding_spec, a[i].sharding_spec);
		for (size_t j = 0; j < a[i].nsharding_spec; j++) {
			const oxp_sharding_spec *s = &a[i].sharding_spec[j];
			str(k, s->tensor_name);
			ARRAY(s->ndevice, s->device);
			ARRAY(s->nindex_to_device_group_map, s->index_to_device_group_map);
			for (size_t m = 0; m < s->nindex_to_device_group_map; m++)
				ARRAY(s->index_to_device_group_map[m].nvalue,
				      s->index_to_device_group_map[m].value);
			ARRAY(s->nsharded_dim, s->sharded_dim);
			for (size_t m = 0; m < s->nsharded_dim; m++) {
				const oxp_sharded_dim *d = &s->sharded_dim[m];
				ARRAY(d->nsimple_sharding, d->simple_sharding);
				for (size_t q = 0; q < d->nsimple_sharding; q++) {
					FZ_CHECK((unsigned)d->simple_sharding[q].kind <= OXP_DIM_PARAM);
					str(k, d->simple_sharding[q].dim_param);
				}
			}
		}
	}
}

static void nodes(chk *k, size_t n, const oxp_node *a)
{
	ARRAY(n, a);
	for (size_t i = 0; i < n; i++) {
		const oxp_node *nd = &a[i];
		strs(k, nd->ninputs, nd->inputs);
		strs(k, nd->noutputs, nd->outputs);
		str(k, nd->name);
		str(k, nd->op_type);
		str(k, nd->domain);
		str(k, nd->overload);
		str(k, nd->doc_string);
		FZ_CHECK(nd->offset <= k->size); /* an empty node may start at the very end */
		ARRAY(nd->nattrs, nd->attrs);
		for (size_t j = 0; j < nd->nattrs; j++)
			attr(k, &nd->attrs[j]);
		entries(k, nd->nmetadata_props, nd->metadata_props);
		device_configs(k, nd->ndevice_configurations, nd->device_configurations);
	}
}

static void graph(chk *k, const oxp_graph *g)
{
	enter(k);
	nodes(k, g->nnodes, g->nodes);
	str(k, g->name);
	str(k, g->doc_string);
	ARRAY(g->ninitializers, g->initializers);
	for (size_t i = 0; i < g->ninitializers; i++)
		tensor(k, &g->initializers[i]);
	ARRAY(g->nsparse_initializers, g->sparse_initializers);
	for (size_t i = 0; i < g->nsparse_initializers; i++)
		sparse(k, &g->sparse_initializers[i]);
	value_infos(k, g->ninputs, g->inputs);
	value_infos(k, g->noutputs, g->outputs);
	value_infos(k, g->nvalue_info, g->value_info);
	ARRAY(g->nquantization_annotation, g->quantization_annotation);
	for (size_t i = 0; i < g->nquantization_annotation; i++) {
		str(k, g->quantization_annotation[i].tensor_name);
		entries(k, g->quantization_annotation[i].nquant_parameter_tensor_names,
		        g->quantization_annotation[i].quant_parameter_tensor_names);
	}
	entries(k, g->nmetadata_props, g->metadata_props);
	leave(k);
}

static void opsets(chk *k, size_t n, const oxp_opset *a)
{
	ARRAY(n, a);
	for (size_t i = 0; i < n; i++)
		str(k, a[i].domain);
}

static void model(chk *k, const oxp_model_proto *p)
{
	opsets(k, p->nopset_import, p->opset_import);
	str(k, p->producer_name);
	str(k, p->producer_version);
	str(k, p->domain);
	str(k, p->doc_string);
	FZ_CHECK(p->graph != NULL || p->ir_version != 0 || p->nfunctions != 0);
	if (p->graph != NULL)
		graph(k, p->graph);
	entries(k, p->nmetadata_props, p->metadata_props);
	ARRAY(p->ntraining_info, p->training_info);
	for (size_t i = 0; i < p->ntraining_info; i++) {
		const oxp_training_info *t = &p->training_info[i];
		if (t->initialization != NULL)
			graph(k, t->initialization);
		if (t->algorithm != NULL)
			graph(k, t->algorithm);
		entries(k, t->ninitialization_binding, t->initialization_binding);
		entries(k, t->nupdate_binding, t->update_binding);
	}
	ARRAY(p->nfunctions, p->functions);
	for (size_t i = 0; i < p->nfunctions; i++) {
		const oxp_function *f = &p->functions[i];
		str(k, f->name);
		strs(k, f->ninputs, f->inputs);
		strs(k, f->noutputs, f->outputs);
		strs(k, f->nattribute, f->attribute);
		ARRAY(f->nattribute_proto, f->attribute_proto);
		for (size_t j = 0; j < f->nattribute_proto; j++)
			attr(k, &f->attribute_proto[j]);
		nodes(k, f->nnodes, f->nodes);
		str(k, f->doc_string);
		opsets(k, f->nopset_import, f->opset_import);
		str(k, f->domain);
		str(k, f->overload);
		value_infos(k, f->nvalue_info, f->value_info);
		entries(k, f->nmetadata_props, f->metadata_props);
	}
	ARRAY(p->nconfiguration, p->configuration);
	for (size_t i = 0; i < p->nconfiguration; i++) {
		str(k, p->configuration[i].name);
		strs(k, p->configuration[i].ndevice, p->configuration[i].device);
	}
}

/* A failed parse leaves *out alone and reports a well-formed error. */
static void check_error(const oxp_error *e, oxp_code rc, size_t size, const oxp_model *m)
{
	FZ_CHECK(m == NULL);
	fz_parse_error(e, rc, size);
	char buf[600];
	oxp_error_format(e, buf, sizeof(buf));
	/* only the parse errors can come out of a parse */
	FZ_CHECK(rc <= OXP_E_NOT_MODEL);
}

/* Parse as a model under lim and check the result, whatever it is. */
static void parse_model(const uint8_t *data, size_t size, const oxp_limits *lim)
{
	oxp_error e;
	chk k = {data, size, 0};
	oxp_model *m = NULL;
	oxp_code rc = oxp_model_parse(&m, data, size, lim, &e);
	if (rc == OXP_OK) {
		FZ_CHECK(m != NULL);
		FZ_CHECK(oxp_model_data(m) == data && oxp_model_size(m) == size);
		FZ_CHECK(oxp_model_arena_bytes(m) <= lim->max_alloc);
		FZ_CHECK(oxp_model_tensor_get(m) == NULL);
		model(&k, oxp_model_proto_get(m));
		FZ_CHECK(k.depth == 0);
		oxp_model_free(m);
	} else {
		check_error(&e, rc, size, m);
		/* the failure in a person's words (parser/headline.c) reads the input's first
		 * bytes and the bytes at the error's offset: a line for every parse error */
		char head[512];
		oxp_error_headline(&e, data, size, size, head, sizeof(head));
		FZ_CHECK(memchr(head, '\0', sizeof(head)) != NULL && head[0] != '\0');
		/* structures cost at most ~120x the wire bytes (an empty AttributeProto: 2 bytes
		 * on the wire, 232 in the arena), so running out means a small budget */
		if (rc == OXP_E_NOMEM || rc == OXP_E_BUDGET)
			FZ_CHECK(lim->max_alloc / 256 < size);
	}
}

/* The same model decoded from a compacted copy (cut: the large string payloads, then
 * put back as views of data) and in place: both decode or both fail; decoded, the main
 * graph has the same initializers (names, raw_data bytes, the file offsets of both) and
 * nodes (op types, offsets), and the arenas hold the same bytes. */
static uint64_t file_offset(const oxp__compact *c, const uint8_t *data, size_t size,
                            const void *p)
{
	const uint8_t *q = p;
	if (q >= data && q < data + size) /* a cut payload's view: data + its offset */
		return (uint64_t)(q - data);
	FZ_CHECK(q >= c->buf && q < c->buf + c->len);
	return oxp__compact_offset(c, (uint64_t)(q - c->buf));
}

static void same_decode(const oxp__compact *c, const uint8_t *data, size_t size)
{
	oxp_limits lim = oxp_limits_default();
	lim.max_alloc = FUZZ_MAX_ALLOC;
	oxp_arena *ac = oxp__arena_new(lim.max_alloc), *ap = oxp__arena_new(lim.max_alloc);
	oxp_model_proto *pc = ac ? oxp__arena_alloc(ac, sizeof(*pc)) : NULL;
	oxp_model_proto *pp = ap ? oxp__arena_alloc(ap, sizeof(*pp)) : NULL;
	if (pc != NULL && pp != NULL) {
		oxp_error ec, ep;
		memset(&ec, 0, sizeof(ec));
		memset(&ep, 0, sizeof(ep));
		oxp_code rc = oxp__decode_model_compact(ac, &lim, c, pc, &ec);
		oxp_code rp = oxp__decode_model(ap, &lim, data, size, pp, &ep);
		FZ_CHECK((rc == OXP_OK) == (rp == OXP_OK));
		if (rc == OXP_OK && rp == OXP_OK) {
			FZ_CHECK(oxp__arena_used(ac) == oxp__arena_used(ap));
			const oxp_graph *gc = pc->graph, *gp = pp->graph;
			FZ_CHECK((gc == NULL) == (gp == NULL));
			if (gc != NULL && gp != NULL) {
				FZ_CHECK(gc->ninitializers == gp->ninitializers && gc->nnodes == gp->nnodes);
				for (size_t i = 0; i < gp->ninitializers; i++) {
					const oxp_tensor *tc = &gc->initializers[i], *tp = &gp->initializers[i];
					FZ_CHECK(tc->name.len == tp->name.len && tc->raw_data.len == tp->raw_data.len);
					FZ_CHECK(tp->name.len == 0 || memcmp(tc->name.p, tp->name.p, tp->name.len) == 0);
					FZ_CHECK(tp->raw_data.len == 0 ||
					         memcmp(tc->raw_data.p, tp->raw_data.p, tp->raw_data.len) == 0);
					if (tp->raw_data.len > 0)
						FZ_CHECK(file_offset(c, data, size, tc->raw_data.p) ==
						         (uint64_t)((const uint8_t *)tp->raw_data.p - data));
					if (tp->name.len > 0)
						FZ_CHECK(file_offset(c, data, size, tc->name.p) ==
						         (uint64_t)((const uint8_t *)tp->name.p - data));
				}
				for (size_t i = 0; i < gp->nnodes; i++)
					FZ_CHECK(gc->nodes[i].offset == gp->nodes[i].offset &&
					         gc->nodes[i].op_type.len == gp->nodes[i].op_type.len);
			}
		}
	}
	oxp__arena_free(ac);
	oxp__arena_free(ap);
}

/* The low-RSS open's compacted copy of the input as a file: when the scan builds it, its
 * cuts are in order, inside the file, at least the minimum long, and the copy is the file
 * less the cut payloads, byte for byte elsewhere (lengths are rewritten in place). */
static void scan_compact(int fd, const uint8_t *data, size_t size)
{
	oxp__compact c;
	if (!oxp__scan_compact(fd, size, 8, 16, &c))
		return;
	FZ_CHECK(c.ncuts > 0 && c.ncuts <= 16 && c.len <= size);
	uint64_t end = 0, cut = 0, at = 0;
	for (size_t i = 0; i < c.ncuts; i++) {
		const oxp__cut *k = &c.cuts[i];
		FZ_CHECK(k->len >= 8 && k->off >= end && k->off <= size && k->len <= size - k->off);
		FZ_CHECK(k->at >= at && k->at <= c.len && k->at + cut == k->off);
		/* the copy after the cut is the file after the payload, up to the next cut */
		uint64_t next = i + 1 < c.ncuts ? c.cuts[i + 1].at : c.len;
		FZ_CHECK(next >= k->at && next - k->at <= size - (k->off + k->len));
		end = k->off + k->len;
		cut += k->len;
		at = k->at;
	}
	FZ_CHECK(c.len + cut == size);
	c.file = data;
	same_decode(&c, data, size);
	oxp__compact_release(&c);
}

/* The structure-hole scanner of the low-RSS open reads model files through a window: the
 * input as a file (memfd), scanned with a small minimum.  When it succeeds, its holes are
 * in file order, apart, inside the file and at least the minimum long.  Scanned again
 * through a private writable mapping of the file (as the open does where the kernel
 * populates pages on advice): the same answer and the same holes, and the mapping still
 * reads as the input. */
static void scan_holes(const uint8_t *data, size_t size)
{
	int fd = memfd_create("fuzz_parse", MFD_CLOEXEC);
	if (fd < 0)
		return;
	if (size > 0 && write(fd, data, size) != (ssize_t)size) {
		close(fd);
		return;
	}
	oxp__hole h[16];
	size_t n = 99;
	bool ok = oxp__scan_holes(fd, size, 8, NULL, h, 16, &n);
	FZ_CHECK(n <= 16);
	uint64_t end = 0;
	for (size_t i = 0; ok && i < n; i++) {
		FZ_CHECK(h[i].len >= 8);
		FZ_CHECK(h[i].off >= end);
		FZ_CHECK(h[i].off <= size && h[i].len <= size - h[i].off);
		end = h[i].off + h[i].len;
	}
	uint8_t *map = size > 0 ? mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0)
	                        : MAP_FAILED;
	if (map != MAP_FAILED && madvise(map, 4096, MADV_POPULATE_WRITE) == 0) {
		oxp__hole hm[16];
		size_t nm = 99;
		bool okm = oxp__scan_holes(fd, size, 8, map, hm, 16, &nm);
		FZ_CHECK(okm == ok);
		FZ_CHECK(nm == n);
		for (size_t i = 0; ok && i < n; i++)
			FZ_CHECK(hm[i].off == h[i].off && hm[i].len == h[i].len);
		FZ_CHECK(memcmp(map, data, size) == 0);
	}
	if (map != MAP_FAILED)
		munmap(map, size);
	scan_compact(fd, data, size);
	close(fd);
}

/* parser/cut.c (the page's structure, the proof of a structure's link): an error names
 * its code and an offset within the input; a cut sends exactly the bytes it measured, and
 * never more payload than the input holds. */
typedef struct cut_sink {
	uint64_t bytes;
	size_t calls;
} cut_sink;

static bool cut_count(void *ctx, const void *p, size_t n)
{
	cut_sink *c = ctx;
	FZ_CHECK(p != NULL && n > 0);
	c->bytes += n;
	c->calls++;
	return true;
}

static void cut_model(const uint8_t *data, size_t size)
{
	oxp_cut_info info;
	oxp_error e;
	cut_sink c = {0, 0};
	oxp_code rc = oxp_cut(&info, data, size, "model.onnx", 0, cut_count, &c, &e);
	if (rc != OXP_OK) {
		FZ_CHECK(e.code == rc && e.offset <= size);
		return;
	}
	FZ_CHECK(info.cuts == (info.tensors > 0));
	FZ_CHECK(info.cuts ? c.bytes == info.bytes : c.bytes == 0);
	FZ_CHECK(info.cut <= size);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	scan_holes(data, size);
	cut_model(data, size);

	oxp_limits lim = oxp_limits_default();
	lim.max_alloc = FUZZ_MAX_ALLOC;
	parse_model(data, size, &lim);

	/* Again under tight limits, so that small inputs reach every limit and the clean-up
	 * after each (leaks show under ASan's leak checker). */
	oxp_limits tight = {.max_depth = 12, .max_graph_depth = 2, .max_alloc = 8192,
	                    .max_nodes = 6, .max_node_io = 3, .max_repeated = 16};
	parse_model(data, size, &tight);

	oxp_error e;
	chk k = {data, size, 0};
	oxp_model *m;
	oxp_code rc;

	m = NULL;
	rc = oxp_tensor_file_parse(&m, data, size, &lim, &e);
	if (rc == OXP_OK) {
		FZ_CHECK(oxp_model_arena_bytes(m) <= lim.max_alloc);
		FZ_CHECK(oxp_model_proto_get(m) == NULL);
		const oxp_tensor *t = oxp_model_tensor_get(m);
		FZ_CHECK(t != NULL);
		tensor(&k, t);
		oxp_model_free(m);
	} else {
		check_error(&e, rc, size, m);
	}
	return 0;
}
