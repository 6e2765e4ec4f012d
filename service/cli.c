/*
 * cli.c — `onnxviz inspect`, `onnxviz check` and `onnxviz render` (its overlay options:
 * heat_cli.c).
 *
 * Both open the model with oxp_model_open (mmap, zero-copy), link it, and print.  Errors go
 * to stderr as "onnxviz: MODEL: <code>: <message> at byte N in <path>" with exit code 1
 * (2 for usage errors).
 */
#include "service/cli.h"
#include "parser/oxp.h"
#include "render/oxr.h"
#include "service/formats.h"
#include "service/heat_cli.h"
#include "service/md.h"
#include "store/oxst.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A model that cannot be read: first what a person can act on (oxp_error_headline:
 * "this is not an ONNX model: it looks like text"), then the code and exact message. */
static int model_error(const char *path, const oxp_error *e)
{
	char buf[700], head[512];
	oxp_error_headline_file(e, path, head, sizeof(head));
	if (head[0] != '\0')
		fprintf(stderr, "onnxviz: %s: %s\n", path, head);
	fprintf(stderr, "onnxviz: %s: %s: %s\n", path, oxp_code_name(e->code),
	        oxp_error_format(e, buf, sizeof(buf)));
	return 1;
}

static int open_linked(const char *path, bool infer, oxp_model **m, oxp_dag **d)
{
	oxp_error e;
	if (oxp_model_open_ex(m, path, NULL, OXP_OPEN_LOW_RSS, &e) != OXP_OK)
		return model_error(path, &e);
	oxp_dag_options opt = {.infer_shapes = infer};
	if (oxp_dag_build(d, *m, &opt, &e) != OXP_OK) {
		oxp_model_free(*m);
		return model_error(path, &e);
	}
	return 0;
}

/* The end of a command that opened a model.  It used to leave the model to the process's
 * exit, because freeing it unmapped the low-RSS open's ~160 mappings one by one; since
 * that open is one mapping and a command's arenas are the one-shot region's
 * (docs/decisions.md 78) freeing is no slower (cli_startup.py, back to back). */
static void free_linked(oxp_model *m, oxp_dag *d)
{
	oxp_dag_free(d);
	oxp_model_free(m);
}

static void print_str(FILE *f, oxp_str s)
{
	for (size_t i = 0; i < s.len; i++) {
		unsigned char ch = (unsigned char)s.p[i];
		if (ch >= 0x20 && ch != 0x7f)
			fputc(ch, f);
		else
			fprintf(f, "\\x%02x", ch);
	}
}

typedef struct op_count {
	oxp_str domain, op;
	uint32_t n;
} op_count;

static int cmp_ops(const void *a, const void *b)
{
	const op_count *x = a, *y = b;
	if (x->n != y->n)
		return x->n < y->n ? 1 : -1;
	size_t n = x->op.len < y->op.len ? x->op.len : y->op.len;
	int c = n ? memcmp(x->op.p, y->op.p, n) : 0;
	return c ? c : (x->op.len > y->op.len) - (x->op.len < y->op.len);
}

static bool str_same(oxp_str a, oxp_str b)
{
	return a.len == b.len && (a.len == 0 || memcmp(a.p, b.p, a.len) == 0);
}

/* Named patterns by op ("patterns: LayerNormalization ×25, Gelu ×12"), when any. */
static void print_patterns(const oxp_dag *d)
{
	oxp_arena *a = oxp_arena_new((size_t)64 << 20);
	const oxp_fusions *f = NULL;
	if (a != NULL && oxp_fusion_find(d, a, &f, NULL) == OXP_OK && f->nmatches > 0) {
		printf("patterns:    ");
		const char *sep = " ";
		for (unsigned k = 0; k < OXP_FU__COUNT; k++)
			if (f->counts[k] > 0) {
				printf("%s%s \xc3\x97%" PRIu32, sep, oxp_fusion_name(k), f->counts[k]);
				sep = ", ";
			}
		putchar('\n');
	}
	oxp_arena_free(a);
}

