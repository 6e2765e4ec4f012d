/*
 * buf.c — the bounded output buffer (with a JSON string writer), and render's error names.
 */
#include "render/oxr.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BUF_DEFAULT_MAX ((size_t)1 << 30)

void oxr_buf_init(oxr_buf *b, size_t max)
{
	memset(b, 0, sizeof(*b));
	b->max = max ? max : BUF_DEFAULT_MAX;
}

static bool grow(oxr_buf *b, size_t need)
{
	if (b->failed)
		return false;
	if (need > b->max || need == SIZE_MAX) {
		b->failed = true;
		return false;
	}
	if (need + 1 <= b->cap)
		return true;
	size_t cap = b->cap ? b->cap : 4096;
	while (cap < need + 1)
		cap = cap > SIZE_MAX / 2 ? need + 1 : cap * 2;
	char *p = realloc(b->data, cap);
	if (p == NULL) {
		b->failed = true;
		return false;
	}
	b->data = p;
	b->cap = cap;
	return true;
}

bool oxr_buf_append(oxr_buf *b, const void *data, size_t len)
{
	if (len > SIZE_MAX - b->len || !grow(b, b->len + len))
		return false;
	if (len)
		memcpy(b->data + b->len, data, len);
	b->len += len;
	b->data[b->len] = '\0';
	return true;
}

bool oxr_buf_printf(oxr_buf *b, const char *fmt, ...)
{
	char small[256];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(small, sizeof(small), fmt, ap);
	va_end(ap);
	if (n < 0) {
		b->failed = true;
		return false;
	}
	if ((size_t)n < sizeof(small))
		return oxr_buf_append(b, small, (size_t)n);
	if (!grow(b, b->len + (size_t)n))
		return false;
	va_start(ap, fmt);
	vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
	return true;
}

void oxr_buf_free(oxr_buf *b)
{
	free(b->data);
	size_t max = b->max;
	memset(b, 0, sizeof(*b));
	b->max = max;
}

char *oxr_buf_steal(oxr_buf *b, size_t *len)
{
	char *d = b->data;
	if (len != NULL)
		*len = b->len;
	size_t max = b->max;
	memset(b, 0, sizeof(*b));
	b->max = max;
	return d;
}

/* Length of the valid UTF-8 sequence at s[0..n) (1..4), or 0 when invalid (overlong
 * forms, surrogates and values above U+10FFFF are invalid). */
static size_t utf8_len(const unsigned char *s, size_t n)
{
	unsigned char c = s[0];
	size_t len;
	uint32_t cp;
	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf) {
		len = 2;
		cp = c & 0x1fu;
	} else if (c >= 0xe0 && c <= 0xef) {
		len = 3;
		cp = c & 0x0fu;
	} else if (c >= 0xf0 && c <= 0xf4) {
		len = 4;
		cp = c & 0x07u;
	} else {
		return 0;
	}
	if (n < len)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3fu);
	}
	if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return len;
}

bool oxr_json_string(oxr_buf *b, const char *s, size_t n)
{
	static const char digits[] = "0123456789abcdef";
	const unsigned char *u = (const unsigned char *)s;
	oxr_buf_append(b, "\"", 1);
	size_t run = 0; /* start of the pending run of bytes copied verbatim */
	size_t i = 0;
	while (i < n) {
		unsigned char c = u[i];
		const char *esc = NULL;
		char tmp[8];
		size_t step = 1;
		if (c == '"')
			esc = "\\\"";
		else if (c == '\\')
			esc = "\\\\";
		else if (c == '\n')
			esc = "\\n";
		else if (c == '\r')
			esc = "\\r";
		else if (c == '\t')
			esc = "\\t";
		else if (c < 0x20 || c == 0x7f) {
			memcpy(tmp, "\\u00", 4);
			tmp[4] = digits[c >> 4];
			tmp[5] = digits[c & 15];
			tmp[6] = '\0';
			esc = tmp;
		} else if (c >= 0x80) {
			step = utf8_len(u + i, n - i);
			if (step == 0) {
				esc = "\\ufffd";
				step = 1;
			}
		}
		if (esc != NULL) {
			oxr_buf_append(b, s + run, i - run);
			oxr_buf_append(b, esc, strlen(esc));
			run = i + step;
		}
		i += step;
	}
	oxr_buf_append(b, s + run, n - run);
	oxr_buf_append(b, "\"", 1);
	return !b->failed;
}

const char *oxr_code_name(oxr_code code)
{
	static const char *const names[OXR_E__COUNT] = {
	    [OXR_OK] = "ok",
	    [OXR_E_OPTION] = "bad_option",
	    [OXR_E_TOO_BIG] = "too_big",
	    [OXR_E_NOMEM] = "out_of_memory",
	    [OXR_E_LAYOUT] = "layout_failed",
	    [OXR_E_TIMEOUT] = "layout_timeout",
	    [OXR_E_WORKER] = "layout_worker_failed",
	    [OXR_E_NOT_FOUND] = "not_found",
	    [OXR_E_MODEL] = "bad_model",
	    [OXR_E_IO] = "io_error",
	};
	return (unsigned)code < OXR_E__COUNT && names[code] ? names[code] : "unknown";
}

const char *oxr_format_ext(oxr_format f)
{
	switch (f) {
	case OXR_FMT_DOT:
		return "dot";
	case OXR_FMT_LAYOUT_JSON:
		return "json";
	default:
		return "svg";
	}
}
