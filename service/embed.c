/*
 * embed.c — views other sites embed (embed.h; issue 36 items 3 and 4; docs/embed.md and
 * docs/decisions.md 92): the framable view GET /embed/{id}, the share URL GET /m/{id}
 * with its Open Graph and Twitter card tags, and oEmbed.
 *
 * Both pages are the web page itself (web/index.html) with a little written into it by
 * the server: /embed/{id} marks its <html> (class "embed", the model's id and the origins
 * it may talk to) and answers with frame-ancestors naming --frame-ancestors' origins;
 * /m/{id} adds the tags an unfurler reads to its <head> (unfurlers run no script and never
 * see a #route).  Every value written is HTML-escaped; the model's name and figures come
 * from the store and the parser, never from the request.
 */
#include "service/embed.h"
#include "service/origins.h"
#include "parser/oxp.h"
#include "render/oxr.h"
#include "service/md.h"
#include "service/models.h"
#include "service/query.h"
#include "service/reply.h"
#include "service/request.h"
#include "service/router.h"
#include "service/sign.h"
#include "store/oxst.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_PAIRS 32
#define CARD_W 1200 /* card.png: the Open Graph size */
#define CARD_H 630
#define OEMBED_W 800 /* oEmbed's size without maxwidth / maxheight */
#define OEMBED_H 600
#define OEMBED_MAX 10000

/* The web page's CSP, framable by `ancestors` ("'none'" when no origin is listed). */
#define PAGE_CSP_HEAD "default-src 'self'; object-src 'none'; base-uri 'none'; "
#define PAGE_CSP_TAIL "; form-action 'self'"

/* ---------------------------------------------------------------------------------------
 * Helpers
 */
/* This server as the request reached it: --base-url, else http:// and the Host header
 * (its characters checked: it is written into pages).  False after replying 400. */
static bool request_base(oxs_req *r, char *out, size_t size)
{
	if (r->srv->cfg.base_url[0] != '\0') {
		snprintf(out, size, "%s", r->srv->cfg.base_url);
		return true;
	}
	const char *host = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, "Host");
	size_t n = host != NULL ? strlen(host) : 0;
	bool ok = n > 0 && n < 200;
	for (size_t i = 0; ok && i < n; i++)
		ok = isalnum((unsigned char)host[i]) || strchr(".-:[]", host[i]) != NULL;
	if (!ok) {
		oxs_reply_error(r, 400, "no_base_url", "",
		                "this answer holds absolute URLs: send a Host header of letters, "
		                "digits and .-:[] or start the server with --base-url");
		return false;
	}
	snprintf(out, size, "http://%s", host);
	return true;
}

/* path ("/models/ID/card.png?w=1") as an absolute URL into b; signed with the request's
 * own expiry when the request came through a signed link (sign.h), so that what the page
 * or the answer points to reads as long as the link that led to it. */
static void link_to(oxr_buf *b, const oxs_req *r, const char *base, const char *path)
{
	oxr_buf_printf(b, "%s", base);
	if (r->signed_expires > 0 && r->srv->sign_key != NULL) {
		char err[160];
		size_t at = b->len;
		if (oxs_sign_target(r->srv->sign_key, path, r->signed_expires, b, err, sizeof(err)))
			return;
		b->len = at; /* our own paths always sign; unsigned is the fallback */
	}
	oxr_buf_printf(b, "%s", path);
}

/* The web page (web/index.html), or NULL when the build has none. */
static const struct oxw_asset *page(void)
{
	for (const struct oxw_asset *a = oxw_assets; a->path != NULL; a++)
		if (strcmp(a->path, "/index.html") == 0)
			return a;
	return NULL;
}

/* Answer b as the page: text/html, the web page's CSP with frame-ancestors `ancestors`,
 * not stored by shared caches when reads are private. */
static void reply_page(oxs_req *r, oxr_buf *b, const char *ancestors)
{
	size_t len = 0;
	struct MHD_Response *resp = oxs_response_buf(r, b, "text/html", false, &len);
	if (resp == NULL)
		return;
	char csp[1400];
	snprintf(csp, sizeof(csp), PAGE_CSP_HEAD "frame-ancestors %s" PAGE_CSP_TAIL,
	         ancestors[0] ? ancestors : "'none'");
	MHD_add_response_header(resp, "Content-Type", "text/html; charset=utf-8");
	MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
	MHD_add_response_header(resp, "Referrer-Policy", "no-referrer");
	MHD_add_response_header(resp, "Content-Security-Policy", csp);
	oxs_response_cache(resp, r->srv, false);
	oxs_reply(r, 200, resp, len);
}

