/*
 * options.c — render options: defaults, parsing from text, and the canonical cache key.
 */
#include "render/internal.h"
#include "render/oxr.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const oxr_option_names[] = {"rankdir", "initializers", "subgraphs", "group",
                                        "expand",  "depth",        "shapes",    "attrs",
                                        "arith",   "unfold",       "quant",     "dims",
                                        "io",
                                        "patterns", "hide", "theme",
                                        NULL};

void oxr_options_default(oxr_options *o)
{
	memset(o, 0, sizeof(*o));
	o->rankdir_lr = false;
	o->initializers = OXR_INIT_FOLD;
	o->subgraphs_expand = false;
	o->group = OXR_GROUP_AUTO;
	o->expand_depth = 0;
	o->shapes = true;
	o->attrs = 1;
}

static oxr_code bad(oxr_error *err, const char *key, const char *accepted)
{
	if (err != NULL) {
		err->code = OXR_E_OPTION;
		snprintf(err->message, sizeof(err->message),
		         "bad value for option '%s' (accepted: %s)", key, accepted);
	}
	return OXR_E_OPTION;
}

static bool parse_int(const char *s, int lo, int hi, int *out)
{
	if (s[0] == '\0' || strlen(s) > 3)
		return false;
	char *end;
	long v = strtol(s, &end, 10);
	if (*end != '\0' || v < lo || v > hi)
		return false;
	*out = (int)v;
	return true;
}

/* "fold" (false) or "nodes" (true), the values of every option that folds something */
static bool parse_fold(const char *v, bool *nodes)
{
	if (!strcmp(v, "fold"))
		*nodes = false;
	else if (!strcmp(v, "nodes"))
		*nodes = true;
	else
		return false;
	return true;
}

static bool is_on(const char *v)
{
	return !strcmp(v, "on") || !strcmp(v, "true") || !strcmp(v, "1") || !strcmp(v, "yes");
}

static bool is_off(const char *v)
{
	return !strcmp(v, "off") || !strcmp(v, "false") || !strcmp(v, "0") || !strcmp(v, "no");
}

/* An expand list: comma-separated scope paths, as the SVG's data-group shows them (valid
 * UTF-8, no control characters), without '&' or '=' (the options' text form uses them). */
static bool valid_expand(const char *v)
{
	size_t n = strlen(v);
	if (n >= OXR_EXPAND_MAX)
		return false;
	const unsigned char *u = (const unsigned char *)v;
	for (size_t i = 0; i < n;) {
		uint32_t cp;
		size_t len = oxr__utf8_at(u, n, i, &cp);
		if (len == 0 || cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp < 0xa0) || cp == '&' ||
		    cp == '=')
			return false;
		i += len;
	}
	return true;
}

/* An unfold list: comma-separated node ids as the JSON document has them
 * ([A-Za-z0-9_.]: positions and attribute names that are identifiers). */
static bool valid_unfold(const char *v)
{
	size_t n = strlen(v);
	if (n >= OXR_UNFOLD_MAX)
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = v[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '_' || c == '.' || c == ','))
			return false;
	}
	return true;
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* A hide list: comma-separated op types ([A-Za-z0-9_], 1..64 characters each, at most
 * OXR_HIDE_OPS), into out sorted and without repeats; false for anything else. */
