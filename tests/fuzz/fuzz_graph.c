/*
 * fuzz_graph.c — libFuzzer target: the input parsed as a model, linked into the DAG (with
 * shape inference) and written as the JSON document, a few nodes in full and a search.
 *
 * Checks, whatever the input:
 *  - oxp_dag_build fails only with a resource or recursion code and a well-formed error;
 *  - the linked DAG is consistent: every index is in range, each scope's nodes and values
 *    are its own range, edges into a node are where the node says and point at it, every
 *    consumer of a value is an edge carrying it, subscopes are owned by their node, node
 *    ids are unique and found again by oxp_dag_find_node, warnings name real nodes;
 *  - the model check names real nodes, scopes and values, with one-line messages;
 *  - the documents (full, summary, node, search) are produced within their cap (32 MB)
 *    or fail with too_big/out_of_memory, and what is produced is valid UTF-8 and parses
 *    as JSON (jansson).
 * Limits: a 64 MB arena, at most 128 inputs per node, the default counts otherwise, so one
 * input stays well under a second.
 */
#include "tests/fuzz/fuzz_common.h"

#include <jansson.h>

#define FUZZ_MAX_ALLOC ((size_t)64 << 20)
#define FUZZ_MAX_JSON ((size_t)32 << 20)

static void check_dag(const oxp_dag *d, const oxp_model *m)
{
	const oxp_dag_view *v = oxp_dag_get(d);
	const oxp_model_proto *p = oxp_model_proto_get(m);
	FZ_CHECK(v != NULL);
	for (uint32_t si = 0; si < v->nscopes; si++) {
		const oxp_scope *s = &v->scopes[si];
		FZ_CHECK(s->id != NULL);
		FZ_CHECK((uint64_t)s->first_node + s->nnodes <= v->nnodes);
		FZ_CHECK((uint64_t)s->first_value + s->nvalues <= v->nvalues);
		FZ_CHECK(s->parent == OXP_NONE || s->parent < v->nscopes);
		FZ_CHECK(s->owner == OXP_NONE || s->owner < v->nnodes);
		/* subgraphs have an enclosing scope, the main graph and functions none; training
		 * graphs see the main graph's names (their parent is the main scope, depth 0) */
		if (s->kind == OXP_SCOPE_SUBGRAPH)
			FZ_CHECK(s->parent != OXP_NONE && s->depth == v->scopes[s->parent].depth + 1);
		else if (s->kind == OXP_SCOPE_TRAINING)
			FZ_CHECK(s->parent == OXP_NONE || (s->parent == 0 && s->depth == 0));
		else
			FZ_CHECK(s->parent == OXP_NONE);
		FZ_CHECK(s->ninputs == 0 || s->inputs != NULL);
		FZ_CHECK(s->noutputs == 0 || s->outputs != NULL);
		for (uint32_t k = 0; k < s->ninputs; k++)
			FZ_CHECK(s->inputs[k] == OXP_NONE || s->inputs[k] < v->nvalues);
		for (uint32_t k = 0; k < s->noutputs; k++)
			FZ_CHECK(s->outputs[k] == OXP_NONE || s->outputs[k] < v->nvalues);
		for (uint32_t k = 0; k < s->nnodes; k++)
			FZ_CHECK(v->nodes[s->first_node + k].scope == si);
		for (uint32_t k = 0; k < s->nvalues; k++)
			FZ_CHECK(v->values[s->first_value + k].scope == si);
	}
	for (uint32_t ni = 0; ni < v->nnodes; ni++) {
		const oxp_dnode *n = &v->nodes[ni];
		FZ_CHECK(n->id != NULL && n->proto != NULL);
		FZ_CHECK(n->scope < v->nscopes);
		FZ_CHECK(n->index == ni - v->scopes[n->scope].first_node);
		FZ_CHECK(oxp_dag_find_node(d, n->id) == ni);
		for (size_t k = 0; k < n->proto->ninputs; k++)
			FZ_CHECK(n->inputs[k] == OXP_NONE || n->inputs[k] < v->nvalues);
		for (size_t k = 0; k < n->proto->noutputs; k++)
			FZ_CHECK(n->outputs[k] == OXP_NONE || n->outputs[k] < v->nvalues);
		FZ_CHECK(n->nedges_in == 0 || (uint64_t)n->first_edge_in + n->nedges_in <= v->nedges);
		for (uint32_t e = 0; e < n->nedges_in; e++)
			FZ_CHECK(v->edges[n->first_edge_in + e].dst == ni);
		FZ_CHECK(n->nsubscopes == 0 ||
		         (uint64_t)n->first_subscope + n->nsubscopes <= v->nscopes);
		for (uint32_t k = 0; k < n->nsubscopes; k++)
			FZ_CHECK(v->scopes[n->first_subscope + k].owner == ni);
		FZ_CHECK(n->function == OXP_NONE || n->function < p->nfunctions);
	}
	for (uint32_t vi = 0; vi < v->nvalues; vi++) {
		const oxp_value *val = &v->values[vi];
		FZ_CHECK(val->scope < v->nscopes);
		FZ_CHECK((unsigned)val->kind <= OXP_VALUE_NODE_OUTPUT);
		if (val->kind == OXP_VALUE_NODE_OUTPUT) {
			FZ_CHECK(val->producer < v->nnodes);
			FZ_CHECK(val->producer_output < v->nodes[val->producer].proto->noutputs);
			FZ_CHECK(v->nodes[val->producer].outputs[val->producer_output] == vi);
		}
		FZ_CHECK(val->nconsumers == 0 || val->consumers != NULL);
		for (uint32_t k = 0; k < val->nconsumers; k++) {
			FZ_CHECK(val->consumers[k] < v->nedges);
			FZ_CHECK(v->edges[val->consumers[k]].value == vi);
		}
		const oxp_value_type *ts[2] = {&val->declared, &val->inferred};
		for (int k = 0; k < 2; k++) {
			FZ_CHECK(ts[k]->rank >= -1);
			FZ_CHECK(ts[k]->rank <= 0 || ts[k]->dims != NULL);
		}
		const oxp_value_type *best = oxp_value_best_type(val);
		FZ_CHECK(best == &val->declared || best == &val->inferred);
	}
	for (uint32_t e = 0; e < v->nedges; e++) {
		const oxp_edge *ed = &v->edges[e];
		FZ_CHECK(ed->value < v->nvalues);
		FZ_CHECK(ed->dst < v->nnodes);
		FZ_CHECK(ed->dst_input < v->nodes[ed->dst].proto->ninputs);
		FZ_CHECK(v->nodes[ed->dst].inputs[ed->dst_input] == ed->value);
		if (ed->src != OXP_NONE) {
			FZ_CHECK(ed->src < v->nnodes);
			FZ_CHECK(ed->src_output < v->nodes[ed->src].proto->noutputs);
		}
	}
	for (uint32_t w = 0; w < v->nwarnings; w++) {
		const oxp_warning *wa = &v->warnings[w];
		FZ_CHECK((unsigned)wa->kind <= OXP_W_UNKNOWN_FUNCTION_DOMAIN);
		FZ_CHECK(wa->message != NULL && wa->message[0] != '\0');
		FZ_CHECK(fz_utf8_valid((const unsigned char *)wa->message, strlen(wa->message)));
		FZ_CHECK(wa->scope < v->nscopes);
		FZ_CHECK(wa->value == OXP_NONE || wa->value < v->nvalues);
		FZ_CHECK(wa->nnodes <= 64);
		for (uint32_t k = 0; k < wa->nnodes; k++)
			FZ_CHECK(wa->nodes[k] < v->nnodes);
	}
}

