/*
 * fuzz_render.c — libFuzzer target: the render path up to DOT and SVG text, in process.
 * The input is parsed under small limits (200 nodes, 16 inputs per node, 256 elements per
 * field, subgraphs 4 deep, 16 MB arena) so that Graphviz stays well inside OSS-Fuzz's 25 s
 * per input and never runs out of memory (it would exit()); linked with shape inference,
 * then rendered as SVG, DOT and layout JSON with options taken from the input's last byte
 * (rankdir, initializers, subgraphs, group, shapes, attrs) and the one before (arith,
 * unfold; expand entries when its top bit is set), into buffers capped at 4 MB.
 *
 * Checks:
 *  - a render fails only with too_big, layout or out_of_memory (or bad_model for a model
 *    without a main graph), with a message;
 *  - SVG is valid UTF-8 without the control characters XML forbids, and well-formed XML
 *    (a small checker below: balanced tags, quoted attributes, known entities, no '<' or
 *    '&' out of place), with no active content: no element script, foreignObject, iframe,
 *    object, embed, animate, set, handler; no attribute on*; no javascript: (entities
 *    decoded, case and blanks ignored) nor url( / @import in any attribute value.  Model
 *    strings may show as text content; they must never become markup;
 *  - DOT tokenizes (every quoted string and HTML string closed) and no attribute key is
 *    one that reads files or carries links (image, shapefile, URL, href, ...);
 *  - layout JSON is valid UTF-8.
 */
#include "tests/fuzz/fuzz_common.h"

#include <ctype.h>
#include <strings.h>

#define FUZZ_MAX_OUTPUT ((size_t)4 << 20)

/* ---------------------------------------------------------------------------------------
 * SVG: a well-formedness and active-content checker for the XML our writer produces
 */
typedef struct xml {
	const char *p, *end;
	char stack[64][48]; /* open element names (deeper nesting is itself a failure) */
	int depth;
} xml;

static bool starts(const xml *x, const char *lit)
{
	size_t n = strlen(lit);
	return (size_t)(x->end - x->p) >= n && memcmp(x->p, lit, n) == 0;
}

static bool name_char(char c, bool first)
{
	return isalpha((unsigned char)c) || c == '_' || c == ':' ||
	       (!first && (isdigit((unsigned char)c) || c == '-' || c == '.'));
}

/* Read a name into out (truncated to size-1); false when there is none. */
static bool read_name(xml *x, char *out, size_t size)
{
	size_t n = 0;
	if (x->p >= x->end || !name_char(*x->p, true))
		return false;
	while (x->p < x->end && name_char(*x->p, n == 0)) {
		if (n + 1 < size)
			out[n++] = *x->p;
		x->p++;
	}
	out[n] = '\0';
	return true;
}

static void skip_ws(xml *x)
{
	while (x->p < x->end && (*x->p == ' ' || *x->p == '\t' || *x->p == '\n' || *x->p == '\r'))
		x->p++;
}

/* An entity at s ("&...;"): its length, or 0 when it is not one XML knows. */
static size_t entity(const char *s, const char *end, unsigned *cp)
{
	static const struct {
		const char *text;
		unsigned cp;
	} named[] = {{"&amp;", '&'}, {"&lt;", '<'}, {"&gt;", '>'}, {"&quot;", '"'}, {"&apos;", '\''}};
	for (size_t i = 0; i < sizeof(named) / sizeof(named[0]); i++) {
		size_t n = strlen(named[i].text);
		if ((size_t)(end - s) >= n && memcmp(s, named[i].text, n) == 0) {
			*cp = named[i].cp;
			return n;
		}
	}
	if (end - s < 4 || s[1] != '#')
		return 0;
	bool hex = s[2] == 'x';
	const char *q = s + (hex ? 3 : 2);
	unsigned long v = 0;
	size_t digits = 0;
	while (q < end && (hex ? isxdigit((unsigned char)*q) : isdigit((unsigned char)*q)) && digits < 8) {
		v = v * (hex ? 16 : 10) + (unsigned long)(isdigit((unsigned char)*q) ? *q - '0'
		                                         : (tolower((unsigned char)*q) - 'a' + 10));
		q++, digits++;
	}
	if (digits == 0 || q >= end || *q != ';')
		return 0;
	/* a character XML allows */
	if (!(v == 9 || v == 10 || v == 13 || (v >= 0x20 && v <= 0xd7ff) ||
	      (v >= 0xe000 && v <= 0xfffd) || (v >= 0x10000 && v <= 0x10ffff)))
		return 0;
	*cp = (unsigned)v;
	return (size_t)(q + 1 - s);
}

