/*
 * tensor_dump — print the decoded values of lone TensorProto files (.pb) as JSON, one
 * line per file, for tests/diff/tensors.py to compare with onnx.numpy_helper.to_array.
 *
 *   tensor_dump FILE...
 *
 * Each line: {"file":..., "ok":true, "dtype":N, "class":"float", "dims":[...],
 *             "bits":["3f800000",...], "values":[...]}
 * or         {"file":..., "ok":false, "code":"bad_storage", "message":"..."}.
 * "stats" (not for strings) are oxp_tensor_stats_get's counts, min, max, mean and std.
 * "bits" are each element's stored bits in its own format (two per complex element);
 * "values" are exact: integers as JSON integers, floats as %.17g or "nan"/"inf"/"-inf",
 * complex as [re, im], bools as true/false, strings as hex of their bytes.  External data
 * is opened with oxp_external_open() beneath the .pb file's directory.
 * Exit status: 0 when every file was read (decoding errors are reported in the JSON), 1 on
 * usage or I/O errors.
 */
#include "parser/oxp.h"

#include <fcntl.h>
#include <inttypes.h>
#include <libgen.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CHUNK 4096

static void json_str(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			printf("\\%c", c);
		else if (c < 0x20 || c >= 0x7f)
			printf("\\u%04x", c);
		else
			putchar(c);
	}
	putchar('"');
}

static void json_f64(double d)
{
	if (isnan(d))
		printf("\"nan\"");
	else if (isinf(d))
		printf(d > 0 ? "\"inf\"" : "\"-inf\"");
	else
		printf("%.17g", d);
}

static void fail_line(const char *file, const oxp_error *err)
{
	printf("{\"file\":");
	json_str(file);
	printf(",\"ok\":false,\"code\":\"%s\",\"message\":", oxp_code_name(err->code));
	json_str(err->message);
	printf("}\n");
}

/* Print every element of t (bits, then values), CHUNK at a time.  Returns 0 or the code
 * of the first decoding error (err filled). */
static oxp_code dump_values(const oxp_tensor *t, const uint8_t *bytes, size_t nbytes,
                            uint64_t count, oxp_error *err)
{
	static uint64_t bits[2 * CHUNK];
	static oxp_scalar vals[CHUNK];
	oxp_value_class cls = oxp_dtype_class(t->data_type);
	unsigned parts = cls == OXP_VC_COMPLEX ? 2 : 1;
	unsigned hexw = (oxp_dtype_bits(t->data_type) / parts + 3) / 4;
	/* First pass: bits (strings have none). */
	printf(",\"bits\":[");
	for (uint64_t off = 0; cls != OXP_VC_STRING && off < count; off += CHUNK) {
		size_t n = count - off < CHUNK ? (size_t)(count - off) : CHUNK;
		oxp_code rc = oxp_tensor_read_bits(t, bytes, nbytes, off, n, bits, err);
		if (rc != OXP_OK)
			return rc;
		for (size_t i = 0; i < n * parts; i++)
			printf("%s\"%0*" PRIx64 "\"", off + i ? "," : "", (int)hexw, bits[i]);
	}
	printf("],\"values\":[");
	for (uint64_t off = 0; off < count; off += CHUNK) {
		size_t n = count - off < CHUNK ? (size_t)(count - off) : CHUNK;
		oxp_code rc = oxp_tensor_read(t, bytes, nbytes, off, n, vals, err);
		if (rc != OXP_OK)
			return rc;
		for (size_t i = 0; i < n; i++) {
			if (off + i)
				putchar(',');
			const oxp_scalar *v = &vals[i];
			switch (v->cls) {
			case OXP_VC_FLOAT:
				json_f64(v->v.f);
				break;
			case OXP_VC_INT:
				printf("%" PRId64, v->v.i);
				break;
			case OXP_VC_UINT:
				printf("%" PRIu64, v->v.u);
				break;
			case OXP_VC_BOOL:
				printf(v->v.b ? "true" : "false");
				break;
			case OXP_VC_COMPLEX:
				putchar('[');
				json_f64(v->v.c[0]);
				putchar(',');
				json_f64(v->v.c[1]);
				putchar(']');
				break;
			case OXP_VC_STRING:
				putchar('"');
				for (size_t k = 0; k < v->v.s.len; k++)
					printf("%02x", (unsigned char)v->v.s.p[k]);
				putchar('"');
				break;
			default:
				printf("null");
			}
		}
	}
	printf("]");
	return OXP_OK;
}