/* What a JSON writer produced: within the cap; when OK, valid UTF-8 and valid JSON. */
static void check_json(oxr_code rc, const oxr_buf *b, const oxr_error *e)
{
	fz_buf(b);
	if (rc != OXR_OK) {
		fz_render_error(e, rc);
		FZ_CHECK(rc == OXR_E_TOO_BIG || rc == OXR_E_NOMEM || rc == OXR_E_NOT_FOUND);
		return;
	}
	FZ_CHECK(b->len > 0);
	FZ_CHECK(fz_utf8_valid((const unsigned char *)b->data, b->len));
	json_error_t je;
	json_t *j = json_loadb(b->data, b->len, JSON_ALLOW_NUL, &je);
	if (j == NULL)
		fprintf(stderr, "fuzz_graph: bad JSON: %s at %d\n", je.text, je.position);
	FZ_CHECK(j != NULL);
	json_decref(j);
}

static void documents(const oxp_model *m, const oxp_dag *d, const uint8_t *data, size_t size)
{
	const oxp_dag_view *v = oxp_dag_get(d);
	oxr_error e;
	oxr_buf b;
	oxr_code rc;
	for (int kind = OXR_DOC_FULL; kind <= OXR_DOC_SUMMARY; kind++) {
		oxr_buf_init(&b, FUZZ_MAX_JSON);
		memset(&e, 0, sizeof(e));
		rc = oxr_doc_json(m, d, (oxr_doc_kind)kind, &b, &e);
		check_json(rc, &b, &e);
		oxr_buf_free(&b);
	}
	/* a few nodes in full: the first, the last, and one picked by the input */
	uint32_t picks[3] = {0, v->nnodes - 1, size > 0 ? data[size - 1] : 0};
	for (int k = 0; k < 3 && v->nnodes > 0; k++) {
		uint32_t ni = picks[k] % v->nnodes;
		oxr_buf_init(&b, FUZZ_MAX_JSON);
		memset(&e, 0, sizeof(e));
		rc = oxr_node_json(m, d, v->nodes[ni].id, &b, &e);
		FZ_CHECK(rc != OXR_E_NOT_FOUND);
		check_json(rc, &b, &e);
		oxr_buf_free(&b);
	}
	oxr_buf_init(&b, FUZZ_MAX_JSON);
	rc = oxr_node_json(m, d, "no.such.node", &b, &e);
	FZ_CHECK(rc == OXR_E_NOT_FOUND);
	oxr_buf_free(&b);
	/* a search for a few bytes of the input (up to the first NUL), and for "" */
	char q[9];
	size_t ql = 0;
	while (ql < 8 && ql < size && data[ql] != 0) {
		q[ql] = (char)data[ql];
		ql++;
	}
	q[ql] = '\0';
	const char *queries[2] = {q, "a"};
	for (int k = 0; k < 2; k++) {
		oxr_buf_init(&b, FUZZ_MAX_JSON);
		memset(&e, 0, sizeof(e));
		rc = oxr_search_json(m, d, queries[k], 20, &b, &e);
		check_json(rc, &b, &e);
		oxr_buf_free(&b);
	}
	/* preview keys: the first initializer ref of each scope and attribute 0 of node 0 */
	for (uint32_t si = 0; si < v->nscopes && si < 4; si++) {
		char key[600];
		snprintf(key, sizeof(key), "%s@i0", v->scopes[si].id);
		(void)oxp_dag_find_tensor(d, key);
	}
	if (v->nnodes > 0) {
		char key[600];
		snprintf(key, sizeof(key), "%s@a0", v->nodes[0].id);
		(void)oxp_dag_find_tensor(d, key);
		snprintf(key, sizeof(key), "%s@a0.1", v->nodes[0].id);
		(void)oxp_dag_find_tensor(d, key);
	}
	(void)oxp_dag_find_tensor(d, "@");
	(void)oxp_dag_find_tensor(d, "");
}

