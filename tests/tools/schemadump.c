/*
 * schemadump.c — prints every operator schema of the table, one JSON object a line, as
 * parser/schema.c reads it back (tests/diff/schemas.py compares them with python3-onnx).
 *
 *   schemadump                      every schema
 *   schemadump DOMAIN OP OPSET      the lookup: the version in effect, or {"status": ...}
 *   schemadump -                    the same for each line "DOMAIN<tab>OP<tab>OPSET" read
 *                                   from standard input
 */
#include "parser/oxp.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static json_t *types_json(const oxp_schema_types *t)
{
	char buf[4096];
	return json_string(oxp_schema_types_text(t, buf, sizeof(buf)));
}

static json_t *port_json(const oxp_schema_port *p)
{
	json_t *o = json_object();
	json_object_set_new(o, "name", json_string(p->name));
	json_object_set_new(o, "optional", json_boolean(p->flags & OXP_PORT_OPTIONAL));
	json_object_set_new(o, "variadic", json_boolean(p->flags & OXP_PORT_VARIADIC));
	json_object_set_new(o, "heterogeneous", json_boolean(p->flags & OXP_PORT_HETEROGENEOUS));
	json_object_set_new(o, "param", p->param ? json_string(p->param) : json_null());
	json_object_set_new(o, "types", types_json(&p->types));
	return o;
}

static json_t *count_json(uint32_t n)
{
	return n == OXP_SCHEMA_UNBOUNDED ? json_null() : json_integer(n);
}

static json_t *schema_json(const oxp_schema *s)
{
	oxp_schema_info si;
	oxp_schema_get_info(s, &si);
	json_t *o = json_object();
	json_object_set_new(o, "domain", json_string(si.domain));
	json_object_set_new(o, "name", json_string(si.name));
	json_object_set_new(o, "since_version", json_integer(si.since_version));
	json_object_set_new(o, "deprecated", json_boolean(si.deprecated));
	json_object_set_new(o, "min_inputs", count_json(si.min_inputs));
	json_object_set_new(o, "max_inputs", count_json(si.max_inputs));
	json_object_set_new(o, "min_outputs", count_json(si.min_outputs));
	json_object_set_new(o, "max_outputs", count_json(si.max_outputs));
	json_t *a = json_array();
	oxp_schema_port p;
	for (uint32_t i = 0; oxp_schema_input(s, i, &p); i++)
		json_array_append_new(a, port_json(&p));
	json_object_set_new(o, "inputs", a);
	a = json_array();
	for (uint32_t i = 0; oxp_schema_output(s, i, &p); i++)
		json_array_append_new(a, port_json(&p));
	json_object_set_new(o, "outputs", a);
	a = json_array();
	oxp_schema_attr at;
	for (uint32_t i = 0; oxp_schema_attribute(s, i, &at); i++) {
		json_t *x = json_object();
		json_object_set_new(x, "name", json_string(at.name));
		json_object_set_new(x, "type", json_string(oxp_attr_type_name(at.type)));
		json_object_set_new(x, "required", json_boolean(at.required));
		json_object_set_new(x, "default",
		                    at.default_json ? json_string(at.default_json) : json_null());
		json_array_append_new(a, x);
	}
	json_object_set_new(o, "attributes", a);
	a = json_array();
	oxp_schema_constraint c;
	for (uint32_t i = 0; oxp_schema_constraint_at(s, i, &c); i++) {
		json_t *x = json_object();
		json_object_set_new(x, "name", json_string(c.name));
		json_object_set_new(x, "types", types_json(&c.types));
		json_array_append_new(a, x);
	}
	json_object_set_new(o, "constraints", a);
	char link[512];
	json_object_set_new(o, "link", json_string(oxp_schema_link(s, true, link, sizeof(link))));
	return o;
}

static void print(json_t *o)
{
	char *t = json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS);
	if (t == NULL) {
		fprintf(stderr, "schemadump: out of memory\n");
		exit(1);
	}
	puts(t);
	free(t);
	json_decref(o);
}

static void lookup(const char *domain, const char *op_type, const char *opset)
{
	oxp_str dom = {domain, strlen(domain)}, op = {op_type, strlen(op_type)};
	const oxp_schema *s = NULL;
	oxp_schema_status st = oxp_schema_find(dom, op, strtoll(opset, NULL, 10), &s);
	static const char *const names[] = {"found", "no_domain", "no_op", "too_new"};
	json_t *o = st == OXP_SCHEMA_FOUND || st == OXP_SCHEMA_TOO_NEW ? schema_json(s)
	                                                                  : json_object();
	json_object_set_new(o, "status", json_string(names[st]));
	print(o);
}

int main(int argc, char **argv)
{
	if (argc == 4) {
		lookup(argv[1], argv[2], argv[3]);
		return 0;
	}
	if (argc == 2 && strcmp(argv[1], "-") == 0) {
		char line[512];
		while (fgets(line, sizeof(line), stdin) != NULL) {
			line[strcspn(line, "\n")] = '\0';
			char *op = strchr(line, '\t');
			char *ver = op ? strchr(op + 1, '\t') : NULL;
			if (ver == NULL) {
				fprintf(stderr, "schemadump: bad line\n");
				return 2;
			}
			*op++ = '\0';
			*ver++ = '\0';
			lookup(line, op, ver);
		}
		return 0;
	}
	if (argc != 1) {
		fprintf(stderr, "usage: schemadump [DOMAIN OP OPSET | -]\n");
		return 2;
	}
	for (size_t i = 0; i < oxp_schema_count(); i++)
		print(schema_json(oxp_schema_at(i)));
	return 0;
}