static bool parse_hide(const char *v, char out[OXR_HIDE_MAX])
{
	char copy[OXR_HIDE_MAX];
	const char *names[OXR_HIDE_OPS];
	size_t n = 0, len = strlen(v);
	if (len >= OXR_HIDE_MAX)
		return false;
	memcpy(copy, v, len + 1);
	out[0] = '\0';
	if (len == 0)
		return true; /* hide= (empty): nothing hidden, as by default */
	for (char *p = copy;;) {
		size_t k = strspn(p, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_");
		if (k == 0 || k > 64 || (p[k] != ',' && p[k] != '\0') || n == OXR_HIDE_OPS)
			return false;
		bool last = p[k] == '\0';
		p[k] = '\0';
		names[n++] = p;
		if (last)
			break;
		p += k + 1;
	}
	qsort(names, n, sizeof(names[0]), cmp_name);
	size_t at = 0;
	for (size_t i = 0; i < n; i++) {
		if (i > 0 && strcmp(names[i], names[i - 1]) == 0)
			continue;
		/* fits: the sorted list is no longer than the text it came from */
		at += (size_t)snprintf(out + at, OXR_HIDE_MAX - at, "%s%s", at ? "," : "", names[i]);
	}
	return true;
}

oxr_code oxr_options_set(oxr_options *o, const char *key, const char *value, oxr_error *err)
{
	if (!strcmp(key, "rankdir")) {
		if (!strcmp(value, "TB") || !strcmp(value, "tb"))
			o->rankdir_lr = false;
		else if (!strcmp(value, "LR") || !strcmp(value, "lr"))
			o->rankdir_lr = true;
		else
			return bad(err, key, "TB, LR");
	} else if (!strcmp(key, "initializers")) {
		if (!strcmp(value, "fold"))
			o->initializers = OXR_INIT_FOLD;
		else if (!strcmp(value, "nodes"))
			o->initializers = OXR_INIT_NODES;
		else if (!strcmp(value, "hide"))
			o->initializers = OXR_INIT_HIDE;
		else
			return bad(err, key, "fold, nodes, hide");
	} else if (!strcmp(key, "subgraphs")) {
		if (!strcmp(value, "expand"))
			o->subgraphs_expand = true;
		else if (!strcmp(value, "collapse"))
			o->subgraphs_expand = false;
		else
			return bad(err, key, "expand, collapse");
	} else if (!strcmp(key, "group")) {
		if (!strcmp(value, "auto"))
			o->group = OXR_GROUP_AUTO;
		else if (!strcmp(value, "none"))
			o->group = OXR_GROUP_NONE;
		else if (!parse_int(value, 1, 16, &o->group))
			return bad(err, key, "auto, none, 1..16");
	} else if (!strcmp(key, "expand")) {
		if (!valid_expand(value))
			return bad(err, key, "comma-separated scope paths (UTF-8 text without '&' or '='), or *");
		snprintf(o->expand, sizeof(o->expand), "%s", value);
	} else if (!strcmp(key, "depth")) {
		if (!parse_int(value, 0, 64, &o->expand_depth))
			return bad(err, key, "0..64");
	} else if (!strcmp(key, "shapes")) {
		if (is_on(value))
			o->shapes = true;
		else if (is_off(value))
			o->shapes = false;
		else
			return bad(err, key, "on, off");
	} else if (!strcmp(key, "attrs")) {
		if (!strcmp(value, "none"))
			o->attrs = 0;
		else if (!strcmp(value, "key"))
			o->attrs = 1;
		else if (!strcmp(value, "all"))
			o->attrs = 2;
		else if (!parse_int(value, 0, 2, &o->attrs))
			return bad(err, key, "none, key, all");
	} else if (!strcmp(key, "arith")) {
		if (!parse_fold(value, &o->arith_nodes))
			return bad(err, key, "fold, nodes");
	} else if (!strcmp(key, "unfold")) {
		if (!valid_unfold(value))
			return bad(err, key, "comma-separated node ids ([A-Za-z0-9_.])");
		snprintf(o->unfold, sizeof(o->unfold), "%s", value);
	} else if (!strcmp(key, "quant")) {
		if (!parse_fold(value, &o->quant_nodes))
			return bad(err, key, "fold, nodes");
	} else if (!strcmp(key, "dims")) {
		/* checked here so that a bad binding is a 400 naming it, not a drawing without
		 * MAC rows; '&' and '=' never pass (names are identifiers-like text up to ':') */
		oxp_cost_bind b;
		if (strlen(value) >= OXR_DIMS_MAX || strpbrk(value, "&=") != NULL ||
		    (value[0] != '\0' && oxp_cost_bind_parse(&b, value, NULL) != OXP_OK))
			return bad(err, key, "NAME:VALUE,... (e.g. batch:1,sequence_length:128)");
		snprintf(o->dims, sizeof(o->dims), "%s", value);
	} else if (!strcmp(key, "io")) {
		if (!parse_fold(value, &o->io_nodes))
			return bad(err, key, "fold, nodes");
	} else if (!strcmp(key, "patterns")) {
		if (!parse_fold(value, &o->patterns_nodes))
			return bad(err, key, "fold, nodes");
	} else if (!strcmp(key, "hide")) {
		if (!parse_hide(value, o->hide))
			return bad(err, key, "comma-separated op types ([A-Za-z0-9_], at most 32), "
			                     "e.g. Constant,Identity");
	} else if (!strcmp(key, "theme")) {
		if (!strcmp(value, "light"))
			o->theme_dark = false;
		else if (!strcmp(value, "dark"))
			o->theme_dark = true;
		else
			return bad(err, key, "light, dark");
	} else {
		if (err != NULL) {
			err->code = OXR_E_OPTION;
			int n = snprintf(err->message, sizeof(err->message),
			                 "unknown option '%.64s' (known:", key);
			for (size_t i = 0; oxr_option_names[i] != NULL && n > 0 &&
			                   (size_t)n < sizeof(err->message);
			     i++)
				n += snprintf(err->message + n, sizeof(err->message) - (size_t)n, "%s %s",
				              i ? "," : "", oxr_option_names[i]);
			if (n > 0 && (size_t)n < sizeof(err->message))
				snprintf(err->message + n, sizeof(err->message) - (size_t)n, ")");
		}
		return OXR_E_OPTION;
	}
	return OXR_OK;
}

void oxr_options_key(const oxr_options *o, char *buf, size_t size)
{
	static const char *const init[] = {"fold", "nodes", "hide"};
	static const char *const attrs[] = {"none", "key", "all"};
	char group[16];
	if (o->group == OXR_GROUP_AUTO)
		snprintf(group, sizeof(group), "auto");
	else if (o->group == OXR_GROUP_NONE)
		snprintf(group, sizeof(group), "none");
	else
		snprintf(group, sizeof(group), "%d", o->group);
	snprintf(buf, size,
	         "rankdir=%s&initializers=%s&subgraphs=%s&group=%s&expand=%s&depth=%d&shapes=%s"
	         "&attrs=%s&arith=%s&unfold=%s&quant=%s&dims=%s&io=%s&patterns=%s%s%s%s",
	         o->rankdir_lr ? "LR" : "TB", init[o->initializers % 3],
	         o->subgraphs_expand ? "expand" : "collapse", group, o->expand, o->expand_depth,
	         o->shapes ? "on" : "off", attrs[(unsigned)o->attrs % 3],
	         o->arith_nodes ? "nodes" : "fold", o->unfold, o->quant_nodes ? "nodes" : "fold", o->dims,
	         o->io_nodes ? "nodes" : "fold",
	         o->patterns_nodes ? "nodes" : "fold",
	         /* only when given (hide) or dark (theme): the keys (and stored renderings) of
	          * every other option set stay what they were */
	         o->hide[0] ? "&hide=" : "", o->hide, o->theme_dark ? "&theme=dark" : "");
}