/* The quantization summary (docs/quant.md), when the model is quantized. */
static bool print_quant(const oxp_dag *d)
{
	oxp_arena *a = oxp_arena_new((size_t)256 << 20);
	const oxp_quant *q = NULL;
	if (a == NULL || oxp_quant_analyze(d, a, &q, NULL) != OXP_OK) {
		oxp_arena_free(a);
		return false;
	}
	if (q->nops > 0 || q->plumbing > 0) {
		printf("quantized:    %" PRIu32 " ops (", q->nops);
		const char *sep = "";
		for (unsigned b = 1; b <= OXP_QF_WEIGHT_ONLY; b <<= 1)
			if (q->formats & b) {
				printf("%s%s", sep, oxp_qformat_name(b));
				sep = ", ";
			}
		printf("), %" PRIu64 " plumbing nodes, %" PRIu64 " float ops\n", q->plumbing,
		       q->float_ops);
		for (uint32_t i = 0; i < q->nweights; i++)
			printf("  %-10s weights: %" PRIu64 " ops, %" PRIu64 " tensors, %" PRIu64
			       " parameters\n",
			       q->weights[i].name, q->weights[i].ops, q->weights[i].tensors,
			       q->weights[i].parameters);
		for (uint32_t i = 0; i < q->nacts; i++)
			printf("  %-10s activations: %" PRIu64 " ops\n", q->acts[i].name, q->acts[i].ops);
		printf("  float parameters: %" PRIu64 ", other parameters: %" PRIu64
		       ", scales and zero points: %" PRIu64 "\n",
		       q->float_params, q->other_params, q->quant_params);
	}
	oxp_arena_free(a);
	return true;
}

/* Prints the summary; false (after a message) when memory ran out, the output then
 * being incomplete. */
static bool print_summary(const char *path, const oxp_model *m, const oxp_dag *d)
{
	const oxp_model_proto *p = oxp_model_proto_get(m);
	const oxp_dag_view *v = oxp_dag_get(d);
	printf("model:        %s (%zu bytes)\n", path, oxp_model_size(m));
	printf("ir_version:   %" PRId64 "\n", p->ir_version);
	printf("producer:     ");
	print_str(stdout, p->producer_name);
	if (p->producer_version.len) {
		putchar(' ');
		print_str(stdout, p->producer_version);
	}
	putchar('\n');
	printf("opsets:      ");
	for (size_t i = 0; i < p->nopset_import; i++) {
		putchar(' ');
		if (p->opset_import[i].domain.len)
			print_str(stdout, p->opset_import[i].domain);
		else
			fputs("ai.onnx", stdout);
		printf(":%" PRId64, p->opset_import[i].version);
	}
	putchar('\n');
	size_t ninit = p->graph ? p->graph->ninitializers + p->graph->nsparse_initializers : 0;
	printf("nodes:        %" PRIu32 " (%" PRIu32 " scopes, %" PRIu32 " subgraphs, depth %" PRIu32
	       ")\n",
	       v->nnodes, v->summary.nscopes, v->summary.nsubgraphs, v->summary.max_depth);
	printf("initializers: %zu\n", ninit);
	printf("functions:    %zu\n", p->nfunctions);
	printf("parameters:   %" PRIu64 " (%" PRIu64 " bytes)\n", v->summary.parameters,
	       v->summary.parameter_bytes);
	for (int dt = 1; dt < OXP_DT__COUNT; dt++) {
		if (v->summary.params_by_dtype[dt] == 0)
			continue;
		printf("  %-10s %" PRIu64 " (%" PRIu64 " bytes)\n", oxp_dtype_short(dt),
		       v->summary.params_by_dtype[dt], v->summary.bytes_by_dtype[dt]);
	}
	if (v->summary.scale_elements > 0)
		printf("  scales and zero points: %" PRIu64 " (%" PRIu64 " bytes), not parameters\n",
		       v->summary.scale_elements, v->summary.scale_bytes);
	/* op histogram over every node of every scope */
	op_count *ops = calloc(v->nnodes ? v->nnodes : 1, sizeof(*ops));
	size_t nops = 0;
	if (ops == NULL) {
		fflush(stdout);
		fprintf(stderr, "onnxviz: %s: out of memory (the summary above is incomplete)\n", path);
		return false;
	}
	for (uint32_t i = 0; i < v->nnodes; i++) {
		const oxp_node *n = v->nodes[i].proto;
		size_t j = 0;
		while (j < nops && !(str_same(ops[j].op, n->op_type) && str_same(ops[j].domain, n->domain)))
			j++;
		if (j == nops) {
			ops[nops].op = n->op_type;
			ops[nops].domain = n->domain;
			nops++;
		}
		ops[j].n++;
	}
	qsort(ops, nops, sizeof(*ops), cmp_ops);
	printf("ops:          %zu types\n", nops);
	for (size_t j = 0; j < nops; j++) {
		printf("  %6" PRIu32 "  ", ops[j].n);
		if (ops[j].domain.len) {
			print_str(stdout, ops[j].domain);
			putchar(':');
		}
		print_str(stdout, ops[j].op);
		putchar('\n');
	}
	free(ops);
	print_patterns(d);
	if (!print_quant(d)) {
		fflush(stdout);
		fprintf(stderr, "onnxviz: %s: out of memory (the summary above is incomplete)\n", path);
		return false;
	}
	printf("warnings:     %" PRIu32 "\n", v->nwarnings);
	for (uint32_t i = 0; i < v->nwarnings && i < 20; i++)
		printf("  %s: %s\n", oxp_warning_kind_name(v->warnings[i].kind), v->warnings[i].message);
	if (v->nwarnings > 20)
		printf("  ... %" PRIu32 " more (see --json)\n", v->nwarnings - 20);
	return true;
}