/* The page with `head` written after its <meta charset> and `html_attrs` into its <html> tag,
 * and its <title> replaced when title is not NULL. */
static bool write_page(oxr_buf *b, const char *html_attrs, const char *head, const char *title)
{
	const struct oxw_asset *a = page();
	if (a == NULL)
		return false;
	const char *s = (const char *)a->data, *end = s + a->size;
	/* after <meta charset>, which must come within the first 1024 bytes */
	const char *tag = strstr(s, "<html"), *hd = strstr(s, "<meta charset=\"utf-8\">");
	const char *t0 = strstr(s, "<title>"), *t1 = t0 ? strstr(t0, "</title>") : NULL;
	if (tag == NULL || hd == NULL || hd < tag || (title != NULL && (t0 == NULL || t1 == NULL ||
	                                                                t0 < hd)))
		return false;
	tag += 5;
	hd += 22;
	oxr_buf_append(b, s, (size_t)(tag - s));
	oxr_buf_printf(b, "%s", html_attrs);
	oxr_buf_append(b, tag, (size_t)(hd - tag));
	oxr_buf_printf(b, "\n%s", head);
	if (title != NULL) {
		oxr_buf_append(b, hd, (size_t)(t0 - hd));
		oxr_buf_printf(b, "<title>%s</title>", title);
		hd = t1 + 8;
	}
	oxr_buf_append(b, hd, (size_t)(end - hd));
	return !b->failed;
}

/* r->query's pairs (at most MAX_PAIRS), or -1 after replying 400. */
static int split_query(oxs_req *r, oxs_query_pair *pairs)
{
	int n = oxs_query_split(r->query, pairs, MAX_PAIRS);
	if (n < 0)
		oxs_reply_error(r, 400, "bad_query", "", "malformed query string (bad %%-escape, "
		                "NUL byte, or over %d parameters)", MAX_PAIRS);
	return n;
}

/* Whether the store has model r->id (a quick look; a slow store says later). */
static bool have_model(oxs_req *r, unsigned flags)
{
	oxst_store *st = r->srv->store;
	oxst_status s = r->id[0] != '\0' ? st->ops->stat_model(st, r->id, flags, NULL)
	                                 : OXST_E_NOT_FOUND;
	if (s == OXST_OK || s == OXST_E_AGAIN)
		return true;
	if (s == OXST_E_NOT_FOUND || s == OXST_E_INVALID)
		oxs_reply_error(r, 404, "not_found", "", "no such model");
	else
		oxs_reply_store_error(r, s, "cannot read the store");
	return false;
}

/* The meta kept with model id at upload (embed.h): a listing from just before the id
 * names it when kept. */
bool oxs_model_meta(oxs_server *srv, const char *id, oxst_model_meta *meta)
{
	char before[OXST_ID_LEN + 1];
	snprintf(before, sizeof(before), "%s", id);
	int i = OXST_ID_LEN - 1;
	for (; i >= 0 && before[i] == '0'; i--)
		before[i] = 'f';
	if (i >= 0)
		before[i] = before[i] == 'a' ? '9' : (char)(before[i] - 1);
	oxst_model_info info;
	size_t got = 0;
	uint64_t total = 0;
	memset(&info, 0, sizeof(info));
	if (srv->store->ops->list_models(srv->store, i >= 0 ? before : "", &info, 1, &got,
	                                 &total) == OXST_OK &&
	    got == 1 && strcmp(info.id, id) == 0 && info.has_meta) {
		*meta = info.meta;
		return true;
	}
	return false;
}

/* The model's name: the uploaded file's (kept at upload), else its graph's, else
 * "model" and the id's start. */
static void model_name(oxs_server *srv, const char *id, char *out, size_t size)
{
	oxst_model_meta meta;
	if (oxs_model_meta(srv, id, &meta)) {
		if (meta.name[0] != '\0') {
			snprintf(out, size, "%s", meta.name);
			return;
		}
		if (meta.graph[0] != '\0') {
			snprintf(out, size, "%s", meta.graph);
			return;
		}
	}
	snprintf(out, size, "model %.12s", id);
}