/* Character data up to the next '<': every '&' starts a known entity, no "]]>". */
static void xml_text(xml *x)
{
	while (x->p < x->end && *x->p != '<') {
		unsigned cp;
		if (*x->p == '&') {
			size_t n = entity(x->p, x->end, &cp);
			FZ_CHECK(n > 0);
			x->p += n;
			continue;
		}
		FZ_CHECK(!starts(x, "]]>"));
		x->p++;
	}
}

/* An attribute value (after the opening quote q): no '<', entities known.  Decoded,
 * lower-cased and without blanks or controls into dec, for the active-content checks. */
static void xml_attr_value(xml *x, char q, char *dec, size_t size)
{
	size_t o = 0;
	while (x->p < x->end && *x->p != q) {
		unsigned cp = (unsigned char)*x->p;
		FZ_CHECK(*x->p != '<');
		if (*x->p == '&') {
			size_t n = entity(x->p, x->end, &cp);
			FZ_CHECK(n > 0);
			x->p += n;
		} else {
			x->p++;
		}
		if (cp > ' ' && o + 1 < size)
			dec[o++] = (char)(cp < 0x80 ? tolower((int)cp) : '?');
	}
	dec[o] = '\0';
	FZ_CHECK(x->p < x->end);
	x->p++; /* the closing quote */
}

static void forbid_element(const char *name)
{
	static const char *const bad[] = {"script", "foreignobject", "iframe", "object", "embed",
	                                  "animate", "set", "handler", "animatemotion",
	                                  "animatetransform", "use", "image", "a"};
	const char *local = strrchr(name, ':') ? strrchr(name, ':') + 1 : name;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (strcasecmp(local, bad[i]) == 0) {
			fprintf(stderr, "fuzz_render: element <%s> in the SVG\n", name);
			fz_broken(__FILE__, __LINE__, "active element");
		}
}

static void forbid_attr(const char *name, const char *dec)
{
	const char *local = strrchr(name, ':') ? strrchr(name, ':') + 1 : name;
	if (strncasecmp(local, "on", 2) == 0 || strcasecmp(local, "href") == 0 ||
	    strcasecmp(local, "src") == 0 || strcasecmp(local, "style") == 0) {
		fprintf(stderr, "fuzz_render: attribute %s in the SVG\n", name);
		fz_broken(__FILE__, __LINE__, "active attribute");
	}
	FZ_CHECK(strstr(dec, "javascript:") == NULL);
	FZ_CHECK(strstr(dec, "url(") == NULL || strcmp(name, "xmlns") == 0);
	FZ_CHECK(strstr(dec, "@import") == NULL);
}

static void xml_start_tag(xml *x)
{
	char name[48];
	x->p++; /* '<' */
	FZ_CHECK(read_name(x, name, sizeof(name)));
	forbid_element(name);
	char seen[32][48];
	int nseen = 0;
	for (;;) {
		const char *before = x->p;
		skip_ws(x);
		FZ_CHECK(x->p < x->end);
		if (*x->p == '>' || starts(x, "/>"))
			break;
		FZ_CHECK(x->p > before); /* attributes are separated by blanks */
		char an[48], dec[256];
		FZ_CHECK(read_name(x, an, sizeof(an)));
		for (int i = 0; i < nseen; i++)
			FZ_CHECK(strcmp(seen[i], an) != 0); /* no attribute twice */
		if (nseen < 32)
			memcpy(seen[nseen++], an, sizeof(an));
		skip_ws(x);
		FZ_CHECK(x->p < x->end && *x->p == '=');
		x->p++;
		skip_ws(x);
		FZ_CHECK(x->p < x->end && (*x->p == '"' || *x->p == '\''));
		char q = *x->p++;
		xml_attr_value(x, q, dec, sizeof(dec));
		forbid_attr(an, dec);
	}
	if (*x->p == '/') {
		x->p += 2;
		return;
	}
	x->p++;
	FZ_CHECK(x->depth < 64);
	memcpy(x->stack[x->depth++], name, sizeof(name));
}