/* The arguments of `onnxviz CMD MODEL [--json]` (inspect, check; inspect also takes
 * `--dims NAME:VALUE,...` when dims is not NULL): -1 to go on with *path and *json set,
 * else the exit status (0 after --help, 2 on a usage error).  `help` is printed after the
 * usage line. */
static int model_json_args(int argc, char **argv, const char *cmd, const char *help,
                           const char **path, bool *json, const char **dims, bool *md)
{
	*path = NULL;
	*json = false;
	for (int i = 1; i < argc; i++) {
		const char *f = !strncmp(argv[i], "--format=", 9) ? argv[i] + 9
		                : !strcmp(argv[i], "--format") && i + 1 < argc ? argv[++i] : NULL;
		if (!strcmp(argv[i], "--json") || (f != NULL && !strcmp(f, "json")))
			*json = true;
		else if (md != NULL && f != NULL && !strcmp(f, "md"))
			*md = true;
		else if (f != NULL && strcmp(f, "text") != 0) {
			fprintf(stderr, "onnxviz %s: --format: text, json%s\n", cmd, md != NULL ? " or md" : "");
			return 2;
		} else if (f != NULL)
			continue;
		else if (dims != NULL && !strcmp(argv[i], "--dims") && i + 1 < argc)
			*dims = argv[++i];
		else if (dims != NULL && !strncmp(argv[i], "--dims=", 7))
			*dims = argv[i] + 7;
		else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			printf("usage: onnxviz %s MODEL [--json | --format=text|json%s]%s\n%s", cmd,
			       md != NULL ? "|md" : "", dims != NULL ? " [--dims NAME:VALUE,...]" : "", help);
			return 0;
		} else if (argv[i][0] == '-' && argv[i][1] != '\0') {
			fprintf(stderr, "onnxviz %s: unknown option %s\n", cmd, argv[i]);
			return 2;
		} else if (*path == NULL)
			*path = argv[i];
		else {
			fprintf(stderr, "onnxviz %s: one model at a time\n", cmd);
			return 2;
		}
	}
	if (*path == NULL) {
		fprintf(stderr, "usage: onnxviz %s MODEL [--json]\n", cmd);
		return 2;
	}
	return -1;
}