/* "83 nodes · 1,233,288 parameters · ≈ 352 M MACs" for model id; false (with status)
 * when the model cannot be read. */
static bool model_figures(oxs_server *srv, const char *id, char *out, size_t size,
                          oxst_status *status)
{
	oxs_mentry *me = NULL;
	*status = oxs_models_get(srv->models, srv->store, id, "", &me, NULL);
	if (*status != OXST_OK)
		return false;
	const oxp_dag *d = oxs_mentry_dag(me);
	oxr_buf b;
	oxr_buf_init(&b, 512);
	if (d == NULL) {
		oxr_buf_printf(&b, "a tensor");
	} else {
		const oxp_dag_view *v = oxp_dag_get(d);
		oxs_md_count(&b, v->nnodes);
		oxr_buf_printf(&b, " nodes \xc2\xb7 ");
		oxs_md_count(&b, v->summary.parameters);
		oxr_buf_printf(&b, " parameters");
		oxp_arena *a = oxp_arena_new((size_t)256 << 20);
		const oxp_cost *c = NULL;
		char macs[128];
		if (a != NULL && oxp_cost_compute(d, a, NULL, &c, NULL) == OXP_OK)
			oxr_buf_printf(&b, " \xc2\xb7 %s MACs",
			               oxp_cost_poly_format(c, &c->total.macs, 0, macs, sizeof(macs)));
		oxp_arena_free(a);
	}
	oxs_models_release(srv->models, me);
	snprintf(out, size, "%s", b.failed || b.data == NULL ? "" : b.data);
	oxr_buf_free(&b);
	return true;
}

/* ---------------------------------------------------------------------------------------
 * GET /embed/{id}
 */
void oxs_embed_get(oxs_req *r)
{
	/* the view's query is the page's (render options and node=): checked here, so that a
	 * bad one is a 400 rather than a page that cannot draw */
	oxs_query_pair pairs[MAX_PAIRS];
	int n = split_query(r, pairs);
	if (n < 0)
		return;
	size_t k = 0;
	for (int i = 0; i < n; i++) {
		if (strcmp(pairs[i].key, "node") == 0) {
			size_t len = strlen(pairs[i].value);
			if (len == 0 || len > 200 || strspn(pairs[i].value, "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
			                                                    "abcdefghijklmnopqrstuvwxyz"
			                                                    "0123456789_.") != len) {
				oxs_reply_error(r, 400, "bad_option", "", "node: a node id ([A-Za-z0-9_.])");
				return;
			}
		} else {
			pairs[k++] = pairs[i];
		}
	}
	oxr_options opt;
	char err[600];
	if (!oxs_query_options(pairs, k, &opt, err, sizeof(err))) {
		oxs_reply_error(r, 400, "bad_option", "", "%s", err);
		return;
	}
	if (!have_model(r, OXST_STAT_NONBLOCK))
		return;
	const char *origins = r->srv->cfg.frame_ancestors;
	oxr_buf attrs, b;
	oxr_buf_init(&attrs, 4096);
	oxr_buf_printf(&attrs, " class=\"embed\" data-embed=\"%s\" data-embed-origins=\"", r->id);
	oxr_buf_xml(&attrs, origins);
	oxr_buf_printf(&attrs, "\"");
	/* through a signed link: the page's reads of this model carry a capability until the
	 * same expiry (sign.h, decision 92), as X-Onnxviz-Cap (web/api.js) */
	char cap[OXS_SIGN_CAP_MAX + 1];
	if (r->signed_expires > 0 && r->srv->sign_key != NULL &&
	    oxs_sign_cap(r->srv->sign_key, r->id, r->signed_expires, cap))
		oxr_buf_printf(&attrs, " data-embed-cap=\"%s\"", cap);
	oxr_buf_init(&b, (size_t)1 << 20);
	bool ok = !attrs.failed && write_page(&b, attrs.data, "", NULL);
	oxr_buf_free(&attrs);
	if (!ok) {
		oxr_buf_free(&b);
		oxs_reply_error(r, 404, "not_found", "", "this build has no web page");
		return;
	}
	reply_page(r, &b, origins);
}