static void check_svg(const char *s, size_t n)
{
	FZ_CHECK(fz_utf8_valid((const unsigned char *)s, n));
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		FZ_CHECK(c >= 0x20 || c == '\t' || c == '\n' || c == '\r');
	}
	xml x = {.p = s, .end = s + n, .depth = 0};
	bool root_seen = false;
	skip_ws(&x);
	if (starts(&x, "<?xml")) {
		const char *e = memmem(x.p, (size_t)(x.end - x.p), "?>", 2);
		FZ_CHECK(e != NULL);
		x.p = e + 2;
	}
	while (x.p < x.end) {
		if (x.depth == 0) {
			skip_ws(&x);
			if (x.p >= x.end)
				break;
			FZ_CHECK(*x.p == '<');
		} else {
			xml_text(&x);
			FZ_CHECK(x.p < x.end);
		}
		if (starts(&x, "<!--")) {
			const char *e = memmem(x.p + 4, (size_t)(x.end - x.p - 4), "--", 2);
			FZ_CHECK(e != NULL && e + 2 < x.end && e[2] == '>');
			x.p = e + 3;
		} else if (starts(&x, "</")) {
			char name[48];
			x.p += 2;
			FZ_CHECK(read_name(&x, name, sizeof(name)));
			skip_ws(&x);
			FZ_CHECK(x.p < x.end && *x.p == '>');
			x.p++;
			FZ_CHECK(x.depth > 0 && strcmp(x.stack[x.depth - 1], name) == 0);
			x.depth--;
		} else {
			FZ_CHECK(!starts(&x, "<!") && !starts(&x, "<?")); /* no DTD, no PI in the body */
			FZ_CHECK(x.depth > 0 || !root_seen);              /* one root element */
			root_seen = true;
			xml_start_tag(&x);
		}
	}
	FZ_CHECK(root_seen && x.depth == 0);
}

/* ---------------------------------------------------------------------------------------
 * DOT: tokens, and no dangerous attribute key
 */