#define INSPECT_HELP                                                                       \
	"prints the model's summary and what it costs (docs/cost.md): MACs, other ops,\n"      \
	"FLOPs = 2 x MACs + other ops, parameters, activation bytes, and the 10 op types\n"     \
	"with the most MACs; figures are polynomials in the model's named dims.\n"              \
	"  --json                 the JSON document (docs/document.md) with a \"cost\" member\n" \
	"                         (the schema of GET /models/{id}/cost.json, docs/api.md)\n"    \
	"  --format=md            a model card in GitHub Flavored Markdown (name, producer,\n"   \
	"                         opsets, inputs and outputs, op types, parameters, MACs)\n"     \
	"  --dims NAME:VALUE,...  bind named dims (batch:1,sequence_length:128): figures\n"     \
	"                         naming them become numbers\n"

/* The cost section of the summary; false (after a message) when memory ran out. */
static bool print_cost(const char *path, const oxp_dag *d, const oxp_cost_bind *bind)
{
	oxp_arena *a = oxp_arena_new((size_t)256 << 20);
	const oxp_cost *c = NULL;
	if (a == NULL || oxp_cost_compute(d, a, bind, &c, NULL) != OXP_OK) {
		oxp_arena_free(a);
		fflush(stdout);
		fprintf(stderr, "onnxviz: %s: out of memory (the cost is missing)\n", path);
		return false;
	}
	const oxp_cost_sum *t = &c->total;
	char b1[512], b2[512];
	oxp_cost_poly flops;
	oxp_cost_flops(&flops, &t->macs, &t->ops);
	printf("cost:         %s MACs, %s other ops\n", oxp_cost_poly_format(c, &t->macs, 0, b1, sizeof(b1)),
	       oxp_cost_poly_format(c, &t->ops, 0, b2, sizeof(b2)));
	printf("  FLOPs (2 x MACs + other ops): %s\n", oxp_cost_poly_format(c, &flops, 0, b1, sizeof(b1)));
	printf("  MACs exactly: %s\n", oxp_cost_poly_format(c, &t->macs, OXP_COST_FMT_EXACT, b1, sizeof(b1)));
	if (t->params.too_large)
		printf("  parameters: too large\n");
	else
		printf("  parameters: %" PRIu64 " (%" PRIu64 " bytes stored, scales and zero points %" PRIu64
		       " bytes of them; %" PRIu64 " elements stored)\n",
		       t->params.weights, t->params.bytes, t->params.qbytes, t->params.elements);
	printf("  activations: %s bytes read, %s bytes written\n",
	       oxp_cost_poly_format(c, &t->read, 0, b1, sizeof(b1)),
	       oxp_cost_poly_format(c, &t->written, 0, b2, sizeof(b2)));
	printf("  nodes: %" PRIu32 " counted, %" PRIu32 " data movement, %" PRIu32
	       " folded bookkeeping (cost 0), %" PRIu32 " uncounted, %" PRIu32 " unknown shapes, %" PRIu32
	       " control flow, %" PRIu32 " calls\n",
	       t->counted, t->moves, t->bookkeeping, t->uncounted, t->unknown, t->control, t->calls);
	printf("  top op types by MACs:\n");
	for (uint32_t i = 0, shown = 0; i < c->ntypes && shown < 10; i++) {
		const oxp_cost_optype *ty = &c->types[i];
		if (ty->kind != OXP_CK_COUNTED)
			continue;
		shown++;
		printf("    %-28.*s %6" PRIu32 "  %s MACs, %s ops\n", (int)ty->op.len, ty->op.p, ty->count,
		       oxp_cost_poly_format(c, &ty->macs, 0, b1, sizeof(b1)),
		       oxp_cost_poly_format(c, &ty->ops, 0, b2, sizeof(b2)));
	}
	for (uint32_t i = 0; i < c->ntypes; i++) {
		const oxp_cost_optype *ty = &c->types[i];
		if (ty->kind != OXP_CK_UNCOUNTED)
			continue;
		printf("  uncounted: %6" PRIu32 "  ", ty->count);
		if (ty->domain.len) {
			print_str(stdout, ty->domain);
			putchar(':');
		}
		print_str(stdout, ty->op);
		putchar('\n');
	}
	oxp_arena_free(a);
	return true;
}