/* ---------------------------------------------------------------------------------------
 * GET /m/{id}
 */
static void meta_tag(oxr_buf *b, const char *attr, const char *name, const char *value)
{
	oxr_buf_printf(b, "<meta %s=\"%s\" content=\"", attr, name);
	oxr_buf_xml(b, value);
	oxr_buf_printf(b, "\">\n");
}

static void work_share(oxs_req *r)
{
	oxs_server *srv = r->srv;
	char name[OXST_META_STR + 16], figures[256], base[256];
	oxst_status st;
	if (!request_base(r, base, sizeof(base)))
		goto done;
	if (!model_figures(srv, r->id, figures, sizeof(figures), &st)) {
		oxs_reply_store_error(r, st, "cannot read the model");
		goto done;
	}
	model_name(srv, r->id, name, sizeof(name));
	char path[160];
	oxr_buf u, head, title, b;
	oxr_buf_init(&u, 4096);
	oxr_buf_init(&head, 1 << 16);
	oxr_buf_init(&title, 4096);
	oxr_buf_xml(&title, name);
	oxr_buf_printf(&title, " \xe2\x80\x94 onnxviz");
	meta_tag(&head, "name", "description", figures);
	meta_tag(&head, "property", "og:type", "website");
	meta_tag(&head, "property", "og:site_name", "onnxviz");
	meta_tag(&head, "property", "og:title", name);
	meta_tag(&head, "property", "og:description", figures);
	snprintf(path, sizeof(path), "/m/%s", r->id);
	link_to(&u, r, base, path);
	meta_tag(&head, "property", "og:url", u.data ? u.data : "");
	u.len = 0;
	snprintf(path, sizeof(path), "/models/%s/card.png", r->id);
	link_to(&u, r, base, path);
	const char *card = u.data ? u.data : "";
	meta_tag(&head, "property", "og:image", card);
	meta_tag(&head, "property", "og:image:type", "image/png");
	meta_tag(&head, "property", "og:image:width", "1200");
	meta_tag(&head, "property", "og:image:height", "630");
	meta_tag(&head, "property", "og:image:alt", "The graph of the model, with its figures");
	meta_tag(&head, "name", "twitter:card", "summary_large_image");
	meta_tag(&head, "name", "twitter:title", name);
	meta_tag(&head, "name", "twitter:description", figures);
	meta_tag(&head, "name", "twitter:image", card);
	/* the oEmbed discovery link: /oembed?url=<this page, unsigned>&format=json */
	u.len = 0;
	oxr_buf_printf(&u, "/oembed?format=json&url=");
	for (const char *c = base; *c; c++)
		oxr_buf_printf(&u, isalnum((unsigned char)*c) || strchr("-._~", *c) ? "%c" : "%%%02X",
		               (unsigned char)*c);
	oxr_buf_printf(&u, "%%2Fm%%2F%s", r->id);
	oxr_buf link;
	oxr_buf_init(&link, 4096);
	if (!u.failed)
		link_to(&link, r, base, u.data);
	oxr_buf_printf(&head, "<link rel=\"alternate\" type=\"application/json+oembed\" href=\"");
	oxr_buf_xml(&head, link.data ? link.data : "");
	oxr_buf_printf(&head, "\" title=\"");
	oxr_buf_xml(&head, name);
	oxr_buf_printf(&head, "\">\n");
	oxr_buf_free(&link);
	oxr_buf_free(&u);
	oxr_buf_init(&b, (size_t)1 << 20);
	char attrs[OXST_ID_LEN + 32];
	snprintf(attrs, sizeof(attrs), " data-share=\"%s\"", r->id);
	bool ok = !head.failed && !title.failed && write_page(&b, attrs, head.data, title.data);
	oxr_buf_free(&head);
	oxr_buf_free(&title);
	if (!ok) {
		oxr_buf_free(&b);
		oxs_reply_error(r, 404, "not_found", "", "this build has no web page");
		goto done;
	}
	/* unfurlers frame nothing: the share page stays unframable */
	reply_page(r, &b, "");
done:
	oxs_resume(r);
}

