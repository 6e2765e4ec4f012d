/*
 * test_s3.c — the S3 client's pure parts: store URLs, the configuration from the
 * environment, percent-encoding and canonical query strings (as SigV4 signs them), the
 * XML the store reads, ISO 8601 times, and model meta's JSON.  The requests themselves are
 * tested against a real object store by the s3 suite (tests/s3).
 */
#include "service/internal.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static void test_url_parse(void **state)
{
	(void)state;
	char b[64], p[600];
	assert_true(oxs_s3_url_parse("s3://models/team/prod", b, sizeof(b), p, sizeof(p)));
	assert_string_equal(b, "models");
	assert_string_equal(p, "team/prod");
	assert_true(oxs_s3_url_parse("s3://my.bucket-1", b, sizeof(b), p, sizeof(p)));
	assert_string_equal(b, "my.bucket-1");
	assert_string_equal(p, "");
	assert_true(oxs_s3_url_parse("s3://abc/x/", b, sizeof(b), p, sizeof(p)));
	assert_string_equal(p, "x"); /* trailing slashes go */
	static const char *const bad[] = {
	    "models",              /* no scheme */
	    "http://b/x",          /* another scheme */
	    "s3://",               /* no bucket */
	    "s3://ab",             /* too short */
	    "s3://Upper/x",        /* upper case */
	    "s3://b_u/x",          /* underscore */
	    "s3://abc//x",         /* an empty segment */
	    "s3://abc/a//b",       /* ... inside */
	    "s3://abc/a\nb",       /* a control character */
	    "s3://aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", /* 64 */
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_false(oxs_s3_url_parse(bad[i], b, sizeof(b), p, sizeof(p)));
}

static void test_config_env(void **state)
{
	(void)state;
	oxs_s3_config c;
	char err[256];
	char *minimal[] = {"AWS_ACCESS_KEY_ID=AK", "AWS_SECRET_ACCESS_KEY=SK", NULL};
	assert_true(oxs_s3_config_env(&c, minimal, 0, err, sizeof(err)));
	assert_string_equal(c.region, "us-east-1");
	assert_string_equal(c.endpoint, "");
	assert_false(c.path_style);
	assert_int_equal(c.timeout, 10);
	char *full[] = {"AWS_ACCESS_KEY_ID=AK",
	                "AWS_SECRET_ACCESS_KEY=SK",
	                "AWS_SESSION_TOKEN=TOK",
	                "AWS_DEFAULT_REGION=eu-west-3",
	                "AWS_ENDPOINT_URL=http://other:1",
	                "AWS_ENDPOINT_URL_S3=http://127.0.0.1:9000/",
	                NULL};
	assert_true(oxs_s3_config_env(&c, full, 3, err, sizeof(err)));
	assert_string_equal(c.region, "eu-west-3");
	assert_string_equal(c.endpoint, "http://127.0.0.1:9000"); /* _S3 wins, no '/' */
	assert_true(c.path_style);
	assert_string_equal(c.token, "TOK");
	assert_int_equal(c.timeout, 3);
	char *region[] = {"AWS_ACCESS_KEY_ID=AK", "AWS_SECRET_ACCESS_KEY=SK", "AWS_REGION=default",
	                  "AWS_DEFAULT_REGION=x", NULL};
	assert_true(oxs_s3_config_env(&c, region, 0, err, sizeof(err)));
	assert_string_equal(c.region, "default");
	/* failures never repeat a secret */
	char *nokey[] = {"AWS_SECRET_ACCESS_KEY=hunter2", NULL};
	assert_false(oxs_s3_config_env(&c, nokey, 0, err, sizeof(err)));
	assert_null(strstr(err, "hunter2"));
	char *ctl[] = {"AWS_ACCESS_KEY_ID=AK", "AWS_SECRET_ACCESS_KEY=hun\rter2", NULL};
	assert_false(oxs_s3_config_env(&c, ctl, 0, err, sizeof(err)));
	assert_null(strstr(err, "hun"));
	char *colon[] = {"AWS_ACCESS_KEY_ID=A:K", "AWS_SECRET_ACCESS_KEY=S", NULL};
	assert_false(oxs_s3_config_env(&c, colon, 0, err, sizeof(err)));
	char *badep[] = {"AWS_ACCESS_KEY_ID=AK", "AWS_SECRET_ACCESS_KEY=SK",
	                 "AWS_ENDPOINT_URL=ftp://x", NULL};
	assert_false(oxs_s3_config_env(&c, badep, 0, err, sizeof(err)));
	char *badregion[] = {"AWS_ACCESS_KEY_ID=AK", "AWS_SECRET_ACCESS_KEY=SK",
	                     "AWS_REGION=us east", NULL};
	assert_false(oxs_s3_config_env(&c, badregion, 0, err, sizeof(err)));
}

static void test_encode_query(void **state)
{
	(void)state;
	oxr_buf b;
	oxr_buf_init(&b, 0);
	assert_true(oxs_s3_encode(&b, "data/a b/ü~x.bin", true));
	assert_string_equal(b.data, "data/a%20b/%C3%BC~x.bin");
	b.len = 0;
	assert_true(oxs_s3_encode(&b, "a/b+c=d&e", false));
	assert_string_equal(b.data, "a%2Fb%2Bc%3Dd%26e");
	oxr_buf_free(&b);
	/* canonical: sorted by key, keys and values encoded, "key=" for no value */
	char q[256];
	const char *kv[] = {"prefix", "p/models/", "list-type", "2", "uploads", NULL,
	                    "continuation-token", "a+b=="};
	assert_true(oxs_s3_query(q, sizeof(q), kv, 4));
	assert_string_equal(q, "continuation-token=a%2Bb%3D%3D&list-type=2&prefix=p%2Fmodels%2F&"
	                       "uploads=");
	assert_false(oxs_s3_query(q, 10, kv, 4)); /* does not fit */
	assert_true(oxs_s3_query(q, sizeof(q), kv, 0));
	assert_string_equal(q, "");
}

static void test_xml(void **state)
{
	(void)state;
	const char *xml =
	    "<?xml version=\"1.0\"?><ListBucketResult><IsTruncated>true</IsTruncated>"
	    "<Contents><Key>p/models/a&amp;b&lt;&gt;&quot;&apos;.onnx</Key><Size>12</Size></Contents>"
	    "<Contents><Key>second</Key><Size>3</Size></Contents>"
	    "<NextContinuationToken>tok</NextContinuationToken></ListBucketResult>";
	const char *end = xml + strlen(xml), *p = xml, *a, *z;
	char v[64];
	int n = 0;
	while (oxs_xml_element(&p, end, "Contents", &a, &z)) {
		const char *q = a;
		assert_true(oxs_xml_next(&q, z, "Key", v, sizeof(v)));
		assert_string_equal(v, n == 0 ? "p/models/a&b<>\"'.onnx" : "second");
		n++;
	}
	assert_int_equal(n, 2);
	p = xml;
	assert_true(oxs_xml_next(&p, end, "NextContinuationToken", v, sizeof(v)));
	assert_string_equal(v, "tok");
	p = xml;
	assert_false(oxs_xml_next(&p, end, "Missing", v, sizeof(v)));
	p = xml;
	assert_false(oxs_xml_next(&p, end, "NextContinuationToken", v, 3)); /* too long */
	const char *bad = "<Code>a&#65;</Code><Open>unclosed";
	p = bad;
	assert_false(oxs_xml_next(&p, bad + strlen(bad), "Code", v, sizeof(v)));
	p = bad;
	assert_false(oxs_xml_next(&p, bad + strlen(bad), "Open", v, sizeof(v)));
	/* bounded by end: nothing past it is read */
	p = xml;
	assert_false(oxs_xml_next(&p, xml + 60, "IsTruncated", v, sizeof(v)));
}

static void test_iso8601(void **state)
{
	(void)state;
	assert_int_equal(oxs_iso8601("1970-01-01T00:00:00.000Z"), 0);
	assert_int_equal(oxs_iso8601("2026-12-01T17:11:17.131Z"), 1796145077);
	assert_int_equal(oxs_iso8601("2024-02-29T23:59:59Z"), 1709251199);
	assert_int_equal(oxs_iso8601(""), -1);
	assert_int_equal(oxs_iso8601("yesterday"), -1);
	assert_int_equal(oxs_iso8601("2026-13-01T00:00:00Z"), -1);
}

static void test_part_for(void **state)
{
	(void)state;
	const uint64_t MiB = (uint64_t)1 << 20;
	assert_true(oxs_s3_part_for(100 * MiB, 16 * MiB) == 16 * MiB);
	/* exactly 10,000 parts still fit; one byte more needs larger parts */
	assert_true(oxs_s3_part_for(10000 * 5 * MiB, 5 * MiB) == 5 * MiB);
	assert_true(oxs_s3_part_for(10000 * 5 * MiB + 1, 5 * MiB) == 6 * MiB);
	uint64_t sizes[] = {10000 * 5 * MiB + 1, 123456789012ULL, (uint64_t)5 << 40};
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		uint64_t part = oxs_s3_part_for(sizes[i], 5 * MiB);
		assert_true(part % MiB == 0 && part >= 5 * MiB);
		assert_true((sizes[i] + part - 1) / part <= OXS_S3_MAX_PARTS);
	}
}