/* Insert `"cost": {...}` before the closing brace of the JSON object in out. */
static bool splice_cost(const oxp_model *m, const oxp_dag *d, const oxp_cost_bind *bind,
                        oxr_buf *out, oxr_error *err)
{
	oxr_buf cj;
	oxr_buf_init(&cj, 0);
	bool ok = oxr_cost_json(m, d, bind, &cj, err) == OXR_OK;
	if (ok && out->len > 0 && out->data[out->len - 1] == '}') {
		out->len--;
		ok = oxr_buf_append(out, ",\"cost\":", 8) &&
		     oxr_buf_append(out, cj.data, cj.len) && oxr_buf_append(out, "}", 1);
		if (!ok) {
			err->code = OXR_E_NOMEM;
			snprintf(err->message, sizeof(err->message), "out of memory");
		}
	}
	oxr_buf_free(&cj);
	return ok;
}

int oxs_cli_inspect(int argc, char **argv)
{
	const char *path;
	bool json, md = false;
	const char *dims = NULL;
	int st = model_json_args(argc, argv, "inspect", INSPECT_HELP, &path, &json, &dims, &md);
	if (st >= 0)
		return st;
	oxp_cost_bind bind = {0};
	oxp_error be;
	if (dims != NULL && oxp_cost_bind_parse(&bind, dims, &be) != OXP_OK) {
		fprintf(stderr, "onnxviz inspect: %s\n", be.message);
		return 2;
	}
	oxp_model *m;
	oxp_dag *d;
	int rc = open_linked(path, true, &m, &d);
	if (rc != 0)
		return rc;
	if (md) {
		oxr_buf out;
		oxr_buf_init(&out, 0);
		const char *slash = strrchr(path, '/');
		if (!oxs_card_md(slash != NULL ? slash + 1 : path, m, d, &out)) {
			fprintf(stderr, "onnxviz: %s: out of memory\n", path);
			rc = 1;
		} else {
			fwrite(out.data, 1, out.len, stdout);
		}
		oxr_buf_free(&out);
	} else if (json) {
		oxr_buf out;
		oxr_error err;
		oxr_buf_init(&out, 0);
		if (oxr_doc_json(m, d, OXR_DOC_FULL, &out, &err) != OXR_OK ||
		    !splice_cost(m, d, &bind, &out, &err)) {
			fprintf(stderr, "onnxviz: %s: %s: %s\n", path, oxr_code_name(err.code), err.message);
			rc = 1;
		} else {
			fwrite(out.data, 1, out.len, stdout);
			fputc('\n', stdout);
		}
		oxr_buf_free(&out);
	} else if (!print_summary(path, m, d) || !print_cost(path, d, &bind)) {
		rc = 1;
	}
	free_linked(m, d);
	return rc;
}