void oxs_share_get(oxs_req *r)
{
	if (r->query[0] != '\0') {
		oxs_reply_error(r, 400, "bad_query", "", "/m/{id} takes no parameters");
		return;
	}
	if (!have_model(r, OXST_STAT_NONBLOCK))
		return;
	/* parsing the model (when not in memory) and its cost: off the HTTP threads */
	oxs_defer(r, r->srv->work, work_share);
}

/* ---------------------------------------------------------------------------------------
 * GET /oembed?url=...&format=json[&maxwidth=W][&maxheight=H]
 */
typedef struct oembed_q {
	char id[OXST_ID_LEN + 1];
	unsigned w, h;
} oembed_q;

/* The model id a URL of this server names: base + /m/ID, /embed/ID, /models/ID or the
 * page's /#/models/ID (a query after it is allowed).  False when another site's or no
 * model's. */
static bool url_model(const char *url, const char *base, char *id)
{
	size_t bl = strlen(base);
	const char *p = NULL;
	if (strncmp(url, base, bl) == 0) {
		p = url + bl;
	} else if (strncmp(base, "http://", 7) == 0 && strncmp(url, "https://", 8) == 0 &&
	           strncmp(url + 8, base + 7, bl - 7) == 0) {
		p = url + 8 + (bl - 7); /* the same host behind TLS */
	}
	if (p == NULL)
		return false;
	static const char *const pre[] = {"/m/", "/embed/", "/models/", "/#/models/"};
	for (size_t i = 0; i < sizeof(pre) / sizeof(pre[0]); i++) {
		size_t n = strlen(pre[i]);
		if (strncmp(p, pre[i], n) != 0)
			continue;
		const char *s = p + n;
		size_t k = strspn(s, "0123456789abcdef");
		if (k != OXST_ID_LEN || (s[k] != '\0' && s[k] != '?' && s[k] != '#'))
			return false;
		memcpy(id, s, OXST_ID_LEN);
		id[OXST_ID_LEN] = '\0';
		return oxst_id_valid(id);
	}
	return false;
}

static void work_oembed(oxs_req *r)
{
	oxs_server *srv = r->srv;
	oembed_q q;
	memcpy(&q, r->param, sizeof(q));
	snprintf(r->id, sizeof(r->id), "%s", q.id);
	char base[256], name[OXST_META_STR + 16];
	if (!request_base(r, base, sizeof(base)) || !have_model(r, 0))
		goto done;
	model_name(srv, q.id, name, sizeof(name));
	/* rich (the iframe) for a host the view may be framed by: the asking page's Origin
	 * when it sends one, else any when --frame-ancestors lists some; when reads are locked
	 * only if this /oembed came through a signed link: the iframe's src is then signed until
	 * the same expiry and its page reads the model with a capability (decision 92) */
	const char *origin = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, "Origin");
	const char *fa = srv->cfg.frame_ancestors;
	bool rich = fa[0] != '\0' && (!oxs_reads_private(srv) || r->signed_expires > 0) &&
	            (origin == NULL || oxs_frame_ancestor_listed(fa, origin));
	oxr_buf b, u;
	oxr_buf_init(&b, 1 << 16);
	oxr_buf_init(&u, 4096);
	char path[200];
	oxr_buf_printf(&b, "{\"version\":\"1.0\",\"type\":\"%s\",\"provider_name\":\"onnxviz\","
	                   "\"provider_url\":",
	               rich ? "rich" : "photo");
	char prov[300];
	snprintf(prov, sizeof(prov), "%s/", base);
	oxr_json_string(&b, prov, strlen(prov));
	oxr_buf_printf(&b, ",\"title\":");
	oxr_json_string(&b, name, strlen(name));
	oxr_buf_printf(&b, ",\"width\":%u,\"height\":%u", q.w, q.h);
	if (rich) {
		snprintf(path, sizeof(path), "/embed/%s", q.id);
		link_to(&u, r, base, path);
		oxr_buf h;
		oxr_buf_init(&h, 8192);
		oxr_buf_printf(&h, "<iframe src=\"");
		oxr_buf_xml(&h, u.data ? u.data : "");
		oxr_buf_printf(&h, "\" width=\"%u\" height=\"%u\" style=\"border:0\" loading=\"lazy\" "
		                   "title=\"",
		               q.w, q.h);
		oxr_buf_xml(&h, name);
		oxr_buf_printf(&h, "\"></iframe>");
		oxr_buf_printf(&b, ",\"html\":");
		oxr_json_string(&b, h.data ? h.data : "", h.failed ? 0 : h.len);
		oxr_buf_free(&h);
	} else {
		/* the drawing fitted inside w × h (graph.png keeps its aspect) */
		snprintf(path, sizeof(path), "/models/%s/graph.png?w=%u&h=%u", q.id, q.w, q.h);
		link_to(&u, r, base, path);
		oxr_buf_printf(&b, ",\"url\":");
		oxr_json_string(&b, u.data ? u.data : "", u.failed ? 0 : u.len);
	}
	if (q.w >= CARD_W && q.h >= CARD_H) { /* a thumbnail only where it fits */
		u.len = 0;
		snprintf(path, sizeof(path), "/models/%s/card.png", q.id);
		link_to(&u, r, base, path);
		oxr_buf_printf(&b, ",\"thumbnail_url\":");
		oxr_json_string(&b, u.data ? u.data : "", u.failed ? 0 : u.len);
		oxr_buf_printf(&b, ",\"thumbnail_width\":%d,\"thumbnail_height\":%d", CARD_W, CARD_H);
	}
	oxr_buf_printf(&b, ",\"cache_age\":3600}\n");
	oxr_buf_free(&u);
	oxs_reply_json(r, 200, &b);
	oxr_buf_free(&b);