static int dump_file(const char *file)
{
	FILE *f = fopen(file, "rb");
	if (f == NULL) {
		perror(file);
		return 1;
	}
	fseek(f, 0, SEEK_END);
	long size = ftell(f);
	fseek(f, 0, SEEK_SET);
	uint8_t *buf = malloc(size > 0 ? (size_t)size : 1);
	if (buf == NULL || size < 0 || fread(buf, 1, (size_t)size, f) != (size_t)size) {
		fclose(f);
		free(buf);
		fprintf(stderr, "%s: read failed\n", file);
		return 1;
	}
	fclose(f);

	oxp_model *m = NULL;
	oxp_error err;
	oxp_code rc = oxp_tensor_file_parse(&m, buf, (size_t)size, NULL, &err);
	if (rc != OXP_OK) {
		fail_line(file, &err);
		free(buf);
		return 0;
	}
	const oxp_tensor *t = oxp_model_tensor_get(m);
	oxp_external_file xf = {-1, 0, 0, 0};
	oxp_external_region region = {NULL, 0, NULL, 0};
	if (t->data_location == 1) {
		char *copy = strdup(file);
		int dirfd = copy ? open(dirname(copy), O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
		free(copy);
		rc = dirfd < 0 ? OXP_E_IO : oxp_external_open(&xf, dirfd, t, 0, NULL, &err);
		if (dirfd >= 0)
			close(dirfd);
		if (rc == OXP_OK)
			rc = oxp_external_map(&region, &xf, &err);
	}
	oxp_tensor_size sz;
	if (rc == OXP_OK)
		rc = oxp_tensor_size_get(t, &sz, &err);
	if (rc == OXP_OK) {
		/* The line is built on stdout as we go; a decoding error mid-way is reported on
		 * a line of its own after the broken one (the script treats both as failure). */
		printf("{\"file\":");
		json_str(file);
		printf(",\"ok\":true,\"dtype\":%" PRId32 ",\"class\":\"%s\",\"dims\":[", t->data_type,
		       oxp_value_class_name(oxp_dtype_class(t->data_type)));
		for (size_t i = 0; i < t->ndims; i++)
			printf("%s%" PRId64, i ? "," : "", t->dims[i]);
		printf("]");
		rc = dump_values(t, region.bytes, region.nbytes, sz.count, &err);
		oxp_tensor_stats st;
		if (rc == OXP_OK && oxp_dtype_class(t->data_type) != OXP_VC_STRING)
			rc = oxp_tensor_stats_get(t, region.bytes, region.nbytes, NULL, &st, &err);
		if (rc == OXP_OK && oxp_dtype_class(t->data_type) != OXP_VC_STRING) {
			printf(",\"stats\":{\"finite\":%" PRIu64 ",\"nan\":%" PRIu64
			       ",\"pos_inf\":%" PRIu64 ",\"neg_inf\":%" PRIu64 ",\"zeros\":%" PRIu64,
			       st.finite, st.nan, st.pos_inf, st.neg_inf, st.zeros);
			static const char *const names[4] = {"min", "max", "mean", "std"};
			const double v[4] = {st.min, st.max, st.mean, st.std};
			for (int k = 0; k < 4; k++) {
				printf(",\"%s\":", names[k]);
				json_f64(v[k]);
			}
			printf("}");
		}
		printf("}\n");
	}
	if (rc != OXP_OK)
		fail_line(file, &err);
	oxp_external_unmap(&region);
	oxp_external_close(&xf);
	oxp_model_free(m);
	free(buf);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: tensor_dump FILE.pb...\n");
		return 1;
	}
	int status = 0;
	for (int i = 1; i < argc; i++)
		status |= dump_file(argv[i]);
	return status;
}
