/*
 * schema.c — operator schemas: lookup by (domain, name, opset) in the generated table
 * (schema_table.c, layout in schema.h), the views oxp.h promises, port labels and
 * documentation links, and each node's schema as its scope's opset import selects it.
 */
#include "parser/internal.h"
#include "parser/schema.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *str_at(uint32_t off)
{
	return oxp__sch_strings + off;
}

/* -1, 0, 1 as the bytes of s compare with the NUL-terminated t (strcmp order) */
static int cmp_str(oxp_str s, const char *t)
{
	size_t tl = strlen(t);
	size_t n = s.len < tl ? s.len : tl;
	int c = n ? memcmp(s.p, t, n) : 0;
	if (c != 0)
		return c < 0 ? -1 : 1;
	return s.len < tl ? -1 : s.len > tl ? 1 : 0;
}

/* Table index of a domain, -1 when the table has none ("ai.onnx" is the default one). */
static int domain_index(oxp_str domain)
{
	if (domain.len == 0 || oxp_str_eq(domain, "ai.onnx"))
		return 0;
	for (int i = 1; i < OXP__SCH_NDOMAINS; i++)
		if (cmp_str(domain, str_at(oxp__sch_domains[i].name)) == 0)
			return i;
	return -1;
}

static const oxp__sch_op *find_op(int dom, oxp_str name)
{
	size_t lo = 0, hi = oxp__sch_nops;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const oxp__sch_op *op = &oxp__sch_ops[mid];
		int c = op->domain != dom ? (op->domain < dom ? -1 : 1)
		                          : -cmp_str(name, str_at(op->name));
		if (c == 0)
			return op;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

oxp_schema_status oxp_schema_find(oxp_str domain, oxp_str op_type, int64_t opset,
                                  const oxp_schema **out)
{
	int dom = domain_index(domain);
	if (dom < 0)
		return OXP_SCHEMA_NO_DOMAIN;
	const oxp__sch_op *op = find_op(dom, op_type);
	if (op == NULL)
		return OXP_SCHEMA_NO_OP;
	const oxp__sch_version *v = &oxp__sch_versions[op->first_version];
	const oxp__sch_version *found = NULL;
	for (uint16_t i = 0; i < op->nversions; i++)
		if (v[i].since <= opset)
			found = &v[i];
	if (found == NULL) {
		*out = &v[0];
		return OXP_SCHEMA_TOO_NEW;
	}
	*out = found;
	return OXP_SCHEMA_FOUND;
}

static uint32_t count(uint16_t n)
{
	return n == OXP__SCH_INF ? OXP_SCHEMA_UNBOUNDED : n;
}

void oxp_schema_get_info(const oxp_schema *s, oxp_schema_info *out)
{
	const oxp__sch_op *op = &oxp__sch_ops[s->op];
	out->domain = str_at(oxp__sch_domains[op->domain].name);
	out->name = str_at(op->name);
	out->since_version = s->since;
	out->deprecated = s->deprecated != 0;
	out->contrib = op->domain == OXP__SCH_CONTRIB;
	out->ninputs = s->ninputs;
	out->noutputs = s->noutputs;
	out->nattrs = s->nattrs;
	out->nconstraints = s->ntcs;
	out->min_inputs = count(s->min_inputs);
	out->max_inputs = count(s->max_inputs);
	out->min_outputs = count(s->min_outputs);
	out->max_outputs = count(s->max_outputs);
}

static oxp_schema_types types_of(uint16_t ts)
{
	const oxp__sch_typeset *t = &oxp__sch_typesets[ts];
	return (oxp_schema_types){t->tensor, t->sequence, t->optional_tensor, t->optional_sequence,
	                          t->sparse, t->other != 0};
}

static void port_view(const oxp_schema *s, const oxp__sch_port *p, oxp_schema_port *out)
{
	out->name = str_at(p->name);
	out->flags = p->flags;
	out->types = types_of(p->typeset);
	if (p->tc != OXP__SCH_NO_TC && p->tc < s->ntcs) {
		out->constraint = p->tc;
		out->param = str_at(oxp__sch_tcs[s->first_tc + p->tc].name);
	} else {
		out->constraint = -1;
		out->param = NULL;
	}
}

bool oxp_schema_input(const oxp_schema *s, uint32_t i, oxp_schema_port *out)
{
	if (i >= s->ninputs)
		return false;
	port_view(s, &oxp__sch_ports[s->first_input + i], out);
	return true;
}

bool oxp_schema_output(const oxp_schema *s, uint32_t i, oxp_schema_port *out)
{
	if (i >= s->noutputs)
		return false;
	port_view(s, &oxp__sch_ports[s->first_output + i], out);
	return true;
}

bool oxp_schema_attribute(const oxp_schema *s, uint32_t i, oxp_schema_attr *out)
{
	if (i >= s->nattrs)
		return false;
	const oxp__sch_attr *a = &oxp__sch_attrs[s->first_attr + i];
	out->name = str_at(a->name);
	out->type = a->type;
	out->required = a->required != 0;
	out->default_json = a->dflt ? str_at(a->dflt) : NULL;
	return true;
}

bool oxp_schema_constraint_at(const oxp_schema *s, uint32_t i, oxp_schema_constraint *out)
{
	if (i >= s->ntcs)
		return false;
	const oxp__sch_tc *t = &oxp__sch_tcs[s->first_tc + i];
	out->name = str_at(t->name);
	out->types = types_of(t->typeset);
	return true;
}

bool oxp_schema_next_left_default(const oxp_schema *s, const oxp_node *n, uint32_t *i,
                                  oxp_schema_attr *out)
{
	while (oxp_schema_attribute(s, *i, out)) {
		(*i)++;
		if (out->default_json == NULL)
			continue;
		bool given = false;
		for (size_t j = 0; j < n->nattrs && !given; j++)
			given = oxp_str_eq(n->attrs[j].name, out->name);
		if (!given)
			return true;
	}
	return false;
}

int32_t oxp_schema_find_attribute(const oxp_schema *s, oxp_str name)
{
	/* attributes are sorted by name: a short scan beats a search on lists this small */
	for (uint32_t i = 0; i < s->nattrs; i++)
		if (cmp_str(name, str_at(oxp__sch_attrs[s->first_attr + i].name)) == 0)
			return (int32_t)i;
	return -1;
}

int32_t oxp_schema_port_of(const oxp_schema *s, bool output, size_t k, uint32_t *nth)
{
	uint32_t n = output ? s->noutputs : s->ninputs;
	const oxp__sch_port *p = &oxp__sch_ports[output ? s->first_output : s->first_input];
	if (nth != NULL)
		*nth = 0;
	if (n == 0)
		return -1;
	if (k < n - 1 || (k == n - 1 && !(p[n - 1].flags & OXP_PORT_VARIADIC)))
		return (int32_t)k;
	if (!(p[n - 1].flags & OXP_PORT_VARIADIC))
		return -1;
	if (nth != NULL) {
		size_t m = k - (n - 1);
		*nth = m > UINT32_MAX ? UINT32_MAX : (uint32_t)m;
	}
	return (int32_t)(n - 1);
}

const char *oxp_schema_port_label(const oxp_schema *s, bool output, size_t k, char *buf,
                                  size_t size)
{
	uint32_t nth;
	int32_t i = oxp_schema_port_of(s, output, k, &nth);
	if (i < 0 || size == 0)
		return NULL;
	const oxp__sch_port *p =
	    &oxp__sch_ports[(output ? s->first_output : s->first_input) + (uint32_t)i];
	if (p->flags & OXP_PORT_VARIADIC)
		snprintf(buf, size, "%.40s[%u]", str_at(p->name), nth);
	else
		snprintf(buf, size, "%.60s", str_at(p->name));
	return buf;
}

const char *oxp_schema_link(const oxp_schema *s, bool versioned, char *buf, size_t size)
{
	const oxp__sch_op *op = &oxp__sch_ops[s->op];
	const char *name = str_at(op->name);
	const char *dom = str_at(oxp__sch_domains[op->domain].name);
	if (size == 0)
		return buf;
	if (op->domain == OXP__SCH_CONTRIB) {
		/* onnxruntime documents every contrib op in one page, anchored by name */
		snprintf(buf, size,
		         "https://github.com/microsoft/onnxruntime/blob/main/docs/"
		         "ContribOperators.md#com.microsoft.%s",
		         name);
		return buf;
	}
	/* onnx's pages: onnx_<domain without dots>_<Op>.html, each version anchored by
	 * l-onnx-op<domain with dots as dashes>-<op lower case>-<version> */
	char page_dom[32], anchor_dom[32], lower[96];
	size_t j = 0, a = 0;
	for (size_t i = 0; dom[i] != '\0' && j + 1 < sizeof(page_dom); i++)
		if (dom[i] != '.')
			page_dom[j++] = dom[i];
	page_dom[j] = '\0';
	for (size_t i = 0; dom[i] != '\0' && a + 1 < sizeof(anchor_dom); i++)
		anchor_dom[a++] = dom[i] == '.' ? '-' : dom[i];
	anchor_dom[a] = '\0';
	size_t l = 0;
	for (size_t i = 0; name[i] != '\0' && l + 1 < sizeof(lower); i++)
		lower[l++] = (char)(name[i] >= 'A' && name[i] <= 'Z' ? name[i] - 'A' + 'a' : name[i]);
	lower[l] = '\0';
	if (versioned)
		snprintf(buf, size, "https://onnx.ai/onnx/operators/onnx_%s_%s.html#l-onnx-op%s-%s-%u",
		         page_dom, name, anchor_dom, lower, (unsigned)s->since);
	else
		snprintf(buf, size, "https://onnx.ai/onnx/operators/onnx_%s_%s.html", page_dom, name);
	return buf;
}

bool oxp_schema_types_allow(const oxp_schema_types *t, oxp_type_kind kind, int32_t elem)
{
	if (t->other || elem <= 0 || elem >= 32)
		return true;
	uint32_t bit = 1u << elem;
	switch (kind) {
	case OXP_TYPE_TENSOR:
		return (t->tensor & bit) != 0;
	case OXP_TYPE_SEQUENCE:
		return (t->sequence & bit) != 0;
	case OXP_TYPE_OPTIONAL:
		return (t->optional_tensor & bit) != 0 || (t->optional_sequence & bit) != 0;
	case OXP_TYPE_SPARSE_TENSOR:
		return (t->sparse & bit) != 0;
	default:
		return true;
	}
}

/* ONNX's spelling of an element type inside a type string ("float16", "int64") */
static const char *elem_name(int dt)
{
	static const char *const names[] = {
	    "undefined", "float", "uint8", "int8", "uint16", "int16", "int32", "int64", "string",
	    "bool", "float16", "double", "uint32", "uint64", "complex64", "complex128", "bfloat16",
	    "float8e4m3fn", "float8e4m3fnuz", "float8e5m2", "float8e5m2fnuz", "uint4", "int4",
	    "float4e2m1", "float8e8m0", "uint2", "int2"};
	return dt >= 0 && (size_t)dt < sizeof(names) / sizeof(names[0]) ? names[dt] : "?";
}

const char *oxp_schema_types_text(const oxp_schema_types *t, char *buf, size_t size)
{
	static const char *const open[] = {"tensor(", "seq(tensor(", "optional(tensor(",
	                                   "optional(seq(tensor(", "sparse_tensor("};
	static const char *const close[] = {")", "))", "))", ")))", ")"};
	const uint32_t masks[5] = {t->tensor, t->sequence, t->optional_tensor,
	                           t->optional_sequence, t->sparse};
	size_t o = 0;
	if (size == 0)
		return buf;
	buf[0] = '\0';
	for (int k = 0; k < 5; k++)
		for (int dt = 1; dt < 32; dt++) {
			if (!(masks[k] & (1u << dt)))
				continue;
			int w = snprintf(buf + o, size - o, "%s%s%s%s", o ? ", " : "", open[k],
			                 elem_name(dt), close[k]);
			if (w < 0 || (size_t)w >= size - o)
				return buf; /* cut: snprintf left it terminated */
			o += (size_t)w;
		}
	if (t->other)
		snprintf(buf + o, size - o, "%sother types", o ? ", " : "");
	return buf;
}

int64_t oxp_schema_newest_opset(oxp_str domain)
{
	int dom = domain_index(domain);
	return dom < 0 ? 0 : oxp__sch_domains[dom].newest;
}

int64_t oxp_schema_min_ir(oxp_str domain, int64_t opset)
{
	int dom = domain_index(domain);
	if (dom < 0 || dom > 2 || opset < 1)
		return 0;
	for (uint32_t i = 0; i < oxp__sch_nirtable; i++) {
		const oxp__sch_irrow *r = &oxp__sch_irtable[i];
		uint16_t v = dom == 0 ? r->onnx : dom == 1 ? r->ml : r->training;
		if (v >= opset)
			return r->ir; /* rows ascend in IR and opsets */
	}
	return 0;
}

int64_t oxp_schema_newest_ir(void)
{
	return oxp__sch_ir_newest;
}

const oxp_schema *oxp_schema_at(size_t i)
{
	return i < oxp__sch_nversions ? &oxp__sch_versions[i] : NULL;
}

size_t oxp_schema_count(void)
{
	return oxp__sch_nversions;
}

/* ---------------------------------------------------------------------------------------
 * Resolution on the linked graph
 */
static bool same_domain(oxp_str a, oxp_str b)
{
	bool da = a.len == 0 || oxp_str_eq(a, "ai.onnx");
	bool db = b.len == 0 || oxp_str_eq(b, "ai.onnx");
	if (da || db)
		return da && db;
	return a.len == b.len && memcmp(a.p, b.p, a.len) == 0;
}

static int64_t import_of(const oxp_opset *ops, size_t n, oxp_str domain)
{
	int64_t v = 0;
	for (size_t i = 0; i < n; i++)
		if (same_domain(ops[i].domain, domain))
			v = ops[i].version; /* the last listing wins, as a protobuf map would */
	return v;
}

int64_t oxp_dag_scope_opset(const oxp_dag *d, uint32_t scope, oxp_str domain)
{
	const oxp_model_proto *p = oxp_model_proto_get(d->model);
	if (scope >= d->v.nscopes || p == NULL)
		return 0;
	/* subgraphs see their top-level scope's imports */
	uint32_t top = scope;
	while (d->scopes[top].parent != OXP_NONE && d->scopes[top].kind == OXP_SCOPE_SUBGRAPH)
		top = d->scopes[top].parent;
	const oxp_scope *s = &d->scopes[top];
	if (s->kind == OXP_SCOPE_FUNCTION && s->function != NULL)
		return import_of(s->function->opset_import, s->function->nopset_import, domain);
	if (p->nopset_import == 0)
		return domain.len == 0 || oxp_str_eq(domain, "ai.onnx") ? 1 : 0;
	return import_of(p->opset_import, p->nopset_import, domain);
}

/* Models repeat a few dozen op types thousands of times: a small direct-mapped cache of
 * (domain, op type, opset) -> schema spares most binary searches. */
#define RESOLVE_CACHE 256

typedef struct resolve_slot {
	oxp_str domain, op;
	int64_t opset;
	const oxp_schema *schema;
	bool used;
} resolve_slot;

static bool same_bytes(oxp_str a, oxp_str b)
{
	return a.len == b.len && (a.len == 0 || memcmp(a.p, b.p, a.len) == 0);
}

void oxp__dag_resolve_schemas(oxp_dag *d)
{
	resolve_slot cache[RESOLVE_CACHE];
	memset(cache, 0, sizeof(cache));
	for (uint32_t ni = 0; ni < d->v.nnodes; ni++) {
		oxp_dnode *dn = &d->nodes[ni];
		const oxp_node *n = dn->proto;
		dn->opset = oxp_dag_scope_opset(d, dn->scope, n->domain);
		dn->schema = NULL;
		if (dn->function != OXP_NONE || dn->opset <= 0)
			continue; /* a call of a model-local function, or an unimported domain */
		uint32_t h = 2166136261u ^ (uint32_t)dn->opset;
		for (size_t i = 0; i < n->op_type.len; i++)
			h = (h ^ (unsigned char)n->op_type.p[i]) * 16777619u;
		for (size_t i = 0; i < n->domain.len; i++)
			h = (h ^ (unsigned char)n->domain.p[i]) * 16777619u;
		resolve_slot *slot = &cache[h % RESOLVE_CACHE];
		if (slot->used && slot->opset == dn->opset && same_bytes(slot->op, n->op_type) &&
		    same_bytes(slot->domain, n->domain)) {
			dn->schema = slot->schema;
			continue;
		}
		const oxp_schema *s;
		if (oxp_schema_find(n->domain, n->op_type, dn->opset, &s) == OXP_SCHEMA_FOUND)
			dn->schema = s;
		*slot = (resolve_slot){n->domain, n->op_type, dn->opset, dn->schema, true};
	}
}

/* ---------------------------------------------------------------------------------------
 * Defaults.  The table stores them as JSON literals (the generator writes integers as
 * digits, floats as the shortest text that reads back as the same float32, strings quoted
 * with \" and \\ escaped, lists in brackets, no spaces); these readers take that form only.
 */
typedef struct jcur {
	const char *p;
} jcur;

static bool j_number(jcur *c, double *out)
{
	char *end;
	double x = strtod(c->p, &end);
	if (end == c->p)
		return false;
	c->p = end;
	*out = x;
	return true;
}

/* A quoted string: its unescaped bytes into buf (cut at size-1); *len the full length. */
static bool j_string(jcur *c, char *buf, size_t size, size_t *len)
{
	if (*c->p != '"')
		return false;
	c->p++;
	size_t n = 0;
	while (*c->p != '\0' && *c->p != '"') {
		char ch = *c->p++;
		if (ch == '\\' && *c->p != '\0') {
			ch = *c->p++;
			if (ch == 'u') { /* \u00XX: control characters only */
				unsigned v = 0;
				for (int i = 0; i < 4 && *c->p; i++, c->p++)
					v = v * 16 + (unsigned)(*c->p <= '9' ? *c->p - '0' : (*c->p | 32) - 'a' + 10);
				ch = (char)v;
			}
		}
		if (n + 1 < size)
			buf[n] = ch;
		n++;
	}
	if (*c->p != '"')
		return false;
	c->p++;
	if (size > 0)
		buf[n < size ? n : size - 1] = '\0';
	*len = n;
	return true;
}

bool oxp_schema_attr_is_default(const oxp_schema_attr *sa, const oxp_attr *a)
{
	if (sa->default_json == NULL || a->type != sa->type || a->ref_attr_name.len != 0)
		return false;
	jcur c = {sa->default_json};
	double x;
	char sbuf[256];
	size_t slen;
	switch (a->type) {
	case OXP_ATTR_INT:
		return j_number(&c, &x) && x == (double)a->i;
	case OXP_ATTR_FLOAT:
		return j_number(&c, &x) && (float)x == a->f;
	case OXP_ATTR_STRING:
		return j_string(&c, sbuf, sizeof(sbuf), &slen) && slen == a->s.len &&
		       slen < sizeof(sbuf) && memcmp(sbuf, a->s.p, slen) == 0;
	case OXP_ATTR_INTS:
	case OXP_ATTR_FLOATS:
	case OXP_ATTR_STRINGS: {
		if (*c.p++ != '[')
			return false;
		size_t n = a->type == OXP_ATTR_INTS     ? a->nints
		           : a->type == OXP_ATTR_FLOATS ? a->nfloats
		                                        : a->nstrings;
		size_t i = 0;
		while (*c.p != ']') {
			if (i > 0 && *c.p++ != ',')
				return false;
			if (i >= n)
				return false;
			bool ok;
			if (a->type == OXP_ATTR_INTS)
				ok = j_number(&c, &x) && x == (double)a->ints[i];
			else if (a->type == OXP_ATTR_FLOATS)
				ok = j_number(&c, &x) && (float)x == a->floats[i];
			else
				ok = j_string(&c, sbuf, sizeof(sbuf), &slen) && slen == a->strings[i].len &&
				     slen < sizeof(sbuf) && memcmp(sbuf, a->strings[i].p, slen) == 0;
			if (!ok)
				return false;
			i++;
		}
		return i == n;
	}
	default:
		return false;
	}
}

const char *oxp_schema_default_text(const oxp_schema_attr *sa, char *buf, size_t size)
{
	if (size == 0)
		return buf;
	buf[0] = '\0';
	if (sa->default_json == NULL)
		return buf;
	jcur c = {sa->default_json};
	size_t o = 0;
	bool list = *c.p == '[';
	if (list)
		c.p++;
	while (*c.p != '\0' && *c.p != ']' && o + 1 < size) {
		if (*c.p == ',') {
			buf[o++] = ',';
			c.p++;
			continue;
		}
		if (*c.p == '"') {
			size_t len;
			if (!j_string(&c, buf + o, size - o, &len))
				break;
			o += len < size - o ? len : size - o - 1;
			continue;
		}
		buf[o++] = *c.p++;
	}
	buf[o < size ? o : size - 1] = '\0';
	return buf;
}

const char *oxp_dag_port_label(const oxp_dag *d, uint32_t node, bool output, size_t k,
                               char *buf, size_t size)
{
	if (node >= d->v.nnodes || size == 0)
		return NULL;
	const oxp_dnode *dn = &d->nodes[node];
	if (dn->schema != NULL)
		return oxp_schema_port_label(dn->schema, output, k, buf, size);
	const oxp_model_proto *p = oxp_model_proto_get(d->model);
	if (dn->function == OXP_NONE || p == NULL || dn->function >= p->nfunctions)
		return NULL;
	const oxp_function *fn = &p->functions[dn->function];
	size_t n = output ? fn->noutputs : fn->ninputs;
	if (k >= n)
		return NULL;
	oxp__printable(buf, size, output ? fn->outputs[k] : fn->inputs[k]);
	return buf;
}