/* The model check: fails only out of memory; every problem names a real node, scope and
 * value, a known code and severity, and a one-line message; the counts add up; with and
 * without shape inference (the types it checks come from either). */
static void check_problems(const oxp_model *m, const oxp_dag *d)
{
	oxp_check *c = NULL;
	oxp_error e;
	oxp_code rc = oxp_check_run(&c, m, d, -1, &e);
	if (rc != OXP_OK) {
		FZ_CHECK((rc == OXP_E_NOMEM || rc == OXP_E_BUDGET) && c == NULL);
		return;
	}
	const oxp_dag_view *v = oxp_dag_get(d);
	const oxp_check_view *cv = oxp_check_get(c);
	uint64_t by_code = 0;
	for (int k = 0; k < OXP_C__COUNT; k++)
		by_code += cv->by_code[k];
	FZ_CHECK(by_code == cv->count[0] + cv->count[1] + cv->count[2]);
	FZ_CHECK(cv->nproblems <= OXP_CHECK_MAX_LISTED && cv->nproblems <= by_code);
	for (uint32_t i = 0; i < cv->nproblems; i++) {
		const oxp_problem *p = &cv->problems[i];
		FZ_CHECK((unsigned)p->code < OXP_C__COUNT && (unsigned)p->severity <= OXP_SEV_INFO);
		FZ_CHECK(p->node == OXP_NONE || p->node < v->nnodes);
		FZ_CHECK(p->scope == OXP_NONE || p->scope < v->nscopes);
		FZ_CHECK(p->value == OXP_NONE || p->value < v->nvalues);
		FZ_CHECK(p->message != NULL && p->message[0] != '\0' && strchr(p->message, '\n') == NULL);
	}
	oxp_check_free(c);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	oxp_limits lim = oxp_limits_default();
	lim.max_alloc = FUZZ_MAX_ALLOC;
	/* a node's JSON grows as inputs x consumers (tests/unit/test_hostile.c, found here):
	 * kept small so that the fuzzer looks elsewhere instead of timing out on it */
	lim.max_node_io = 128;
	oxp_model *m = NULL;
	oxp_error pe;
	if (oxp_model_parse(&m, data, size, &lim, &pe) != OXP_OK)
		return 0; /* fuzz_parse checks the parser's failures */
	for (int infer = 1; infer >= 0; infer--) {
		oxp_dag *d = NULL;
		oxp_dag_options opt = {.infer_shapes = infer != 0};
		memset(&pe, 0, sizeof(pe));
		oxp_code rc = oxp_dag_build(&d, m, &opt, &pe);
		if (rc != OXP_OK) {
			FZ_CHECK(d == NULL);
			fz_parse_error(&pe, rc, size);
			FZ_CHECK(rc == OXP_E_RECURSION || rc == OXP_E_LIMIT || rc == OXP_E_NOMEM ||
			         rc == OXP_E_BUDGET);
			break;
		}
		FZ_CHECK(d != NULL);
		check_dag(d, m);
		check_problems(m, d);
		if (infer)
			documents(m, d, data, size);
		oxp_dag_free(d);
	}
	oxp_model_free(m);
	return 0;
}