int oxs_cli_check(int argc, char **argv)
{
	const char *path;
	bool json;
	int st = model_json_args(argc, argv, "check",
	                         "exit status: 0 no errors, 1 errors, 2 the model cannot be read\n",
	                         &path, &json, NULL, NULL);
	if (st >= 0)
		return st;
	oxp_model *m;
	oxp_dag *d;
	if (open_linked(path, true, &m, &d) != 0)
		return 2; /* the message is out: a model that cannot be read is not "has errors" */
	/* external data locations are relative to the model's folder */
	char dir[4096];
	const char *slash = strrchr(path, '/');
	if (slash == NULL)
		snprintf(dir, sizeof(dir), ".");
	else
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path) + (slash == path), path);
	int dirfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	oxp_check *c;
	oxp_error e;
	int rc;
	if (oxp_check_run(&c, m, d, dirfd, &e) != OXP_OK) {
		model_error(path, &e);
		rc = 2;
	} else {
		const oxp_check_view *cv = oxp_check_get(c);
		const oxp_dag_view *v = oxp_dag_get(d);
		rc = cv->count[OXP_SEV_ERROR] > 0 ? 1 : 0;
		if (json) {
			oxr_buf out;
			oxr_error err;
			oxr_buf_init(&out, 0);
			if (oxr_check_json(m, d, dirfd, OXP_CHECK_MAX_LISTED, &out, &err) != OXR_OK) {
				fprintf(stderr, "onnxviz: %s: %s: %s\n", path, oxr_code_name(err.code),
				        err.message);
				rc = 2;
			} else {
				fwrite(out.data, 1, out.len, stdout);
				fputc('\n', stdout);
			}
			oxr_buf_free(&out);
		} else {
			for (uint32_t i = 0; i < cv->nproblems; i++) {
				const oxp_problem *pb = &cv->problems[i];
				printf("%-7s %-22s %-8s %s\n", oxp_severity_name(pb->severity),
				       oxp_check_code_name(pb->code),
				       pb->node != OXP_NONE ? v->nodes[pb->node].id : "-", pb->message);
			}
			uint64_t total = cv->count[0] + cv->count[1] + cv->count[2];
			if (total > cv->nproblems)
				printf("... %" PRIu64 " more not listed\n", total - cv->nproblems);
			printf("%s: %" PRIu64 " error%s, %" PRIu64 " warning%s, %" PRIu64 " info%s\n", path,
			       cv->count[0], cv->count[0] == 1 ? "" : "s", cv->count[1],
			       cv->count[1] == 1 ? "" : "s", cv->count[2], cv->count[2] == 1 ? "" : "s");
		}
		oxp_check_free(c);
	}
	if (dirfd >= 0)
		close(dirfd);
	free_linked(m, d);
	return rc;
}

/* Writes the rendering to path ("-" or NULL: standard output).  A file is written whole
 * or not at all: into a temporary beside it, renamed over it once complete (a failed
 * write leaves the old file, not half a new one).  Paths that exist and are not regular
 * files (/dev/stdout, a pipe) are written in place.  0, or 1 after a message. */
int oxs_write_output(const char *path, const oxr_buf *out)
{
	if (path == NULL || strcmp(path, "-") == 0) {
		if (fwrite(out->data, 1, out->len, stdout) != out->len || fflush(stdout) != 0) {
			fprintf(stderr, "onnxviz: cannot write the output: %s\n", strerror(errno));
			return 1;
		}
		return 0;
	}
	struct stat st;
	bool in_place = stat(path, &st) == 0 && !S_ISREG(st.st_mode);
	char tmp[4096];
	if (!in_place && snprintf(tmp, sizeof(tmp), "%s.tmp-%ld", path, (long)getpid()) >=
	                     (int)sizeof(tmp)) {
		fprintf(stderr, "onnxviz: %s: path too long\n", path);
		return 1;
	}
	const char *target = in_place ? path : tmp;
	FILE *f = fopen(target, "wb");
	if (f == NULL) {
		fprintf(stderr, "onnxviz: cannot write %s: %s\n", path, strerror(errno));
		return 1;
	}
	bool ok = fwrite(out->data, 1, out->len, f) == out->len;
	int e = errno;
	if (fclose(f) != 0 && ok) {
		ok = false;
		e = errno;
	}
	if (ok && !in_place && rename(tmp, path) != 0) {
		ok = false;
		e = errno;
	}
	if (!ok) {
		if (!in_place)
			unlink(tmp);
		fprintf(stderr, "onnxviz: cannot write %s: %s\n", path, strerror(e));
		return 1;
	}
	return 0;
}

int oxs_cli_render_option(oxr_options *opt, const char *cmd, const char *arg)
{
	const char *eq = strchr(arg, '=');
	if (strncmp(arg, "--", 2) != 0 || eq == NULL)
		return 1;
	char key[64];
	size_t kl = (size_t)(eq - (arg + 2));
	if (kl >= sizeof(key)) {
		fprintf(stderr, "onnxviz %s: unknown option %s\n", cmd, arg);
		return 2;
	}
	memcpy(key, arg + 2, kl);
	key[kl] = '\0';
	oxr_error err;
	if (oxr_options_set(opt, key, eq + 1, &err) != OXR_OK) {
		fprintf(stderr, "onnxviz %s: %s\n", cmd, err.message);
		return 2;
	}
	return 0;
}