static void forbid_dot_key(const char *k, size_t n)
{
	static const char *const bad[] = {"image", "imagepath", "shapefile", "fontpath", "URL",
	                                  "href", "labelURL", "labelhref", "headURL", "headhref",
	                                  "tailURL", "tailhref", "edgeURL", "edgehref", "stylesheet",
	                                  "target", "id", "class", "comment"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (strlen(bad[i]) == n && strncasecmp(k, bad[i], n) == 0) {
			fprintf(stderr, "fuzz_render: DOT attribute %.*s\n", (int)n, k);
			fz_broken(__FILE__, __LINE__, "dangerous DOT attribute");
		}
}

static void check_dot(const char *s, size_t n)
{
	const char *p = s, *end = s + n;
	const char *word = NULL; /* the last identifier, a key when '=' follows */
	size_t wlen = 0;
	int braces = 0, brackets = 0;
	while (p < end) {
		char c = *p;
		if (c == '"') {
			p++;
			while (p < end && *p != '"') {
				if (*p == '\\' && p + 1 < end)
					p++;
				p++;
			}
			FZ_CHECK(p < end); /* every string is closed */
			p++;
			word = NULL;
		} else if (c == '<' && brackets > 0) {
			int level = 0; /* an HTML string: balanced <...> */
			do {
				level += *p == '<' ? 1 : *p == '>' ? -1 : 0;
				p++;
			} while (p < end && level > 0);
			FZ_CHECK(level == 0);
			word = NULL;
		} else if (isalnum((unsigned char)c) || c == '_' || c == '.' || c == '-' ||
		           (unsigned char)c >= 0x80) {
			word = p;
			while (p < end && (isalnum((unsigned char)*p) || *p == '_' || *p == '.' ||
			                   *p == '-' || (unsigned char)*p >= 0x80))
				p++;
			wlen = (size_t)(p - word);
		} else {
			if (c == '=' && word != NULL)
				forbid_dot_key(word, wlen);
			braces += c == '{' ? 1 : c == '}' ? -1 : 0;
			brackets += c == '[' ? 1 : c == ']' ? -1 : 0;
			FZ_CHECK(braces >= 0 && brackets >= 0);
			if (c != ' ' && c != '\t' && c != '\n' && c != '\r')
				word = NULL;
			p++;
		}
	}
	FZ_CHECK(braces == 0 && brackets == 0);
}

/* ---------------------------------------------------------------------------------------
 * The target
 */
/* Options from the last two bytes of the input: k the common ones, k2 arith (bit 0),
 * unfold (bits 1-2) and expand (bits 3-5, when bit 7 is set). */
static void options_from(uint8_t k, uint8_t k2, oxr_options *o)
{
	oxr_error e;
	/* expand entries of every form the hierarchy parses (render/hier.c): paths, spans of
	 * numbered scopes with and without "/" "*", a child wildcard, broken spans */
	static const char *const expands[] = {
	    "/a/b", "/a/*", "/a/b.0..3/*", "a/b.0..9", "l.1..0/*,/..,/a.b..c", "*", "/*,/x/0..0",
	    "/a/b.999999999..9999999999/*"};
	static const char *const inits[] = {"fold", "nodes", "hide", "fold"};
	static const char *const groups[] = {"auto", "none", "1", "2"};
	static const char *const attrs[] = {"key", "none", "all", "key"};
	oxr_options_default(o);
	FZ_CHECK(oxr_options_set(o, "rankdir", k & 1 ? "LR" : "TB", &e) == OXR_OK);
	FZ_CHECK(oxr_options_set(o, "initializers", inits[(k >> 1) & 3], &e) == OXR_OK);
	FZ_CHECK(oxr_options_set(o, "subgraphs", k & 8 ? "expand" : "collapse", &e) == OXR_OK);
	FZ_CHECK(oxr_options_set(o, "group", groups[(k >> 4) & 3], &e) == OXR_OK);
	FZ_CHECK(oxr_options_set(o, "shapes", k & 64 ? "off" : "on", &e) == OXR_OK);
	FZ_CHECK(oxr_options_set(o, "attrs", attrs[(k >> 6) & 3], &e) == OXR_OK);
	static const char *const unfolds[] = {"", "n0,n1,n2,n3", "n5", "n1.body.n0,zz,n999999"};
	FZ_CHECK(oxr_options_set(o, "arith", k2 & 1 ? "nodes" : "fold", &e) == OXR_OK);
	FZ_CHECK(oxr_options_set(o, "unfold", unfolds[(k2 >> 1) & 3], &e) == OXR_OK);
	if (k2 & 0x80)
		FZ_CHECK(oxr_options_set(o, "expand", expands[(k2 >> 3) & 7], &e) == OXR_OK);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	oxp_limits lim = {.max_depth = 100, .max_graph_depth = 4, .max_alloc = (size_t)16 << 20,
	                  .max_nodes = 200, .max_node_io = 16, .max_repeated = 256};
	oxp_model *m;
	oxp_dag *d;
	if (!fz_parse_link(data, size, &lim, true, &m, &d))
		return 0;
	oxr_options o;
	options_from(size > 0 ? data[size - 1] : 0, size > 1 ? data[size - 2] : 0, &o);
	static const oxr_format fmts[] = {OXR_FMT_SVG, OXR_FMT_DOT, OXR_FMT_LAYOUT_JSON};
	for (size_t f = 0; f < sizeof(fmts) / sizeof(fmts[0]); f++) {
		oxr_buf b;
		oxr_error e;
		memset(&e, 0, sizeof(e));
		oxr_buf_init(&b, FUZZ_MAX_OUTPUT);
		oxr_code rc = oxr_render(m, d, &o, fmts[f], &b, &e);
		fz_buf(&b);
		if (rc != OXR_OK) {
			fz_render_error(&e, rc);
			bool no_graph = rc == OXR_E_MODEL && oxp_model_proto_get(m)->graph == NULL;
			if (rc != OXR_E_TOO_BIG && rc != OXR_E_LAYOUT && rc != OXR_E_NOMEM && !no_graph)
				fprintf(stderr, "fuzz_render: %s: %s\n", oxr_code_name(rc), e.message);
			FZ_CHECK(rc == OXR_E_TOO_BIG || rc == OXR_E_LAYOUT || rc == OXR_E_NOMEM || no_graph);
		} else if (fmts[f] == OXR_FMT_SVG) {
			check_svg(b.data, b.len);
		} else if (fmts[f] == OXR_FMT_DOT) {
			FZ_CHECK(b.len > 0 && fz_utf8_valid((const unsigned char *)b.data, b.len));
			check_dot(b.data, b.len);
		} else {
			FZ_CHECK(fz_utf8_valid((const unsigned char *)b.data, b.len));
		}
		oxr_buf_free(&b);
	}
	oxp_dag_free(d);
	oxp_model_free(m);
	return 0;
}
