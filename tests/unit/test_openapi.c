/*
 * test_openapi.c — the OpenAPI document served at /openapi.json against the route table
 * the server actually answers, in both directions: every route and method is documented,
 * and every documented path and method is a route.  (tests/http/run.sh also asks the live
 * server for every documented path and method and expects neither 404 nor 405.)
 */
#include "service/oxs.h"

#include <jansson.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static json_t *doc;

static int load(void **state)
{
	(void)state;
	size_t len = 0;
	const char *text = oxs_openapi(&len);
	json_error_t e;
	doc = json_loadb(text, len, 0, &e);
	if (doc == NULL)
		fail_msg("openapi.json is not JSON: line %d: %s", e.line, e.text);
	return 0;
}

static int unload(void **state)
{
	(void)state;
	json_decref(doc);
	return 0;
}

/* The lower-case OpenAPI operation name of a method word, NULL for HEAD (implied by GET). */
static const char *op_name(const char *m, size_t n)
{
	if (n == 3 && !strncmp(m, "GET", 3))
		return "get";
	if (n == 4 && !strncmp(m, "POST", 4))
		return "post";
	if (n == 6 && !strncmp(m, "DELETE", 6))
		return "delete";
	if (n == 5 && !strncmp(m, "PATCH", 5))
		return "patch";
	return NULL;
}

static void test_document_shape(void **state)
{
	(void)state;
	assert_string_equal(json_string_value(json_object_get(doc, "openapi")), "3.0.3");
	assert_non_null(json_object_get(json_object_get(doc, "info"), "title"));
	json_t *schemes = json_object_get(json_object_get(doc, "components"), "securitySchemes");
	assert_non_null(json_object_get(schemes, "bearer"));
}

static void test_routes_are_documented(void **state)
{
	(void)state;
	json_t *paths = json_object_get(doc, "paths");
	assert_true(json_is_object(paths));
	const char *pattern, *methods;
	size_t nroutes = 0;
	for (size_t i = 0; oxs_route_get(i, &pattern, &methods); i++, nroutes++) {
		json_t *item = json_object_get(paths, pattern);
		if (item == NULL)
			fail_msg("route %s is not in openapi.json", pattern);
		bool has_get = false, has_head = false;
		for (const char *m = methods; *m;) {
			size_t n = strcspn(m, " ");
			if (n == 4 && !strncmp(m, "HEAD", 4))
				has_head = true;
			const char *op = op_name(m, n);
			if (op != NULL && !strcmp(op, "get"))
				has_get = true;
			if (op != NULL && json_object_get(item, op) == NULL)
				fail_msg("%.*s %s is not in openapi.json", (int)n, m, pattern);
			if (op != NULL && json_object_get(json_object_get(item, op), "responses") == NULL)
				fail_msg("%s %s has no responses", op, pattern);
			m += n;
			while (*m == ' ')
				m++;
		}
		assert_true(has_get == has_head); /* HEAD exactly where GET is */
	}
	assert_true(nroutes >= 18);
}

static void test_documented_are_routes(void **state)
{
	(void)state;
	json_t *paths = json_object_get(doc, "paths");
	const char *path;
	json_t *item;
	json_object_foreach(paths, path, item) {
		const char *pattern = NULL, *methods = NULL;
		size_t i = 0;
		while (oxs_route_get(i, &pattern, &methods) && strcmp(pattern, path) != 0)
			i++;
		if (!oxs_route_get(i, &pattern, &methods))
			fail_msg("documented path %s is not a route", path);
		const char *op;
		json_t *val;
		json_object_foreach(item, op, val) {
			static const char *const words[][2] = {
			    {"get", "GET"}, {"post", "POST"}, {"delete", "DELETE"}, {"put", "PUT"},
			    {"patch", "PATCH"}, {"head", "HEAD"}, {"options", "OPTIONS"}};
			for (size_t w = 0; w < sizeof(words) / sizeof(words[0]); w++) {
				if (strcmp(op, words[w][0]) != 0)
					continue;
				size_t wl = strlen(words[w][1]);
				const char *hit = strstr(methods, words[w][1]);
				bool whole = hit != NULL && (hit[wl] == '\0' || hit[wl] == ' ');
				if (!whole)
					fail_msg("documented %s %s is not answered (route has %s)", op, path,
					         methods);
			}
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_document_shape),
	    cmocka_unit_test(test_routes_are_documented),
	    cmocka_unit_test(test_documented_are_routes),
	};
	return cmocka_run_group_tests(tests, load, unload);
}