/* --format=EXT, else -o's extension (formats.c); a drawing is SVG by default.  *raster:
 * the SVG is then drawn as PNG. */
static oxr_format format_of(const char *out, const char *fmt, bool *raster)
{
	const oxs_ext_format *e = fmt != NULL ? oxs_format_of_ext(fmt) : oxs_format_of_path(out);
	*raster = e != NULL && e->raster;
	return e != NULL && e->render >= 0 ? (oxr_format)e->render : OXR_FMT_SVG;
}

int oxs_cli_raster_option(oxr_raster *r, const char *cmd, const char *arg)
{
	const char *eq = strchr(arg, '=');
	if (strncmp(arg, "--", 2) != 0 || eq == NULL)
		return 1;
	char key[16];
	size_t kl = (size_t)(eq - (arg + 2));
	if (kl >= sizeof(key))
		return 1;
	memcpy(key, arg + 2, kl);
	key[kl] = '\0';
	/* --scale=2 is the pixel ratio; --scale=log (a word) the heat overlay's */
	if (!strcmp(key, "scale") && (eq[1] < '0' || eq[1] > '9'))
		return 1;
	if (!strcmp(key, "max-pixels")) {
		char *end;
		errno = 0;
		unsigned long long v = strtoull(eq + 1, &end, 10);
		if (eq[1] < '0' || eq[1] > '9' || *end != '\0' || errno != 0 || v == 0 ||
		    v > ((uint64_t)1 << 40)) {
			fprintf(stderr, "onnxviz %s: --max-pixels: a whole number of pixels, 1..2^40\n",
			        cmd);
			return 2;
		}
		r->max_pixels = v;
		return 0;
	}
	oxr_error err;
	int rc = oxr_raster_set(r, key, eq + 1, &err);
	if (rc < 0)
		return 1;
	if (rc != OXR_OK) {
		fprintf(stderr, "onnxviz %s: %s\n", cmd, err.message);
		return 2;
	}
	return 0;
}

/* out (an SVG) drawn as PNG in its place; 0, or 1 after a message naming path */
int oxs_cli_rasterize(const char *path, const oxr_raster *r, oxr_buf *out)
{
	oxr_buf png;
	oxr_error err;
	oxr_buf_init(&png, 0);
	oxr_code rc = oxr_raster_png(out->data, out->len, r, &png, &err);
	if (rc != OXR_OK) {
		fprintf(stderr, "onnxviz: %s: %s: %s\n", path, oxr_code_name(rc), err.message);
		oxr_buf_free(&png);
		return 1;
	}
	oxr_buf_free(out);
	*out = png;
	return 0;
}

static int render_args(int argc, char **argv, void *heat, oxr_options *opt, oxr_raster *ras,
                       const char **pathp, const char **outp, const char **fmtp);

