/*
 * schemadoc.c — what the operator schemas add to the JSON answers (doc.c calls these):
 * a node's schema version and links, the names of its inputs and outputs, the attributes
 * it leaves to their defaults; and the model check (oxr_check_json, the summary's "check").
 */
#include "render/internal.h"
#include "render/jsonx.h"

#include <stdio.h>
#include <string.h>

#define CHECK_FORMAT "onnxviz.check/1"

json_t *oxr__schema_json(const oxp_dnode *dn)
{
	if (dn->schema == NULL)
		return NULL;
	oxp_schema_info si;
	oxp_schema_get_info(dn->schema, &si);
	char link[512];
	json_t *o = json_object();
	jx_set(o, "domain", jx_cstr(si.domain));
	jx_set(o, "op_type", jx_cstr(si.name));
	jx_set(o, "since_version", json_integer(si.since_version));
	jx_set(o, "opset", jx_int(dn->opset));
	if (si.deprecated)
		jx_set(o, "deprecated", json_true());
	jx_set(o, "link", jx_cstr(oxp_schema_link(dn->schema, false, link, sizeof(link))));
	jx_set(o, "version_link", jx_cstr(oxp_schema_link(dn->schema, true, link, sizeof(link))));
	return o;
}

void oxr__set_ports(const oxp_dag *d, uint32_t ni, bool output, json_t *refs)
{
	char buf[128];
	for (size_t k = 0; k < json_array_size(refs); k++) {
		json_t *o = json_array_get(refs, k);
		if (!json_is_object(o))
			continue; /* an omitted optional input */
		const char *l = oxp_dag_port_label(d, ni, output, k, buf, sizeof(buf));
		if (l != NULL)
			jx_set(o, "port", jx_cstr(l));
	}
}

/* The schema's default as JSON: the table's literal, parsed. */
static json_t *default_value(const oxp_schema_attr *sa)
{
	json_error_t e;
	json_t *v = json_loads(sa->default_json, JSON_DECODE_ANY, &e);
	if (v == NULL)
		jx_oom(); /* the generator writes valid literals: only memory can fail */
	return v;
}

json_t *oxr__defaults_json(const oxp_dnode *dn)
{
	if (dn->schema == NULL)
		return NULL;
	const oxp_node *n = dn->proto;
	json_t *a = json_array();
	oxp_schema_attr sa;
	uint32_t i = 0;
	while (a != NULL && oxp_schema_next_left_default(dn->schema, n, &i, &sa)) {
		json_t *o = json_object();
		jx_set(o, "name", jx_cstr(sa.name));
		jx_set(o, "type", json_string(oxp_attr_type_name(sa.type)));
		jx_set(o, "value", default_value(&sa));
		jx_set(o, "default", json_true());
		json_array_append_new(a, o);
	}
	return a;
}

void oxr__mark_default_attrs(const oxp_dnode *dn, json_t *attrs)
{
	if (dn->schema == NULL)
		return;
	const oxp_node *n = dn->proto;
	for (size_t i = 0; i < n->nattrs && i < json_array_size(attrs); i++) {
		int32_t ai = oxp_schema_find_attribute(dn->schema, n->attrs[i].name);
		oxp_schema_attr sa;
		if (ai >= 0 && oxp_schema_attribute(dn->schema, (uint32_t)ai, &sa) &&
		    oxp_schema_attr_is_default(&sa, &n->attrs[i]))
			jx_set(json_array_get(attrs, i), "default", json_true());
	}
}

/* ---------------------------------------------------------------------------------------
 * The check
 */
static json_t *problem_json(const oxp_dag_view *v, const oxp_problem *pb)
{
	json_t *o = json_object();
	jx_set(o, "severity", json_string(oxp_severity_name(pb->severity)));
	jx_set(o, "code", json_string(oxp_check_code_name(pb->code)));
	if (pb->node != OXP_NONE) {
		const oxp_dnode *dn = &v->nodes[pb->node];
		jx_set(o, "node", jx_cstr(dn->id));
		jx_set_str(o, "node_name", dn->proto->name);
		jx_set_str(o, "op_type", dn->proto->op_type);
		jx_set_str(o, "domain", dn->proto->domain);
	} else {
		jx_set(o, "node", json_null());
	}
	jx_set(o, "scope", pb->scope == OXP_NONE ? json_null() : jx_cstr(v->scopes[pb->scope].id));
	if (pb->value != OXP_NONE) {
		json_t *vr = json_object();
		jx_set_str(vr, "name", v->values[pb->value].name);
		jx_set(vr, "value", json_integer(pb->value));
		jx_set(o, "value", vr);
	}
	jx_set(o, "message", jx_cstr(pb->message));
	return o;
}

json_t *oxr__check_json(const oxp_model *m, const oxp_dag *d, int data_dirfd,
                        size_t max_problems)
{
	oxp_check *c;
	oxp_error e;
	if (oxp_check_run(&c, m, d, data_dirfd, &e) != OXP_OK) {
		jx_oom();
		return NULL;
	}
	const oxp_check_view *cv = oxp_check_get(c);
	const oxp_dag_view *v = oxp_dag_get(d);
	json_t *o = json_object();
	jx_set(o, "format", json_string(CHECK_FORMAT));
	jx_set(o, "ok", json_boolean(cv->count[OXP_SEV_ERROR] == 0));
	jx_set(o, "errors", json_integer((json_int_t)cv->count[OXP_SEV_ERROR]));
	jx_set(o, "warnings", json_integer((json_int_t)cv->count[OXP_SEV_WARNING]));
	jx_set(o, "infos", json_integer((json_int_t)cv->count[OXP_SEV_INFO]));
	json_t *by = json_object();
	for (int k = 0; k < OXP_C__COUNT; k++)
		if (cv->by_code[k] > 0)
			jx_set(by, oxp_check_code_name((oxp_check_code)k),
			       json_integer((json_int_t)cv->by_code[k]));
	jx_set(o, "by_code", by);
	uint64_t total = cv->count[0] + cv->count[1] + cv->count[2];
	size_t listed = cv->nproblems < max_problems ? cv->nproblems : max_problems;
	json_t *a = json_array();
	for (size_t i = 0; a != NULL && i < listed; i++)
		json_array_append_new(a, problem_json(v, &cv->problems[i]));
	jx_set(o, "problems", a);
	jx_set(o, "truncated", json_boolean(listed < total));
	oxp_check_free(c);
	return o;
}

oxr_code oxr_check_json(const oxp_model *m, const oxp_dag *d, int data_dirfd,
                        size_t max_problems, oxr_buf *out, oxr_error *err)
{
	jx_oom_reset();
	json_t *o = oxr__check_json(m, d, data_dirfd, max_problems);
	if (o == NULL)
		return jx_nomem(err);
	oxr_code rc = jx_dump(o, out, err);
	json_decref(o);
	return rc;
}