done:
	oxs_resume(r);
}

static bool dimension(const char *s, unsigned *out)
{
	size_t n = strlen(s);
	if (n == 0 || n > 6 || strspn(s, "0123456789") != n)
		return false;
	unsigned long v = strtoul(s, NULL, 10);
	if (v < 1)
		return false;
	*out = v > OEMBED_MAX ? OEMBED_MAX : (unsigned)v;
	return true;
}

void oxs_oembed_get(oxs_req *r)
{
	oxs_query_pair pairs[MAX_PAIRS];
	int n = split_query(r, pairs);
	if (n < 0)
		return;
	const char *url = NULL, *format = "json";
	oembed_q q = {.w = OEMBED_W, .h = OEMBED_H};
	unsigned mw = 0, mh = 0;
	for (int i = 0; i < n; i++) {
		const char *k = pairs[i].key, *v = pairs[i].value;
		if (strcmp(k, "url") == 0) {
			url = v;
		} else if (strcmp(k, "format") == 0) {
			format = v;
		} else if (strcmp(k, "maxwidth") == 0 || strcmp(k, "maxheight") == 0) {
			if (!dimension(v, k[3] == 'w' ? &mw : &mh)) {
				oxs_reply_error(r, 400, "bad_query", "", "%s: a whole number from 1", k);
				return;
			}
		}
		/* other parameters are the consumer's own (the spec allows them): ignored */
	}
	if (strcmp(format, "json") != 0) { /* oEmbed 1.0, 2.3.4.1 */
		oxs_reply_error(r, 501, "format_not_implemented", "",
		                "format: only json is answered");
		return;
	}
	if (url == NULL || url[0] == '\0') {
		oxs_reply_error(r, 400, "bad_query", "", "url: the URL of a model on this server");
		return;
	}
	char base[256];
	if (!request_base(r, base, sizeof(base)))
		return;
	if (!url_model(url, base, q.id)) {
		oxs_reply_error(r, 404, "not_found", "",
		                "url is not a model's URL on this server (%s/m/{id})", base);
		return;
	}
	/* keep the aspect of the default box inside maxwidth x maxheight */
	if (mw > 0 && mw < q.w) {
		q.h = q.h * mw / q.w;
		q.w = mw;
	}
	if (mh > 0 && mh < q.h) {
		q.w = q.w * mh / q.h;
		q.h = mh;
	}
	if (q.w == 0)
		q.w = 1;
	if (q.h == 0)
		q.h = 1;
	/* the job gets the checked query in r->param, which this route (no {param} in its
	 * pattern) leaves unused */
	_Static_assert(sizeof(oembed_q) <= sizeof(r->param), "oembed_q fits r->param");
	memcpy(r->param, &q, sizeof(q));
	/* a blocking look at the store and the name from its listing: off the HTTP threads */
	oxs_defer(r, r->srv->work, work_oembed);
}
