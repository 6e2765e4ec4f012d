/*
 * heat_csv.c — CSV node figures (an overlay input, docs/overlays.md).
 */
#include "render/heat_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------------------------------
 * CSV: a header `node,metric[,metric...]`, then one line per node; fields may be quoted
 * ("a,b" and "" for a quote); an empty field is no value.
 */
typedef struct field {
	char *p;
	size_t len;
} field;

/* Splits line [s, e) into fields (quotes undone in place).  Returns the count, or -1 for
 * an unterminated quote, -2 for more than max fields. */
static int csv_fields(char *s, char *e, field *f, int max)
{
	int n = 0;
	while (true) {
		if (n == max)
			return -2;
		char *out = s, *start = s;
		if (s < e && *s == '"') {
			s++;
			while (true) {
				if (s >= e)
					return -1;
				if (*s == '"') {
					if (s + 1 < e && s[1] == '"') {
						*out++ = '"';
						s += 2;
						continue;
					}
					s++;
					break;
				}
				*out++ = *s++;
			}
			f[n].p = start;
			f[n].len = (size_t)(out - start);
		} else {
			while (s < e && *s != ',')
				s++;
			f[n].p = start;
			f[n].len = (size_t)(s - start);
		}
		n++;
		if (s >= e)
			return n;
		if (*s != ',')
			return -1;
		s++;
	}
}

static void trim(field *f)
{
	while (f->len > 0 && (f->p[0] == ' ' || f->p[0] == '\t')) {
		f->p++;
		f->len--;
	}
	while (f->len > 0 && (f->p[f->len - 1] == ' ' || f->p[f->len - 1] == '\t'))
		f->len--;
}

static oxr_code parse_csv(heat_parse *p, const char *data, size_t len, size_t start,
                          const json_t *root)
{
	(void)start; /* a BOM is skipped below, the white space is the first line's */
	(void)root;
	char *buf = malloc(len + 1);
	if (buf == NULL)
		return oxr__heat_nomem(p);
	memcpy(buf, data, len);
	buf[len] = '\0';
	oxr_code rc = OXR_OK;
	field f[OXR_HEAT_MAX_METRICS + 1];
	int cols = 0, midx[OXR_HEAT_MAX_METRICS];
	size_t line = 0;
	char *s = buf, *end = buf + len;
	if (len >= 3 && memcmp(s, "\xef\xbb\xbf", 3) == 0)
		s += 3;
	while (s < end) {
		line++;
		char *e = memchr(s, '\n', (size_t)(end - s));
		if (e == NULL)
			e = end;
		char *next = e < end ? e + 1 : end;
		if (e > s && e[-1] == '\r')
			e--;
		if ((size_t)(e - s) > 65536) {
			rc = oxr__heat_bad(p, "line %zu: longer than 65536 bytes", line);
			break;
		}
		if (e == s) { /* blank line */
			s = next;
			continue;
		}
		if (memchr(s, '\0', (size_t)(e - s)) != NULL) {
			rc = oxr__heat_bad(p, "line %zu: a NUL byte", line);
			break;
		}
		int n = csv_fields(s, e, f, OXR_HEAT_MAX_METRICS + 1);
		if (n == -1) {
			rc = oxr__heat_bad(p, "line %zu: an unterminated quote or text after a quoted field", line);
			break;
		}
		if (n == -2) {
			rc = oxr__heat_bad(p, "line %zu: more than %d metrics", line, OXR_HEAT_MAX_METRICS);
			break;
		}
		if (cols == 0) { /* the header */
			if (n < 2) {
				rc = oxr__heat_bad(p, "line %zu: the header is node,metric[,metric...]", line);
				break;
			}
			cols = n;
			for (int c = 1; c < n && rc == OXR_OK; c++) {
				trim(&f[c]);
				for (int c2 = 1; c2 < c; c2++)
					if (f[c2].len == f[c].len && memcmp(f[c2].p, f[c].p, f[c].len) == 0)
						rc = oxr__heat_bad(p, "line %zu: metric \"%.*s\" twice in the header", line,
						         (int)(f[c].len > 60 ? 60 : f[c].len), f[c].p);
				if (rc == OXR_OK && (midx[c - 1] = oxr__heat_metric_of(p, f[c].p, f[c].len)) < 0)
					rc = p->err->code;
			}
		} else {
			if (n != cols) {
				rc = oxr__heat_bad(p, "line %zu: %d fields, the header has %d", line, n, cols);
				break;
			}
			trim(&f[0]);
			bool fresh;
			uint32_t ei = oxr__heat_entry_of(p, f[0].p, f[0].len, KEY_ANY, &fresh);
			if (ei == OXP_NONE) {
				char msg[sizeof(p->err->message)];
				snprintf(msg, sizeof(msg), "%s", p->err->message);
				rc = oxr__fail(p->err, p->err->code, "line %zu: %s", line, msg);
				break;
			}
			if (!fresh) {
				rc = oxr__heat_bad(p, "line %zu: node \"%.60s\" given twice", line, p->e[ei].name);
				break;
			}
			for (int c = 1; c < n && rc == OXR_OK; c++) {
				trim(&f[c]);
				if (f[c].len == 0)
					continue;
				char num[64];
				if (f[c].len >= sizeof(num)) {
					rc = oxr__heat_bad(p, "line %zu, column %d: not a number", line, c + 1);
					break;
				}
				memcpy(num, f[c].p, f[c].len);
				num[f[c].len] = '\0';
				char *ne;
				double d = strtod(num, &ne);
				if (ne == num || *ne != '\0')
					rc = oxr__heat_bad(p, "line %zu, column %d: \"%s\" is not a number", line, c + 1, num);
				else if (!oxr__heat_number_ok(d))
					rc = oxr__heat_bad(p, "line %zu, column %d: %s is not a finite number up to 1e300",
					         line, c + 1, num);
				else if (!oxr__heat_entry_set(p, ei, midx[c - 1], d))
					rc = p->err->code;
			}
		}
		s = next;
	}
	if (rc == OXR_OK && cols == 0)
		rc = oxr__heat_bad(p, "no header line (node,metric[,metric...])");
	free(buf);
	return rc;
}

/* CSV is what is neither a JSON array nor an object */
const oxr__heat_reader oxr__heat_csv = {"csv", "a CSV file", HEAT_TEXT, false, NULL, parse_csv};