static void test_meta_json(void **state)
{
	(void)state;
	oxs_model_meta m, back;
	memset(&m, 0, sizeof(m));
	snprintf(m.name, sizeof(m.name), "resnet \"50\".onnx");
	snprintf(m.graph, sizeof(m.graph), "torch_jit");
	snprintf(m.producer, sizeof(m.producer), "pytorch");
	snprintf(m.kind, sizeof(m.kind), "model");
	m.nodes = 122;
	oxr_buf b;
	oxr_buf_init(&b, 0);
	assert_true(oxs_meta_json(&b, &m));
	assert_string_equal(b.data, "{\"name\":\"resnet \\\"50\\\".onnx\",\"graph\":\"torch_jit\","
	                            "\"producer\":\"pytorch\",\"kind\":\"model\",\"nodes\":122}");
	assert_true(oxs_meta_parse(b.data, b.len, &back));
	assert_memory_equal(&m, &back, sizeof(m));
	/* unknown values are null, and read back as unknown */
	memset(&m, 0, sizeof(m));
	m.nodes = -1;
	b.len = 0;
	assert_true(oxs_meta_json(&b, &m));
	assert_string_equal(b.data, "{\"name\":null,\"graph\":null,\"producer\":null,\"kind\":null,"
	                            "\"nodes\":null}");
	assert_true(oxs_meta_parse(b.data, b.len, &back));
	assert_int_equal(back.nodes, -1);
	assert_string_equal(back.name, "");
	oxr_buf_free(&b);
	/* refused: not an object, wrong types, too long, a NUL inside, duplicates */
	static const char *const bad[] = {"[]", "{\"name\":1}", "{\"nodes\":\"3\"}", "{\"nodes\":-2}",
	                                  "{\"name\":\"a\\u0000b\"}", "{\"name\":\"a\",\"name\":\"b\"}",
	                                  "{"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_false(oxs_meta_parse(bad[i], strlen(bad[i]), &back));
	char big[400];
	snprintf(big, sizeof(big), "{\"graph\":\"%0300d\"}", 0);
	assert_false(oxs_meta_parse(big, strlen(big), &back));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_url_parse),  cmocka_unit_test(test_config_env),
	    cmocka_unit_test(test_encode_query), cmocka_unit_test(test_xml),
	    cmocka_unit_test(test_iso8601),    cmocka_unit_test(test_meta_json),
	    cmocka_unit_test(test_part_for),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