int oxs_cli_render(int argc, char **argv)
{
	const char *path = NULL, *out_path = NULL, *fmt = NULL;
	oxr_options opt;
	oxr_raster ras;
	oxr_error err;
	oxr_options_default(&opt);
	oxr_raster_default(&ras);
	void *heat = oxs_cli_render_heat_new();
	if (heat == NULL) {
		fprintf(stderr, "onnxviz render: out of memory\n");
		return 1;
	}
	int rc = render_args(argc, argv, heat, &opt, &ras, &path, &out_path, &fmt);
	if (rc >= 0) {
		free(heat);
		return rc;
	}
	oxp_model *m;
	oxp_dag *d;
	/* shapes are inferred also with --shapes=off (which only hides their labels): the
	 * cost rows need them, and the layout worker and the service always infer, so the same
	 * options draw the same picture everywhere */
	rc = open_linked(path, true, &m, &d);
	if (rc != 0) {
		free(heat);
		return rc;
	}
	oxr_buf out;
	oxr_buf_init(&out, 0);
	bool raster;
	oxr_format f = format_of(out_path, fmt, &raster);
	int hr = oxs_cli_render_heat(heat, m, d, &opt, f, &out, &err);
	if (hr == 1 || hr == 2) {
		rc = hr;
	} else if ((hr == -1 && oxr_render(m, d, &opt, f, &out, &err) != OXR_OK) || hr == 3) {
		fprintf(stderr, "onnxviz: %s: %s: %s\n", path, oxr_code_name(err.code), err.message);
		rc = 1;
	} else if (raster && oxs_cli_rasterize(path, &ras, &out) != 0) {
		rc = 1;
	} else {
		rc = oxs_write_output(out_path, &out);
	}
	free(heat);
	oxr_buf_free(&out);
	free_linked(m, d);
	return rc;
}

/* `onnxviz render`'s arguments: -1 to go on, else the exit status. */
static int render_args(int argc, char **argv, void *heat, oxr_options *opt, oxr_raster *ras,
                       const char **pathp, const char **outp, const char **fmtp)
{
	const char *path = NULL, *out_path = NULL, *fmt = NULL;
	int orc;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if ((orc = oxs_cli_raster_option(ras, "render", a)) != 1) {
			if (orc != 0)
				return 2;
			continue;
		}
		int t = oxs_cli_render_heat_option(heat, argc, argv, &i);
		if (t < 0)
			return 2;
		if (t > 0)
			continue;
		if (!strcmp(a, "-o") && i + 1 < argc) {
			out_path = argv[++i];
		} else if (!strncmp(a, "--format=", 9)) {
			fmt = a + 9;
		} else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			printf("usage: onnxviz render MODEL [-o OUT.svg|.png|.dot|.json] "
			       "[--format=svg|png|dot|json]\n"
			       "options (as for the HTTP service):\n"
			       "  --rankdir=TB|LR  --initializers=fold|nodes|hide  --subgraphs=collapse|expand\n"
			       "  --group=auto|none|N  --expand=SCOPE[,SCOPE...]|*  --depth=N\n"
			       "  --shapes=on|off  --attrs=none|key|all  --arith=fold|nodes\n"
			       "  --unfold=NODE_ID[,NODE_ID...]  --quant=fold|nodes  --io=fold|nodes\n"
			       "  --patterns=fold|nodes  --hide=OP[,OP...] (op types not drawn, edges bridged)\n"
			       "  --theme=light|dark\n"
			       "  --dims=NAME:VALUE[,...]  bind named dims in the MAC rows\n"
			       "heat (docs/overlays.md):\n"
			       "  --overlay FILE|cost  --metric M  --scale linear|log|thresholds\n"
			       "  --optimized OPT.onnx (ORT's optimized model, for profiles)\n"
			       "PNG (docs/render.md):\n"
			       "  --w=N --h=N  fit inside N CSS pixels  --scale=1..4  pixel ratio\n"
			       "  --max-pixels=N  budget (default 64000000)\n");
			return 0;
		} else if ((orc = oxs_cli_render_option(opt, "render", a)) != 1) {
			if (orc != 0)
				return 2;
		} else if (a[0] == '-' && a[1] != '\0') {
			fprintf(stderr, "onnxviz render: unknown option %s\n", a);
			return 2;
		} else if (path == NULL) {
			path = a;
		} else {
			fprintf(stderr, "onnxviz render: one model at a time\n");
			return 2;
		}
	}
	if (path == NULL) {
		fprintf(stderr, "usage: onnxviz render MODEL [-o OUT] [--OPTION=VALUE ...]\n");
		return 2;
	}
	if (ras->theme == OXR_THEME_DARK) /* --theme is read once: the drawing's and a PNG's */
		opt->theme_dark = true;
	*pathp = path;
	*outp = out_path;
	*fmtp = fmt;
	return -1;
}
