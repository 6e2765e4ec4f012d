/*
 * heat_cli.c — `onnxviz overlay MODEL FILE...` (the attributed table of a profile or node
 * data, with its coverage) and the overlay options of `onnxviz render` (--overlay,
 * --metric, --scale, --optimized): render/heat_*.c do the work (docs/overlays.md).
 */
#include "service/heat_cli.h"
#include "parser/oxp.h"
#include "render/oxr.h"
#include "store/oxst.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A whole file, at most max bytes: NULL with a message on stderr. */
static char *read_bounded(const char *path, size_t max, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "onnxviz: cannot read %s: %s\n", path, strerror(errno));
		return NULL;
	}
	struct stat st;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && (uint64_t)st.st_size > max) {
		fprintf(stderr, "onnxviz: %s: %llu bytes, more than the %zu an overlay may have\n",
		        path, (unsigned long long)st.st_size, max);
		close(fd);
		return NULL;
	}
	/* a regular file is read into one allocation of its size (a pipe grows by doubling) */
	size_t cap = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) ? (size_t)st.st_size + 1 : 65536,
	       n = 0;
	char *buf = malloc(cap);
	while (buf != NULL) {
		if (n == cap) {
			if (cap > max) {
				fprintf(stderr, "onnxviz: %s: more than the %zu bytes an overlay may have\n",
				        path, max);
				free(buf);
				buf = NULL;
				break;
			}
			char *nb = realloc(buf, cap * 2);
			if (nb == NULL) {
				free(buf);
				buf = NULL;
				break;
			}
			buf = nb;
			cap *= 2;
		}
		ssize_t r = read(fd, buf + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			fprintf(stderr, "onnxviz: cannot read %s: %s\n", path, strerror(errno));
			free(buf);
			buf = NULL;
			break;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	if (buf != NULL && n > max) {
		fprintf(stderr, "onnxviz: %s: more than the %zu bytes an overlay may have\n", path, max);
		free(buf);
		return NULL;
	}
	*len = n;
	return buf;
}

typedef struct heat_args {
	const char *files[OXR_HEAT_MAX_INPUTS];
	uint32_t nfiles;
	const char *optimized;
	const char *metric;
	const char *scale;
	bool compare;      /* two files compared: B - A of the metric (oxr_heat_compare) */
} heat_args;

static int load_files(const heat_args *ha, const oxp_dag *d, oxr_heat **h);

/* Builds the overlay for dag d from the files (or the built-in "cost"); with --compare,
 * the comparison of the two files' overlays: 0, or 1 (2: usage) after a message. */
static int load_heat(const heat_args *ha, const oxp_dag *d, oxr_heat **h)
{
	if (!ha->compare)
		return load_files(ha, d, h);
	if (ha->nfiles != 2) {
		fprintf(stderr, "onnxviz: --compare takes two files (A, then B), not %u\n", ha->nfiles);
		return 2;
	}
	oxr_heat *ab[2] = {NULL, NULL};
	int rc = 0;
	for (int i = 0; i < 2 && rc == 0; i++) {
		heat_args one = *ha;
		one.compare = false;
		one.files[0] = ha->files[i];
		one.nfiles = 1;
		rc = load_files(&one, d, &ab[i]);
	}
	int ka = rc == 0 ? (ha->metric ? oxr_heat_metric(ab[0], ha->metric) : (int)ab[0]->primary)
	                 : -1;
	int kb = ka >= 0 ? oxr_heat_metric(ab[1], ab[0]->metrics[ka]) : -1;
	if (rc == 0 && (ka < 0 || kb < 0)) {
		fprintf(stderr, "onnxviz: --compare: no metric '%s' in %s\n",
		        ka < 0 ? (ha->metric ? ha->metric : "?") : ab[0]->metrics[ka],
		        ka < 0 ? ha->files[0] : ha->files[1]);
		rc = 2;
	}
	oxr_error err;
	memset(&err, 0, sizeof(err));
	if (rc == 0 && oxr_heat_compare(ab[0], (uint32_t)ka, ab[1], (uint32_t)kb, h, &err) != OXR_OK) {
		fprintf(stderr, "onnxviz: %s: %s\n", oxr_code_name(err.code), err.message);
		rc = 1;
	}
	oxr_heat_free(ab[0]);
	oxr_heat_free(ab[1]);
	return rc;
}

static int load_files(const heat_args *ha, const oxp_dag *d, oxr_heat **h)
{
	oxr_error err;
	memset(&err, 0, sizeof(err));
	if (ha->nfiles == 1 && strcmp(ha->files[0], "cost") == 0 && access("cost", F_OK) != 0) {
		if (oxr_heat_cost(d, h, &err) != OXR_OK) {
			fprintf(stderr, "onnxviz: cost: %s: %s\n", oxr_code_name(err.code), err.message);
			return 1;
		}
		return 0;
	}
	oxr_heat_input in[OXR_HEAT_MAX_INPUTS];
	char *data[OXR_HEAT_MAX_INPUTS] = {0};
	int rc = 0;
	for (uint32_t i = 0; i < ha->nfiles && rc == 0; i++) {
		size_t len = 0;
		data[i] = read_bounded(ha->files[i], OXR_HEAT_MAX_BYTES, &len);
		if (data[i] == NULL)
			rc = 1;
		in[i].data = data[i];
		in[i].len = len;
		in[i].name = ha->files[i];
	}
	oxp_model *om = NULL;
	oxp_dag *od = NULL;
	if (rc == 0 && ha->optimized != NULL) {
		oxp_error e;
		oxp_dag_options opt = {.infer_shapes = false};
		if (oxp_model_open_ex(&om, ha->optimized, NULL, OXP_OPEN_LOW_RSS, &e) != OXP_OK ||
		    oxp_dag_build(&od, om, &opt, &e) != OXP_OK) {
			char buf[700];
			fprintf(stderr, "onnxviz: %s: %s: %s\n", ha->optimized, oxp_code_name(e.code),
			        oxp_error_format(&e, buf, sizeof(buf)));
			rc = 1;
		}
	}
	if (rc == 0 && oxr_heat_build(in, ha->nfiles, d, od, h, &err) != OXR_OK) {
		fprintf(stderr, "onnxviz: %s: %s\n", oxr_code_name(err.code), err.message);
		rc = 1;
	}
	oxp_dag_free(od);
	oxp_model_free(om);
	for (uint32_t i = 0; i < ha->nfiles; i++)
		free(data[i]);
	return rc;
}

/* The metric asked for (or the primary): -1 after a message. */
static int pick_metric(const oxr_heat *h, const char *name)
{
	if (name == NULL)
		return (int)h->primary;
	int k = oxr_heat_metric(h, name);
	if (k < 0) {
		fprintf(stderr, "onnxviz: no metric '%s' in the overlay; it has:", name);
		for (uint32_t i = 0; i < h->nmetrics; i++)
			fprintf(stderr, " %s", h->metrics[i]);
		fputc('\n', stderr);
	}
	return k;
}

/* Takes argv[*i] when it is one of the overlay options: 1 taken, 0 not one, -1 usage
 * error (message printed). */
static int heat_option(heat_args *ha, int argc, char **argv, int *i, bool render)
{
	static const char *const keys[] = {"--overlay", "--metric", "--scale", "--optimized"};
	const char *a = argv[*i];
	if (!strcmp(a, "--compare")) {
		ha->compare = true;
		return 1;
	}
	for (int k = 0; k < 4; k++) {
		size_t kl = strlen(keys[k]);
		if (strncmp(a, keys[k], kl) != 0 || (a[kl] != '\0' && a[kl] != '='))
			continue;
		if (k == 0 && !render)
			return 0;
		const char *val = a[kl] == '=' ? a + kl + 1 : NULL;
		if (val == NULL) {
			if (*i + 1 >= argc) {
				fprintf(stderr, "onnxviz: %s needs a value\n", keys[k]);
				return -1;
			}
			val = argv[++*i];
		}
		if (k == 0) {
			if (ha->nfiles >= OXR_HEAT_MAX_INPUTS) {
				fprintf(stderr, "onnxviz: at most %d overlay files\n", OXR_HEAT_MAX_INPUTS);
				return -1;
			}
			ha->files[ha->nfiles++] = val;
		} else if (k == 1) {
			ha->metric = val;
		} else if (k == 2) {
			uint8_t s;
			if (!oxr_heat_scale_parse(val, &s)) {
				fprintf(stderr, "onnxviz: --scale: linear, log or thresholds, not '%s'\n", val);
				return -1;
			}
			ha->scale = val;
		} else {
			ha->optimized = val;
		}
		return 1;
	}
	return 0;
}

int oxs_cli_render_heat_option(void *state, int argc, char **argv, int *i)
{
	return heat_option(state, argc, argv, i, true);
}

void *oxs_cli_render_heat_new(void)
{
	return calloc(1, sizeof(heat_args));
}

/* The caption under a drawing: source, coverage, unmatched share. */
static const char *caption(const oxr_heat *h, const char *name, char *buf, size_t size)
{
	const char *base = strrchr(name, '/') ? strrchr(name, '/') + 1 : name;
	double cov = h->total != 0 ? h->attributed / h->total : 1;
	int n = snprintf(buf, size, "%s · %s", base, h->format);
	if (h->runs > 1 && n > 0 && (size_t)n < size)
		n += snprintf(buf + n, size - (size_t)n, " · %u runs", h->runs);
	if (n > 0 && (size_t)n < size)
		snprintf(buf + n, size - (size_t)n, " · coverage %.2f%% · %u unmatched",
		         floor(10000 * cov) / 100, h->nunmatched); /* never 100% with unmatched */
	return buf;
}

int oxs_cli_render_heat(void *state, const oxp_model *m, const oxp_dag *d,
                        const oxr_options *opt, oxr_format fmt, oxr_buf *out, oxr_error *err)
{
	heat_args *ha = state;
	(void)m;
	if (ha->nfiles == 0) {
		if (ha->metric || ha->scale || ha->optimized) {
			fprintf(stderr, "onnxviz render: --metric, --scale and --optimized go with "
			                "--overlay\n");
			return 2;
		}
		return -1; /* no overlay: the plain drawing */
	}
	oxr_heat *h = NULL;
	int lr = load_heat(ha, d, &h);
	if (lr != 0)
		return lr;
	int k = pick_metric(h, ha->compare ? NULL : ha->metric);
	if (k < 0) {
		oxr_heat_free(h);
		return 2;
	}
	oxr_overlay ov;
	memset(&ov, 0, sizeof(ov));
	ov.heat = h;
	ov.heat_metric = (uint32_t)k;
	if (ha->scale != NULL)
		oxr_heat_scale_parse(ha->scale, &ov.heat_scale);
	char cap[400];
	if (h->side != NULL) {
		const char *a = strrchr(ha->files[0], '/') ? strrchr(ha->files[0], '/') + 1 : ha->files[0];
		const char *b = strrchr(ha->files[1], '/') ? strrchr(ha->files[1], '/') + 1 : ha->files[1];
		snprintf(cap, sizeof(cap), "A %s (%s) · B %s (%s) · only in A %u nodes, only in B %u",
		         a, h->compare_sources[0], b, h->compare_sources[1], h->compare_only[0],
		         h->compare_only[1]);
		ov.legend = cap;
	} else {
		ov.legend = caption(h, ha->files[0], cap, sizeof(cap));
	}
	oxr_code rc = oxr_render_overlay(m, d, opt, &ov, fmt, out, err);
	oxr_heat_free(h);
	return rc == OXR_OK ? 0 : 3;
}

/* " (name)", control characters as '?', at most 120 bytes */
static void print_name(const oxp_dnode *dn)
{
	if (dn->proto->name.len == 0)
		return;
	printf(" (");
	for (size_t c = 0; c < dn->proto->name.len && c < 120; c++) {
		unsigned char ch = (unsigned char)dn->proto->name.p[c];
		putchar(ch >= 0x20 && ch != 0x7f ? ch : '?');
	}
	printf(")");
}

static void print_value(const oxr_heat *h, uint32_t k, double v)
{
	char buf[48];
	oxr_heat_format(h, k, v, buf, sizeof(buf));
	printf("%12s", buf);
}

int oxs_cli_overlay(int argc, char **argv)
{
	heat_args ha;
	memset(&ha, 0, sizeof(ha));
	const char *path = NULL;
	bool json = false;
	unsigned top = 30;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		int t = heat_option(&ha, argc, argv, &i, false);
		if (t < 0)
			return 2;
		if (t > 0)
			continue;
		if (!strcmp(a, "--json")) {
			json = true;
		} else if (!strncmp(a, "--top=", 6)) {
			char *end;
			unsigned long n = strtoul(a + 6, &end, 10);
			if (*end != '\0' || n > 100000) {
				fprintf(stderr, "onnxviz overlay: --top=N, N up to 100000 (0: all)\n");
				return 2;
			}
			top = (unsigned)n;
		} else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			printf("usage: onnxviz overlay MODEL FILE [FILE...] [--optimized OPT.onnx] "
			       "[--metric M] [--top=N] [--json]\n"
			       "       onnxviz overlay MODEL A B --compare [--metric M] [--top=N] [--json]\n"
			       "  FILE: an ONNX Runtime or TensorRT profile (several ORT ones: more runs),\n"
			       "        TensorRT layer info, OpenVINO counters, Model Explorer node data,\n"
			       "        a Netron attachment, CSV node,metric[,metric...]; or 'cost'\n"
			       "  prints the nodes by the metric, the unmatched names and the coverage;\n"
			       "  --compare: per node B - A and B / A of the metric, largest changes first\n");
			return 0;
		} else if (a[0] == '-' && a[1] != '\0') {
			fprintf(stderr, "onnxviz overlay: unknown option %s\n", a);
			return 2;
		} else if (path == NULL) {
			path = a;
		} else if (ha.nfiles < OXR_HEAT_MAX_INPUTS) {
			ha.files[ha.nfiles++] = a;
		} else {
			fprintf(stderr, "onnxviz overlay: at most %d files\n", OXR_HEAT_MAX_INPUTS);
			return 2;
		}
	}
	if (path == NULL || ha.nfiles == 0) {
		fprintf(stderr, "usage: onnxviz overlay MODEL FILE [FILE...] [--json]\n");
		return 2;
	}
	oxp_model *m;
	oxp_dag *d;
	oxp_error e;
	if (oxp_model_open_ex(&m, path, NULL, OXP_OPEN_LOW_RSS, &e) != OXP_OK) {
		char buf[700];
		fprintf(stderr, "onnxviz: %s: %s: %s\n", path, oxp_code_name(e.code),
		        oxp_error_format(&e, buf, sizeof(buf)));
		return 1;
	}
	oxp_dag_options dopt = {.infer_shapes = true};
	if (oxp_dag_build(&d, m, &dopt, &e) != OXP_OK) {
		char buf[700];
		fprintf(stderr, "onnxviz: %s: %s: %s\n", path, oxp_code_name(e.code),
		        oxp_error_format(&e, buf, sizeof(buf)));
		oxp_model_free(m);
		return 1;
	}
	oxr_heat *h = NULL;
	int rc = load_heat(&ha, d, &h);
	int k = rc == 0 ? pick_metric(h, ha.compare ? NULL : ha.metric) : -1;
	if (rc == 0 && k < 0)
		rc = 2;
	if (rc == 0) {
		oxr_buf out;
		oxr_error err;
		oxr_buf_init(&out, 0);
		if (oxr_heat_table_json(h, d, (uint32_t)k, json ? 0 : top, &out, &err) != OXR_OK) {
			fprintf(stderr, "onnxviz: %s\n", err.message);
			rc = 1;
		} else if (json) {
			fwrite(out.data, 1, out.len, stdout);
			fputc('\n', stdout);
		} else {
			/* the text table, from the same figures */
			const oxp_dag_view *dv = oxp_dag_get(d);
			typedef struct {
				uint32_t n;
				double v;
			} rk;
			rk *r = malloc((size_t)(h->nnodes ? h->nnodes : 1) * sizeof(rk));
			uint32_t n = 0;
			double msum = 0;
			for (uint32_t i = 0; r != NULL && i < h->nnodes; i++) {
				double v = h->values[(size_t)i * h->nmetrics + (uint32_t)k];
				if (isfinite(v)) {
					r[n].n = i;
					r[n].v = v;
					n++;
					msum += v;
				}
			}
			for (uint32_t i = 1; r != NULL && i < n; i++) /* insertion sort, largest first */
				for (uint32_t j = i; j > 0 && r[j - 1].v < r[j].v; j--) {
					rk t = r[j];
					r[j] = r[j - 1];
					r[j - 1] = t;
				}
			char tot[48];
			oxr_heat_format(h, h->primary, h->total, tot, sizeof(tot));
			if (h->side != NULL) { /* --compare: the largest changes first, either way */
				char sa[48], sb[48];
				oxr_heat_format(h, 2, h->compare_sums[0], sa, sizeof(sa));
				oxr_heat_format(h, 3, h->compare_sums[1], sb, sizeof(sb));
				printf("A %s (%s) -> B %s (%s): %s %s -> %s, B - A %s%s; "
				       "only in A %u nodes, only in B %u\n",
				       ha.files[0], h->compare_sources[0], ha.files[1], h->compare_sources[1],
				       h->compare_metric, sa, sb, h->total > 0 ? "+" : "", tot,
				       h->compare_only[0], h->compare_only[1]);
				for (uint32_t i = 1; r != NULL && i < n; i++)
					for (uint32_t j = i; j > 0 && fabs(r[j - 1].v) < fabs(r[j].v); j--) {
						rk t = r[j];
						r[j] = r[j - 1];
						r[j - 1] = t;
					}
				printf("%12s %8s %12s %12s  %-22s %s\n", "B - A", "B / A", "A", "B", "op", "node");
				for (uint32_t i = 0; i < n && (top == 0 || i < top); i++) {
					const double *v = h->values + (size_t)r[i].n * h->nmetrics;
					const oxp_dnode *dn = &dv->nodes[r[i].n];
					print_value(h, 0, v[0]);
					if (isfinite(v[1]))
						printf(" %7.2fx", v[1]);
					else
						printf(" %8s", h->side[r[i].n] == 1 ? "only A" : "only B");
					print_value(h, 2, v[2]);
					print_value(h, 3, v[3]);
					printf("  %-22.*s %s",
					       (int)(dn->proto->op_type.len > 22 ? 22 : dn->proto->op_type.len),
					       dn->proto->op_type.p, dn->id);
					print_name(dn);
					putchar('\n');
				}
				if (top != 0 && n > top)
					printf("... %u more nodes (--top=0 lists all)\n", n - top);
				free(r);
				goto printed;
			}
			printf("%s: %s", ha.files[0], h->format);
			if (h->runs > 1)
				printf(", %u runs", h->runs);
			printf(", %u names, %u matched, %u unmatched; coverage %.2f%% of %s\n", h->nentries,
			       h->nmatched, h->nunmatched,
			       floor(10000 * (h->total != 0 ? h->attributed / h->total : 1)) / 100, tot);
			for (uint32_t i = 0; i < h->nproviders; i++) {
				oxr_heat_format(h, h->primary, h->providers[i].total, tot, sizeof(tot));
				printf("provider %s: %s (%.1f%%)\n", h->providers[i].name, tot,
				       h->total > 0 ? 100 * h->providers[i].total / h->total : 0);
			}
			printf("%12s %7s  %-22s %s\n", h->metrics[k], "share", "op", "node");
			for (uint32_t i = 0; i < n && (top == 0 || i < top); i++) {
				const oxp_dnode *dn = &dv->nodes[r[i].n];
				print_value(h, (uint32_t)k, r[i].v);
				printf(" %6.2f%%  %-22.*s %s", msum > 0 ? 100 * r[i].v / msum : 0,
				       (int)(dn->proto->op_type.len > 22 ? 22 : dn->proto->op_type.len),
				       dn->proto->op_type.p, dn->id);
				print_name(dn);
				if (h->fused[r[i].n] != OXP_NONE)
					printf(" [fused with %s, %u nodes]", dv->nodes[h->fused[r[i].n]].id,
					       h->fused_size[r[i].n]);
				putchar('\n');
			}
			if (top != 0 && n > top)
				printf("... %u more nodes (--top=0 lists all)\n", n - top);
			if (h->nunmatched > 0) {
				printf("unmatched (%u):\n", h->nunmatched);
				uint32_t nl = h->nunmatched_listed;
				for (uint32_t i = 0; i < nl && (top == 0 || i < top); i++) {
					print_value(h, h->primary, h->unmatched[i].value);
					printf(" %6.2f%%  %-22s %s\n", 100 * h->unmatched[i].share,
					       h->unmatched[i].op ? h->unmatched[i].op : "-",
					       h->unmatched[i].name);
				}
			}
			free(r);
		}
	printed:
		oxr_buf_free(&out);
	}
	oxr_heat_free(h);
	oxp_dag_free(d);
	oxp_model_free(m);
	return rc;
}
