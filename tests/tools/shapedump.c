/*
 * shapedump — print the value types the linked graph knows for a model, as JSON, for
 * tests/diff/shapes.py.
 *
 *   shapedump MODEL.onnx
 *
 * Output: one object per scope, keyed by the scope id ("" is the main graph, then ids
 * such as "n12.then_branch" or "f0"), each mapping value names to
 *   {"elem_type": N, "dims": [int | "symbol" | null, ...] | null, "source": S}
 * where the INFERRED type is printed for every value that has one (S = "inferred"), else
 * the declared one (S = "declared" or "initializer").  A value with both also carries
 * "declared": {"elem_type": N, "dims": ...} so the script can check the two agree.  A value
 * whose values the data propagation knows (oxp_dag_value_data) also has "data": [int |
 * "symbol" | null, ...] and "data_rank" (0 for a scalar, 1).
 * Values nothing is known about are left out.  Values sharing a name in one scope (a
 * model with two producers for a name) are all printed, the first one first.  Exit status: 0, or 1 when the model does not parse or link.
 */
#include "parser/oxp.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void put_str(const char *p, size_t n)
{
	putchar('"');
	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)p[i];
		if (ch == '"' || ch == '\\')
			printf("\\%c", ch);
		else if (ch < 0x20 || ch == 0x7f)
			printf("\\u%04x", ch);
		else
			putchar(ch);
	}
	putchar('"');
}

static void put_type(const oxp_value_type *t)
{
	printf("\"elem_type\": %d, \"dims\": ", (int)t->elem_type);
	if (t->rank < 0) {
		printf("null");
		return;
	}
	putchar('[');
	for (int32_t k = 0; k < t->rank; k++) {
		const oxp_dim *d = &t->dims[k];
		if (k > 0)
			printf(", ");
		if (d->kind == OXP_DIM_VALUE && d->value >= 0)
			printf("%lld", (long long)d->value);
		else if (d->kind == OXP_DIM_PARAM && d->param.len > 0)
			put_str(d->param.p, d->param.len);
		else
			printf("null");
	}
	putchar(']');
}

static const char *source_name(oxp_shape_source s)
{
	switch (s) {
	case OXP_SHAPE_DECLARED:
		return "declared";
	case OXP_SHAPE_INITIALIZER:
		return "initializer";
	case OXP_SHAPE_INFERRED:
		return "inferred";
	default:
		return "none";
	}
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: shapedump MODEL.onnx\n");
		return 2;
	}
	oxp_model *m;
	oxp_dag *dag;
	oxp_error err;
	char msg[600];
	if (oxp_model_open(&m, argv[1], NULL, &err) != OXP_OK) {
		fprintf(stderr, "%s: %s\n", argv[1], oxp_error_format(&err, msg, sizeof(msg)));
		return 1;
	}
	if (oxp_dag_build(&dag, m, NULL, &err) != OXP_OK) {
		fprintf(stderr, "%s: %s\n", argv[1], oxp_error_format(&err, msg, sizeof(msg)));
		oxp_model_free(m);
		return 1;
	}
	const oxp_dag_view *v = oxp_dag_get(dag);
	printf("{");
	for (uint32_t si = 0; si < v->nscopes; si++) {
		const oxp_scope *s = &v->scopes[si];
		printf("%s\n", si > 0 ? "," : "");
		put_str(s->id, strlen(s->id));
		printf(": {");
		bool first = true;
		for (uint32_t vi = s->first_value; vi < s->first_value + s->nvalues; vi++) {
			const oxp_value *val = &v->values[vi];
			const oxp_value_type *best =
			    val->inferred.source != OXP_SHAPE_NONE ? &val->inferred : &val->declared;
			if (best->source == OXP_SHAPE_NONE)
				continue;
			printf("%s\n  ", first ? "" : ",");
			first = false;
			put_str(val->name.p, val->name.len);
			printf(": {");
			put_type(best);
			printf(", \"source\": \"%s\"", source_name(best->source));
			oxp_known_data kd;
			if (oxp_dag_value_data(dag, vi, &kd)) {
				printf(", \"data_rank\": %d, \"data\": [", (int)kd.rank);
				for (uint32_t k = 0; k < kd.count; k++) {
					const oxp_dim *d = &kd.elems[k];
					if (k > 0)
						printf(", ");
					if (d->kind == OXP_DIM_VALUE)
						printf("%lld", (long long)d->value);
					else if (d->kind == OXP_DIM_PARAM)
						put_str(d->param.p, d->param.len);
					else
						printf("null");
				}
				printf("]");
			}
			if (best == &val->inferred && val->declared.source != OXP_SHAPE_NONE) {
				printf(", \"declared\": {");
				put_type(&val->declared);
				printf(", \"source\": \"%s\"}", source_name(val->declared.source));
			}
			printf("}");
		}
		printf("}");
	}
	printf("\n}\n");
	oxp_dag_free(dag);
	oxp_model_free(m);
	return 0;
}
