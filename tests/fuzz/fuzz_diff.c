/*
 * fuzz_diff.c — libFuzzer target: the model diff (diff/oxd.h) of the input against itself
 * and against a copy with one byte changed, and its JSON document.
 *
 * Checks, whatever the input:
 *  - oxd_diff_build succeeds (only resources may fail it) and its view is consistent: every
 *    node of A and of B has exactly one record, of_a / of_b point at it, a record's status
 *    agrees with its sides (added: B only, removed: A only), its changes are in range and
 *    its mask is theirs; tensor records point at tensors; the summary counts the records;
 *  - the JSON document is produced and parses (jansson) with format onnxviz.diff/1;
 *  - a model against itself: every node is paired and, when every node has a name of its
 *    own (so that names pair them one to one), nothing differs (same).
 * Limits as fuzz_graph.c: a 64 MB arena, at most 128 inputs per node.
 */
#include "diff/oxd.h"
#include "tests/fuzz/fuzz_common.h"

#include <jansson.h>

#define FUZZ_MAX_ALLOC ((size_t)64 << 20)

static bool names_unique(const oxp_dag_view *v)
{
	/* quadratic, on the few nodes a fuzz input has */
	if (v->nnodes > 2000)
		return false;
	for (uint32_t i = 0; i < v->nnodes; i++) {
		oxp_str a = v->nodes[i].proto->name;
		if (a.len == 0)
			return false;
		for (uint32_t j = i + 1; j < v->nnodes; j++) {
			oxp_str b = v->nodes[j].proto->name;
			if (a.len == b.len && memcmp(a.p, b.p, a.len) == 0)
				return false;
		}
	}
	return true;
}

static void check_view(const oxd_diff *df, const oxp_dag_view *A, const oxp_dag_view *B)
{
	const oxd_view *v = oxd_get(df);
	uint32_t counts[4] = {0, 0, 0, 0};
	FZ_CHECK(v->nnodes <= A->nnodes + B->nnodes);
	for (uint32_t i = 0; i < v->nnodes; i++) {
		const oxd_node *r = &v->nodes[i];
		FZ_CHECK(r->a != OXP_NONE || r->b != OXP_NONE);
		FZ_CHECK(r->a == OXP_NONE || (r->a < A->nnodes && v->of_a[r->a] == i));
		FZ_CHECK(r->b == OXP_NONE || (r->b < B->nnodes && v->of_b[r->b] == i));
		FZ_CHECK((r->status == OXD_ADDED) == (r->a == OXP_NONE));
		FZ_CHECK((r->status == OXD_REMOVED) == (r->b == OXP_NONE));
		FZ_CHECK((r->status == OXD_CHANGED) == (r->nchanges > 0));
		FZ_CHECK((uint64_t)r->first_change + r->nchanges <= v->nchanges || r->nchanges == 0);
		uint32_t mask = 0;
		for (uint32_t k = 0; k < r->nchanges; k++) {
			const oxd_change *c = &v->changes[r->first_change + k];
			FZ_CHECK(c->kind < OXD_CH__COUNT);
			FZ_CHECK(c->tensor == OXP_NONE || c->tensor < v->ntensors);
			FZ_CHECK(c->kind != OXD_CH_TENSOR || c->tensor != OXP_NONE);
			FZ_CHECK(c->kind != OXD_CH_ATTRIBUTE || c->a != NULL || c->b != NULL);
			mask |= 1u << c->kind;
		}
		FZ_CHECK(mask == r->mask);
		counts[r->status]++;
	}
	for (uint32_t n = 0; n < A->nnodes; n++)
		FZ_CHECK(v->of_a[n] < v->nnodes && v->nodes[v->of_a[n]].a == n);
	for (uint32_t n = 0; n < B->nnodes; n++)
		FZ_CHECK(v->of_b[n] < v->nnodes && v->nodes[v->of_b[n]].b == n);
	FZ_CHECK(counts[OXD_SAME] == v->summary.unchanged && counts[OXD_CHANGED] == v->summary.changed &&
	         counts[OXD_ADDED] == v->summary.added && counts[OXD_REMOVED] == v->summary.removed);
	for (uint32_t i = 0; i < v->ntensors; i++) {
		const oxd_tensor *t = &v->tensors[i];
		FZ_CHECK(t->a != NULL || t->b != NULL);
		FZ_CHECK((t->status == OXD_ADDED) == (t->a == NULL));
		FZ_CHECK((t->status == OXD_REMOVED) == (t->b == NULL));
		FZ_CHECK(!t->compared || t->changed <= t->elements);
		FZ_CHECK(t->kind != OXD_T_ATTRIBUTE || t->node < v->nnodes);
	}
	char *text = NULL;
	size_t len = 0;
	oxd_error e;
	FZ_CHECK(oxd_json((oxd_diff *)df, &text, &len, &e) == OXD_OK);
	json_error_t je;
	json_t *j = json_loadb(text, len, 0, &je);
	FZ_CHECK(j != NULL);
	FZ_CHECK(strcmp(json_string_value(json_object_get(j, "format")), "onnxviz.diff/1") == 0);
	FZ_CHECK(json_array_size(json_object_get(j, "nodes")) == v->nnodes);
	json_decref(j);
	free(text);
}

typedef struct linked {
	oxp_model *m;
	oxp_dag *d;
} linked;

static bool link_model(linked *l, const uint8_t *data, size_t size)
{
	oxp_limits lim = oxp_limits_default();
	lim.max_alloc = FUZZ_MAX_ALLOC;
	lim.max_node_io = 128;
	oxp_error pe;
	l->m = NULL;
	l->d = NULL;
	if (oxp_model_parse(&l->m, data, size, &lim, &pe) != OXP_OK)
		return false;
	oxp_dag_options opt = {.infer_shapes = true};
	if (oxp_dag_build(&l->d, l->m, &opt, &pe) != OXP_OK) {
		oxp_model_free(l->m);
		return false;
	}
	return true;
}

static void unlink_model(linked *l)
{
	oxp_dag_free(l->d);
	oxp_model_free(l->m);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	linked a;
	if (!link_model(&a, data, size))
		return 0;
	const oxp_dag_view *A = oxp_dag_get(a.d);
	oxd_diff *df = NULL;
	oxd_error e;
	FZ_CHECK(oxd_diff_build(&df, a.m, a.d, a.m, a.d, NULL, &e) == OXD_OK);
	check_view(df, A, A);
	const oxd_summary *s = &oxd_get(df)->summary;
	FZ_CHECK(s->added == 0 && s->removed == 0);
	if (names_unique(A))
		FZ_CHECK(s->same);
	oxd_free(df);
	/* one byte changed, somewhere in the second half (the first holds the header fields) */
	uint8_t *copy = malloc(size ? size : 1);
	if (copy != NULL && size > 8) {
		memcpy(copy, data, size);
		copy[size / 2 + (size / 2) * 7 / 11] ^= 0x01;
		linked b;
		if (link_model(&b, copy, size)) {
			FZ_CHECK(oxd_diff_build(&df, a.m, a.d, b.m, b.d, NULL, &e) == OXD_OK);
			check_view(df, A, oxp_dag_get(b.d));
			oxd_free(df);
			unlink_model(&b);
		}
	}
	free(copy);
	unlink_model(&a);
	return 0;
}
