/*
 * upload.c — POST /models, the one-shot POST /graph.{svg,json,dot}, and the one-shot
 * diff POST /diff.{json,svg} (multipart parts `a` and `b`: each streamed into a spool of
 * its own, both stored, then compared like GET /models/{a}/diff/{b}.*).
 *
 * The body (raw, or the "model" part of multipart/form-data through libmicrohttpd's
 * PostProcessor) is streamed into a spool file of the store as it arrives and hashed on
 * the way (SHA-256, OpenSSL EVP): memory use does not depend on the model's size.  Limits
 * are checked before reading (Content-Length) and while streaming (chunked bodies).  At
 * the end a work thread parses and links the spool file; a model that does not parse is
 * answered 400/422 with the parser's code, offset and path and nothing is kept; a good
 * one is stored under its id (201, or 200 when those bytes were already stored), with
 * what is listed about it (meta: the file's name, graph, producer, node count).
 *
 * A JSON body {"source": "s3://bucket/key.onnx"} registers a model already in an object
 * store instead (from the buckets --source-buckets allows): a work thread downloads it
 * into the spool file, hashing it, and it goes on as an upload.
 */
#include "service/upload.h"
#include "parser/oxp.h"
#include "render/oxr.h"
#include "service/art.h"
#include "service/artifacts.h"
#include "service/cache.h"
#include "service/formats.h"
#include "service/gunzip.h"
#include "service/hash.h"
#include "service/log.h"
#include "service/metrics.h"
#include "service/models.h"
#include "service/png.h"
#include "service/query.h"
#include "service/reply.h"
#include "service/request.h"
#include "service/router.h"
#include "service/server.h"
#include "store/oxst.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <jansson.h>
#include <openssl/evp.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

/* After a body went over the limit, bytes still read (and dropped) so that the client
 * gets its 413; beyond this the connection is cut. */
#define DISCARD_MAX ((uint64_t)64 << 20)
#define MAX_PARTS 80
#define MAX_DATA_FILES 64
#define MAX_FIELD_BYTES (64 << 10)
#define MAX_JSON_BYTES 4096
#define PP_BUFFER 1024 /* libmicrohttpd's multipart parser's buffer */
/* Decoded bytes of a gzip body per call on the HTTP thread (oxs_upload_data): a few
 * milliseconds of inflating and writing, then the thread's other connections */
#define GZ_SLICE ((size_t)256 << 10)

struct oxs_upload {
	int fd;
	char path[PATH_MAX];
	bool spooled;        /* the spool file exists and is ours to remove */
	oxst_store *store;
	EVP_MD_CTX *md;
	struct MHD_PostProcessor *pp;
	bool multipart;
	oxs_gunzip *gz;      /* Content-Encoding: gzip (a raw body): the model is its decoding */
	uint64_t max_model;  /* --max-upload: bounds the decoded model as the body */
	unsigned inflate_ratio;  /* --inflate-ratio-limit: decoded bytes per body byte ... */
	uint64_t inflate_burst;  /* ... once past --inflate-ratio-burst decoded bytes */
	uint64_t body_bytes; /* bytes of body received */
	uint64_t model_bytes;/* bytes of model written */
	uint64_t discarded;
	unsigned nparts;
	uint64_t field_bytes;
	bool got_model;
	/* data files: multipart parts other than "model" that carry a filename; the field
	 * name is the file's location relative to the model (oxst_location_valid) */
	char dir[PATH_MAX];  /* spool folder, made at the first data part */
	bool has_dir;
	int dirfd;
	oxst_bundle_file *files;
	size_t nfiles;
	int dfd;             /* the data file being written, -1 between parts */
	EVP_MD_CTX *dmd;
	/* the first failure wins */
	unsigned fail_status;
	char fail_code[40];
	char fail_msg[200];
	oxr_format fmt;      /* one-shot: what to render */
	oxr_options opt;
	bool raster;         /* one-shot: .png (png.c) */
	oxr_raster ras;
	char name[OXST_META_STR]; /* the uploaded file's name, kept in its meta */
	/* by reference: the JSON body, then the object it names */
	bool json;
	size_t jlen;
	char jbuf[MAX_JSON_BYTES + 1];
	char src_bucket[64], src_key[520];
	/* a resumable upload's assembled file (oxs_upload_adopt): told once it is stored */
	oxs_stored_fn on_stored;
	/* oxs_upload_adopt_stored: the store holds the model already (path is its local copy,
	 * not ours); stored_new: this upload created it (removed again if it does not parse) */
	bool stored, stored_new;
	/* POST /diff.*: this upload takes part `a`; part `b` goes to its own upload */
	bool diff;
	struct oxs_upload *b;
	char b_id[OXST_ID_LEN + 1];
};

/* The file name kept for a model: its last path component (either slash), without
 * control characters, at most OXST_META_STR - 1 bytes cut at a character boundary. */
static void set_name(oxs_upload *u, const char *name, size_t n)
{
	for (size_t i = n; i > 0; i--) {
		if (name[i - 1] == '/' || name[i - 1] == '\\') {
			name += i;
			n -= i;
			break;
		}
	}
	size_t o = 0;
	for (size_t i = 0; i < n && o + 1 < sizeof(u->name); i++) {
		unsigned char c = (unsigned char)name[i];
		if (c >= 0x20 && c != 0x7f)
			u->name[o++] = (char)c;
	}
	while (o > 0 && o + 1 >= sizeof(u->name) && ((unsigned char)u->name[o - 1] & 0xc0) == 0x80)
		o--; /* cut inside a UTF-8 sequence: drop its tail bytes ... */
	if (o > 0 && o + 1 >= sizeof(u->name) && (unsigned char)u->name[o - 1] >= 0xc0)
		o--; /* ... and its lead byte */
	u->name[o] = '\0';
}

static void fail(oxs_upload *u, unsigned status, const char *code, const char *msg)
{
	if (u->fail_status != 0)
		return;
	u->fail_status = status;
	snprintf(u->fail_code, sizeof(u->fail_code), "%s", code);
	snprintf(u->fail_msg, sizeof(u->fail_msg), "%s", msg);
}

/* A write to the spool that failed with errno e (0: no error given): 507 for a full disk
 * or a file size limit, 500 otherwise. */
static void fail_io(oxs_upload *u, int e)
{
	bool full = e == ENOSPC || e == EFBIG || e == EDQUOT;
	fail(u, full ? 507 : 500, full ? "insufficient_storage" : "io_error",
	     full ? "no space left for the upload" : "cannot write the upload");
}

/* Write data at offset `at` of fd and hash it; the failure (507 for a full disk) is
 * recorded in u. */
static void write_hashed(oxs_upload *u, int fd, EVP_MD_CTX *md, uint64_t at, const char *data,
                         size_t size)
{
	size_t done = 0;
	while (u->fail_status == 0 && done < size) {
		ssize_t w = pwrite(fd, data + done, size - done, (off_t)(at + done));
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			fail_io(u, w < 0 ? errno : 0);
			return;
		}
		done += (size_t)w;
	}
	if (u->fail_status == 0 && EVP_DigestUpdate(md, data, size) != 1)
		fail(u, 500, "internal", "hashing failed");
}

/* Append model bytes to the spool file and the hash. */
static void write_model(oxs_upload *u, const char *data, size_t size)
{
	if (u->fail_status != 0 || size == 0)
		return;
	write_hashed(u, u->fd, u->md, u->model_bytes, data, size);
	u->model_bytes += size;
}

/* The decoded bytes of a gzip body: the model's, bounded like a plain body (a small body
 * that inflates past --max-upload stops there) and by the ratio of decoded to received
 * bytes past the burst, as Apache's mod_deflate bounds it (DeflateInflateRatioLimit,
 * -Burst): a bomb stops after about the burst, before it costs the disk and the thread
 * gigabytes of writes (docs/decisions.md 86). */
static bool gz_sink(void *cls, const char *data, size_t n)
{
	oxs_upload *u = cls;
	uint64_t in = oxs_gunzip_in(u->gz), out = oxs_gunzip_out(u->gz);
	if (out > u->inflate_burst && in < UINT64_MAX / u->inflate_ratio &&
	    out > in * u->inflate_ratio) {
		char msg[200];
		snprintf(msg, sizeof(msg), "the gzip body decodes to more than %u times its size "
		         "(%" PRIu64 " bytes from %" PRIu64 "; --inflate-ratio-limit, past "
		         "--inflate-ratio-burst %" PRIu64 " bytes)", u->inflate_ratio, out, in,
		         u->inflate_burst);
		fail(u, 413, "inflate_ratio_exceeded", msg);
		return false;
	}
	if (n > u->max_model - u->model_bytes) {
		char msg[160];
		snprintf(msg, sizeof(msg), "the model the gzip body decodes to is larger than the "
		         "limit of %" PRIu64 " bytes", u->max_model);
		fail(u, 413, "payload_too_large", msg);
		return false;
	}
	write_model(u, data, n);
	return u->fail_status == 0;
}

/* Close the data file being written: fsync, its size and hash into files[]. */
static void finish_data(oxs_upload *u)
{
	if (u->dfd < 0)
		return;
	oxst_bundle_file *f = &u->files[u->nfiles - 1];
	unsigned char md[32];
	unsigned int n = 0;
	if (fsync(u->dfd) != 0)
		fail(u, 500, "io_error", "cannot write a data file");
	if (EVP_DigestFinal_ex(u->dmd, md, &n) != 1 || n != 32)
		fail(u, 500, "internal", "hashing failed");
	else
		oxs_hex(f->sha256, md, 32);
	close(u->dfd);
	u->dfd = -1;
}

/* Start the data file at location loc in the spool folder (made now when needed). */
static bool start_data(oxs_upload *u, oxst_store *st, const char *loc)
{
	const char *rule = NULL;
	char msg[200];
	if (!oxst_location_valid(loc, &rule)) {
		snprintf(msg, sizeof(msg), "data part name refused as a location (%s)", rule);
		fail(u, 400, "bad_location", msg);
		return false;
	}
	if (u->nfiles >= MAX_DATA_FILES) {
		fail(u, 400, "bad_multipart", "too many data files (at most 64)");
		return false;
	}
	if (!u->has_dir) {
		if (st->ops->spool_dir(st, u->dir, sizeof(u->dir)) != OXST_OK ||
		    (u->dirfd = open(u->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
			fail(u, 500, "store_error", "cannot start the data files");
			return false;
		}
		u->has_dir = true;
	}
	if (u->files == NULL && (u->files = calloc(MAX_DATA_FILES, sizeof(*u->files))) == NULL) {
		fail(u, 503, "out_of_memory", "out of memory");
		return false;
	}
	/* folders of the location, then the file; nothing here exists but what we made */
	int e = 0;
	int cur = oxst_create_beneath(u->dirfd, loc, &e);
	if (cur < 0) {
		/* only these say the names collide; anything else is the disk's fault */
		if (e == EEXIST || e == ENOTDIR || e == ELOOP || e == EISDIR)
			fail(u, 400, "bad_location",
			     "data part names collide (the same location twice, or a file used as a folder)");
		else
			fail_io(u, e);
		return false;
	}
	u->dfd = cur;
	oxst_bundle_file *bf = &u->files[u->nfiles++];
	snprintf(bf->location, sizeof(bf->location), "%s", loc);
	bf->size = 0;
	if (u->dmd == NULL)
		u->dmd = EVP_MD_CTX_new();
	if (u->dmd == NULL || EVP_DigestInit_ex(u->dmd, EVP_sha256(), NULL) != 1) {
		fail(u, 503, "out_of_memory", "out of memory");
		return false;
	}
	return true;
}

static void write_data(oxs_upload *u, const char *data, size_t size)
{
	oxst_bundle_file *f = &u->files[u->nfiles - 1];
	write_hashed(u, u->dfd, u->dmd, f->size, data, size);
	f->size += size;
}

static enum MHD_Result on_part(void *cls, enum MHD_ValueKind kind, const char *key,
                               const char *filename, const char *content_type,
                               const char *transfer_encoding, const char *data, uint64_t off,
                               size_t size)
{
	oxs_upload *u = cls;
	(void)kind, (void)content_type;
	if (off == 0 && ++u->nparts > MAX_PARTS) {
		fail(u, 400, "bad_multipart", "too many parts (at most 16)");
		return MHD_NO;
	}
	if (transfer_encoding != NULL && strcasecmp(transfer_encoding, "binary") != 0 &&
	    strcasecmp(transfer_encoding, "8bit") != 0 && strcasecmp(transfer_encoding, "7bit") != 0) {
		fail(u, 400, "bad_multipart", "part transfer encodings are not supported");
		return MHD_NO;
	}
	bool is_model = key != NULL && strcmp(key, u->diff ? "a" : "model") == 0;
	if (u->diff && key != NULL && strcmp(key, "b") == 0) {
		u = u->b; /* the second model: the same rules, its own spool */
		is_model = true;
	} else if (u->diff && filename != NULL && !is_model) {
		fail(u, 400, "bad_multipart", "a diff takes two parts, 'a' and 'b' (no data files)");
		return MHD_NO;
	}
	if (is_model && off == 0 && filename != NULL && u->name[0] == '\0')
		set_name(u, filename, strlen(filename));
	if (off == 0 && (is_model || filename != NULL)) {
		/* a new part (an empty one may be reported twice at offset 0) */
		bool same = u->dfd >= 0 && key != NULL &&
		            strcmp(u->files[u->nfiles - 1].location, key) == 0 &&
		            u->files[u->nfiles - 1].size == 0;
		if (!same)
			finish_data(u);
		if (!is_model && !same && !start_data(u, u->store, key ? key : ""))
			return MHD_NO;
	}
	if (is_model) {
		if (off == 0 && u->got_model && u->model_bytes > 0) {
			fail(u, 400, "bad_multipart", "more than one part for the same model");
			return MHD_NO;
		}
		u->got_model = true;
		if (off != u->model_bytes) {
			fail(u, 400, "bad_multipart", "a model part out of order");
			return MHD_NO;
		}
		write_model(u, data, size);
	} else if (filename != NULL) {
		if (u->dfd < 0) {
			fail(u, 400, "bad_multipart", "data part out of order");
			return MHD_NO;
		}
		write_data(u, data, size);
	} else {
		u->field_bytes += size;
		if (u->field_bytes > MAX_FIELD_BYTES) {
			fail(u, 400, "bad_multipart", "form fields other than 'model' too large");
			return MHD_NO;
		}
	}
	return u->fail_status == 0 ? MHD_YES : MHD_NO;
}

/* The failure of either model of a diff upload, in u. */
static void take_failure(oxs_upload *u)
{
	if (u->b != NULL && u->b->fail_status != 0)
		fail(u, u->b->fail_status, u->b->fail_code, u->b->fail_msg);
}

/* Content types taken as the raw model.  x-www-form-urlencoded is what `curl
 * --data-binary @m.onnx` sends unless told otherwise: refusing it protected nothing that
 * multipart/form-data does not already allow. */
static bool raw_type(const char *ct)
{
	static const char *const ok[] = {"application/octet-stream", "application/x-protobuf",
	                                 "application/protobuf", "application/onnx",
	                                 "application/x-onnx", "application/x-www-form-urlencoded"};
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		size_t n = strlen(ok[i]);
		if (strncasecmp(ct, ok[i], n) == 0 && (ct[n] == '\0' || ct[n] == ';' || ct[n] == ' '))
			return true;
	}
	return false;
}

/* A multipart boundary per RFC 2046: 1..70 characters of a restricted set. */
static bool boundary_ok(const char *ct)
{
	const char *b = strcasestr(ct, "boundary=");
	if (b == NULL)
		return false;
	b += 9;
	bool quoted = *b == '"';
	if (quoted)
		b++;
	size_t n = 0;
	for (; b[n] != '\0' && b[n] != ';' && !(quoted && b[n] == '"'); n++) {
		unsigned char c = (unsigned char)b[n];
		if (c < 0x20 || c > 0x7e || (!quoted && c == ' '))
			return false;
	}
	return n >= 1 && n <= 70;
}

void oxs_upload_begin(oxs_req *r)
{
	oxs_server *srv = r->srv;
	const oxs_route *rt = oxs_route_at(r->route);
	if (!oxs_authorize_body(r, rt))
		return;
	if (!oxs_rate_allow(r))
		return;
	if (r->query_too_long) {
		oxs_reply_error(r, 414, "uri_too_long", "", "the query string is too long");
		return;
	}
	/* what the body holds in memory while it arrives, against the client's
	 * --body-per-client: libmicrohttpd's buffer of the connection (--conn-memory) and
	 * this upload's state (a JSON body, the paths); a form's parser below */
	if (!oxs_body_hold(r, srv->cfg.conn_memory + sizeof(oxs_upload)))
		return;
	oxs_upload *u = calloc(1, sizeof(*u));
	if (u == NULL) {
		oxs_reply_error(r, 503, "out_of_memory", "", "out of memory");
		return;
	}
	u->fd = -1;
	u->dfd = -1;
	u->dirfd = -1;
	u->store = srv->store;
	r->up = u;
	oxr_options_default(&u->opt);
	u->diff = strncmp(rt->pattern, "/diff.", 6) == 0;
	if (strncmp(rt->pattern, "/graph.", 7) == 0 || u->diff) {
		/* one-shot: the render options come from the query, checked before the body */
		oxs_query_pair pairs[32];
		int n = oxs_query_split(r->query, pairs, 32);
		char err[600];
		if (n < 0) {
			oxs_reply_error(r, 400, "bad_query", "", "malformed query string");
			return;
		}
		const oxs_ext_format *ef = oxs_format_of_path(rt->pattern);
		size_t np = (size_t)n;
		u->raster = ef != NULL && ef->raster;
		if ((u->raster && !oxs_raster_query(pairs, &np, srv->cfg.max_pixels, false, &u->ras,
		                                    err, sizeof(err))) ||
		    !oxs_query_options(pairs, np, &u->opt, err, sizeof(err))) {
			oxs_reply_error(r, 400, "bad_option", "", "%s", err);
			return;
		}
		if (u->raster) /* a PNG's theme is its drawing's too */
			u->opt.theme_dark = u->ras.theme == OXR_THEME_DARK;
		u->fmt = oxs_format_of_route(rt->pattern);
		r->oneshot = true;
	}
	const char *ct = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, "Content-Type");
	if (ct != NULL && strncasecmp(ct, "multipart/form-data", 19) == 0) {
		if (!boundary_ok(ct)) {
			oxs_reply_error(r, 400, "bad_multipart", "",
			                "multipart boundary missing or not 1..70 printable characters");
			return;
		}
		u->multipart = true;
	} else if (ct != NULL && !r->oneshot && strncasecmp(ct, "application/json", 16) == 0 &&
	           (ct[16] == '\0' || ct[16] == ';' || ct[16] == ' ')) {
		u->json = true; /* {"source": "s3://bucket/key"} */
	} else if (u->diff) {
		oxs_reply_error(r, 415, "unsupported_media_type", "",
		                "send the two models as the parts 'a' and 'b' of multipart/form-data");
		return;
	} else if (ct != NULL && !raw_type(ct)) {
		oxs_reply_error(r, 415, "unsupported_media_type", "",
		                "send the model as application/octet-stream or as the 'model' part "
		                "of multipart/form-data%s",
		                r->oneshot ? "" : ", or {\"source\": \"s3://bucket/key\"} as "
		                                  "application/json");
		return;
	}
	const char *ce = NULL;
	oxs_coding coding = oxs_body_coding(r, &ce);
	if (coding == OXS_CODING_OTHER) {
		oxs_reply_error(r, 415, "unsupported_encoding", "",
		                "a body goes as it is or with Content-Encoding: gzip, not '%.40s'", ce);
		return;
	}
	if (coding == OXS_CODING_GZIP) {
		if (u->multipart || u->json) {
			oxs_reply_error(r, 415, "unsupported_encoding", "",
			                "only a raw model body (application/octet-stream) may be gzip'd");
			return;
		}
		char err[400];
		u->max_model = srv->cfg.max_upload;
		u->inflate_ratio = srv->cfg.inflate_ratio > 0 ? srv->cfg.inflate_ratio : 1;
		u->inflate_burst = srv->cfg.inflate_burst;
		u->gz = oxs_gunzip_new(gz_sink, u, err, sizeof(err));
		if (u->gz == NULL) {
			oxs_reply_error(r, 415, "unsupported_encoding", "", "%s", err);
			return;
		}
	}
	if (!r->oneshot && !u->multipart && !u->json) {
		/* a raw body's file name, when given: POST /models?name=m.onnx */
		char q[OXS_QUERY_MAX];
		snprintf(q, sizeof(q), "%s", r->query);
		oxs_query_pair pairs[32];
		int n = oxs_query_split(q, pairs, 32);
		for (int i = 0; i < n; i++)
			if (strcmp(pairs[i].key, "name") == 0)
				set_name(u, pairs[i].value, strlen(pairs[i].value));
	}
	const char *cl = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, "Content-Length");
	if (cl != NULL) {
		char *end;
		errno = 0;
		unsigned long long n = strtoull(cl, &end, 10);
		if (errno != 0 || *end != '\0' || cl[0] < '0' || cl[0] > '9' ||
		    n > srv->cfg.max_upload) {
			oxs_reply_error(r, 413, "payload_too_large", "",
			                "the body is larger than the limit of %" PRIu64 " bytes",
			                srv->cfg.max_upload);
			return;
		}
	}
	if (u->multipart) {
		if (!oxs_body_hold(r, PP_BUFFER + MAX_DATA_FILES * sizeof(oxst_bundle_file)))
			return;
		u->pp = MHD_create_post_processor(r->conn, PP_BUFFER, on_part, u);
		if (u->pp == NULL) {
			oxs_reply_error(r, 400, "bad_multipart", "", "cannot parse this multipart body");
			return;
		}
	}
	if (u->diff) {
		u->b = calloc(1, sizeof(*u->b));
		if (u->b == NULL) {
			oxs_reply_error(r, 503, "out_of_memory", "", "out of memory");
			return;
		}
		u->b->fd = u->b->dfd = u->b->dirfd = -1;
		u->b->store = srv->store;
	}
	for (oxs_upload *x = u; x != NULL; x = x == u ? u->b : NULL) {
		x->md = EVP_MD_CTX_new();
		if (x->md == NULL || EVP_DigestInit_ex(x->md, EVP_sha256(), NULL) != 1) {
			oxs_reply_error(r, 503, "out_of_memory", "", "out of memory");
			return;
		}
		oxst_status st = srv->store->ops->spool(srv->store, &x->fd, x->path, sizeof(x->path));
		if (st != OXST_OK) {
			oxs_reply_error(r, st == OXST_E_NOSPACE ? 507 : 500,
			                st == OXST_E_NOSPACE ? "insufficient_storage" : "store_error", "",
			                "cannot start the upload: %s", oxst_status_name(st));
			return;
		}
		x->spooled = true;
	}
}

bool oxs_upload_data(oxs_req *r, const char *data, size_t size, size_t *used)
{
	oxs_upload *u = r->up;
	*used = size;
	if (u->gz != NULL && u->fail_status == 0 && size <= r->srv->cfg.max_upload - u->body_bytes) {
		/* a slice of the decoding (GZ_SLICE out); the rest of data comes again */
		char err[200];
		if (!oxs_gunzip_feed(u->gz, data, size, GZ_SLICE, used, err, sizeof(err))) {
			if (err[0] != '\0')
				fail(u, 400, "bad_encoding", err);
			*used = size; /* refused: all of it is dropped */
		}
		u->body_bytes += *used;
		return true;
	}
	u->body_bytes += size;
	if (u->body_bytes > r->srv->cfg.max_upload) {
		char msg[120];
		snprintf(msg, sizeof(msg), "the body is larger than the limit of %" PRIu64 " bytes",
		         r->srv->cfg.max_upload);
		fail(u, 413, "payload_too_large", msg);
	}
	if (u->fail_status != 0) {
		u->discarded += size;
		return u->discarded <= DISCARD_MAX;
	}
	if (u->json) {
		if (size > MAX_JSON_BYTES - u->jlen) {
			fail(u, 413, "payload_too_large", "a JSON body is at most 4096 bytes");
			u->discarded += size;
			return true;
		}
		memcpy(u->jbuf + u->jlen, data, size);
		u->jlen += size;
		u->jbuf[u->jlen] = '\0';
	} else if (!u->multipart) {
		write_model(u, data, size);
	} else if (MHD_post_process(u->pp, data, size) != MHD_YES) {
		take_failure(u); /* b's own failure first, when it was b's part */
		fail(u, 400, "bad_multipart", "malformed multipart body");
	}
	return true;
}

/* Remove the spool file and folder (nothing of a rejected upload is kept). */
static void drop_spool(oxs_upload *u)
{
	if (u->fd >= 0)
		close(u->fd);
	u->fd = -1;
	if (u->spooled)
		(void)unlink(u->path);
	u->spooled = false;
	if (u->dfd >= 0)
		close(u->dfd);
	u->dfd = -1;
	if (u->dirfd >= 0)
		close(u->dirfd);
	u->dirfd = -1;
	if (u->has_dir)
		oxst_remove_path(u->dir);
	u->has_dir = false;
}

static void free_upload(oxs_upload *u)
{
	if (u == NULL)
		return;
	free_upload(u->b); /* one level: b has no b */
	if (u->pp != NULL)
		MHD_destroy_post_processor(u->pp);
	EVP_MD_CTX_free(u->md);
	EVP_MD_CTX_free(u->dmd);
	oxs_gunzip_free(u->gz);
	drop_spool(u);
	free(u->files);
	free(u);
}

void oxs_upload_cleanup(oxs_req *r)
{
	free_upload(r->up);
	r->up = NULL;
}

static unsigned parse_status(oxp_code c)
{
	switch (c) {
	case OXP_E_TRUNCATED:
	case OXP_E_VARINT:
	case OXP_E_TAG:
	case OXP_E_WIRETYPE:
	case OXP_E_GROUP:
	case OXP_E_LENGTH:
	case OXP_E_PACKED:
		return 400; /* not protobuf: a malformed body */
	case OXP_E_IO:
		return 500;
	case OXP_E_NOMEM:
		return 503; /* the server's memory, not the model: Retry-After */
	default: /* OXP_E_BUDGET included: the model needs more than its budget, permanently */
		return 422; /* well-formed, but not a model we accept */
	}
}

/* Reply with a parser error: code, message, offset, path (and which part of a diff
 * upload, when part is not NULL); "headline", the failure in a person's words
 * (oxp_error_headline of the spooled file: read it before the spool goes), when there is
 * one. */
static void reply_parse_error(oxs_req *r, const oxp_error *e, const char *part,
                              const char *headline)
{
	oxr_buf path, head;
	oxr_buf_init(&path, 2048);
	oxr_buf_init(&head, 4096);
	oxr_json_string(&path, e->path, strlen(e->path));
	if (headline != NULL && headline[0] != '\0')
		oxr_json_string(&head, headline, strlen(headline));
	bool has_head = head.len > 0 && !head.failed;
	char extra[6400];
	snprintf(extra, sizeof(extra), ",\"offset\":%" PRIu64 ",\"path\":%s%s%s%s%s%s", e->offset,
	         path.failed ? "\"\"" : path.data, has_head ? ",\"headline\":" : "",
	         has_head ? head.data : "", part ? ",\"part\":\"" : "", part ? part : "",
	         part ? "\"" : "");
	oxr_buf_free(&path);
	oxr_buf_free(&head);
	oxs_reply_error(r, parse_status(e->code), oxp_code_name(e->code), extra, "%s%s%s",
	                part ? part : "", part ? ": " : "", e->message);
}

/* Link header and X-Model-Id for one-shot answers. */
static void add_model_headers(struct MHD_Response *resp, const char *id)
{
	char link[512];
	snprintf(link, sizeof(link),
	         "</models/%s>; rel=\"self\", </models/%s/graph.svg>; rel=\"alternate\"; "
	         "type=\"image/svg+xml\", </models/%s/document.json>; rel=\"describedby\"",
	         id, id, id);
	MHD_add_response_header(resp, "X-Model-Id", id);
	MHD_add_response_header(resp, "Link", link);
}

/* One-shot: answer with a copy of the rendering (or its failure) plus the model's id. */
static void oneshot_on_art(oxs_req *r, oxs_centry *e)
{
	struct MHD_Response *resp = NULL;
	if (e->data != NULL) {
		resp = MHD_create_response_from_buffer(e->len, (void *)e->data, MHD_RESPMEM_MUST_COPY);
	} else {
		int fd = dup(e->fd);
		resp = fd >= 0 ? MHD_create_response_from_fd64(e->len, fd) : NULL;
		if (resp == NULL && fd >= 0)
			close(fd);
	}
	if (resp == NULL) {
		oxs_reply_error(r, 503, "out_of_memory", "", "out of memory");
		return;
	}
	oxs_response_common(resp, e->type);
	MHD_add_response_header(resp, "Cache-Control", "no-store");
	if (e->etag[0] != '\0')
		MHD_add_response_header(resp, "ETag", e->etag);
	bool diff = r->art.kind == OXS_ART_DIFF;
	if (e->status == 200 && r->art.fmt != OXR_FMT_LAYOUT_JSON) {
		char cd[200];
		snprintf(cd, sizeof(cd), "inline; filename=\"%.64s%s%.64s.%s\"", r->id, diff ? "-" : "",
		         diff ? r->art.u.diff.other : "", oxr_format_ext(r->art.fmt));
		MHD_add_response_header(resp, "Content-Disposition", cd);
	}
	if (e->status == 503)
		MHD_add_response_header(resp, "Retry-After", "5");
	if (diff) {
		char link[400];
		snprintf(link, sizeof(link),
		         "</models/%s/diff/%s.json>; rel=\"self\", </models/%s/diff/%s.svg>; "
		         "rel=\"alternate\"; type=\"image/svg+xml\"",
		         r->id, r->art.u.diff.other, r->id, r->art.u.diff.other);
		MHD_add_response_header(resp, "X-Model-Id-A", r->id);
		MHD_add_response_header(resp, "X-Model-Id-B", r->art.u.diff.other);
		MHD_add_response_header(resp, "Link", link);
	} else {
		add_model_headers(resp, r->id);
	}
	oxs_reply(r, e->status, resp, e->len);
}

/* A string of the model (not NUL-terminated), cut to fit; "" for an empty one. */
static void copy_str(char *out, size_t size, oxp_str v)
{
	size_t n = v.len < size - 1 ? v.len : size - 1;
	if (n > 0)
		memcpy(out, v.p, n);
	out[n] = '\0';
}

/* What is kept with the model: the file's name, and from the parsed model its graph's
 * name, producer and node count. */
static void meta_of(oxst_model_meta *m, const oxs_upload *u, const oxs_loaded *l)
{
	memset(m, 0, sizeof(*m));
	m->nodes = -1;
	snprintf(m->name, sizeof(m->name), "%s", u->name);
	if (l->model == NULL)
		return;
	if (l->dag == NULL) {
		snprintf(m->kind, sizeof(m->kind), "tensor");
		return;
	}
	snprintf(m->kind, sizeof(m->kind), "model");
	const oxp_model_proto *p = oxp_model_proto_get(l->model);
	if (p != NULL) {
		copy_str(m->producer, sizeof(m->producer), p->producer_name);
		if (p->graph != NULL)
			copy_str(m->graph, sizeof(m->graph), p->graph->name);
	}
	const oxp_dag_view *v = oxp_dag_get(l->dag);
	if (v != NULL)
		m->nodes = (int64_t)v->nnodes;
}

/* The bytes of u were stored before: their meta takes u's file name when it has none
 * (stored first without one: a bare POST, a comparison's part), never replacing a name.
 * The upload succeeds either way: the name is a label, and a store that cannot keep it
 * now still serves the model. */
static void name_stored(oxst_store *st, const char *id, const oxs_upload *u)
{
	if (u->name[0] == '\0')
		return;
	oxst_status s = st->ops->name_meta(st, id, u->name);
	if (s != OXST_OK && s != OXST_E_NOT_FOUND) {
		char extra[OXST_ID_LEN + 64];
		snprintf(extra, sizeof(extra), ",\"id\":\"%s\",\"store\":\"%s\"", id,
		         oxst_status_name(s));
		oxs_log("warn", "cannot keep the file name of a model stored before", extra);
	}
}

/* keep_model for a model the store holds already (a resumable transfer the object store
 * assembled): parse its local copy, keep its meta; a model that does not parse is removed
 * again when this upload created it. */
static bool keep_stored(oxs_req *r, oxs_upload *u, const char *id, oxs_loaded *l,
                        bool *created)
{
	oxst_store *st = r->srv->store;
	oxst_status s = st->ops->model_path(st, id, u->path, sizeof(u->path));
	oxp_error pe;
	memset(&pe, 0, sizeof(pe));
	if (s == OXST_OK && oxs_load(l, u->path, r->srv->cfg.model_memory, &pe) != OXP_OK) {
		char headline[512];
		oxp_error_headline_file(&pe, u->path, headline, sizeof(headline));
		if (u->stored_new)
			(void)st->ops->delete_model(st, id);
		oxs_metrics_upload(OXS_UP_REJECTED, u->body_bytes);
		reply_parse_error(r, &pe, NULL, headline);
		return false;
	}
	oxst_model_meta meta;
	if (s == OXST_OK) {
		meta_of(&meta, u, l);
		s = st->ops->put_meta(st, id, &meta);
		if (s == OXST_OK && !u->stored_new)
			name_stored(st, id, u);
	}
	if (s == OXST_E_IO && u->stored_new) {
		/* the object this upload assembled does not hash to its id (an object store: a
		 * part replaced after it was acknowledged; issue 35): it goes, so that the id
		 * can be uploaded again rather than stay "stored" and unservable */
		(void)st->ops->delete_model(st, id);
		oxs_loaded_free(l);
		oxs_metrics_upload(OXS_UP_REJECTED, u->body_bytes);
		oxs_reply_error(r, 422, "checksum_mismatch", ",\"rule\":\"stored\"",
		                "the model the store assembled from the parts does not hash to %s: "
		                "removed; upload it again", id);
		return false;
	}
	if (s != OXST_OK) {
		oxs_loaded_free(l);
		oxs_metrics_upload(OXS_UP_REJECTED, u->body_bytes);
		oxs_reply_store_error(r, s, "cannot keep the model");
		return false;
	}
	*created = u->stored_new;
	return true;
}

/* Parse, link and store the model spooled by u under id: *l gets it parsed (nothing when
 * those bytes were stored already), *created whether it is new.  False after a reply
 * (the model did not parse, or the store refused it); part names a diff upload's part. */
static bool keep_model(oxs_req *r, oxs_upload *u, const char *id, const char *part,
                       oxs_loaded *l, bool *created)
{
	oxst_store *st = r->srv->store;
	memset(l, 0, sizeof(*l));
	*created = false;
	if (u->stored)
		return keep_stored(r, u, id, l, created);
	oxst_status have = st->ops->stat_model(st, id, OXST_STAT_FRESH, NULL);
	if (have == OXST_OK) {
		drop_spool(u); /* the same bytes are already stored */
		name_stored(st, id, u);
		return true;
	}
	if (have != OXST_E_NOT_FOUND) {
		drop_spool(u);
		oxs_metrics_upload(OXS_UP_REJECTED, u->body_bytes);
		oxs_reply_store_error(r, have, "cannot look the model up in the store");
		return false;
	}
	oxp_error pe;
	memset(&pe, 0, sizeof(pe));
	if (oxs_load(l, u->path, r->srv->cfg.model_memory, &pe) != OXP_OK) {
		char headline[512];
		oxp_error_headline_file(&pe, u->path, headline, sizeof(headline));
		drop_spool(u);
		oxs_metrics_upload(OXS_UP_REJECTED, u->body_bytes);
		reply_parse_error(r, &pe, part, headline);
		return false;
	}
	/* data files, then meta, then the model: a stored model has all it needs */
	oxst_status s = OXST_OK;
	if (u->has_dir) {
		s = st->ops->put_data(st, id, u->dir);
		if (s == OXST_OK)
			u->has_dir = false; /* moved (or dropped: the same data was there) */
	}
	oxst_model_meta meta;
	meta_of(&meta, u, l);
	if (s == OXST_OK)
		s = st->ops->put_meta(st, id, &meta);
	if (s == OXST_OK)
		s = st->ops->put_model(st, id, u->path, u->fd, created);
	if (s != OXST_OK) {
		oxs_loaded_free(l);
		drop_spool(u);
		oxs_metrics_upload(OXS_UP_REJECTED, u->body_bytes);
		if (s == OXST_E_NOSPACE)
			oxs_reply_error(r, 507, "insufficient_storage", "",
			                "the store has no room for this model");
		else
			oxs_reply_store_error(r, s, "cannot store the model");
		return false;
	}
	u->spooled = false; /* moved into the store (or removed when already there) */
	drop_spool(u);
	return true;
}

/* POST /diff.*: b stored too, then the diff of a and b. */
static void diff_finish(oxs_req *r, oxs_upload *u)
{
	oxs_loaded l;
	bool created = false;
	if (!keep_model(r, u->b, u->b_id, "b", &l, &created)) {
		oxs_resume(r);
		return;
	}
	oxs_metrics_upload(created ? OXS_UP_CREATED : OXS_UP_EXISTING, u->b->model_bytes);
	if (l.model != NULL)
		oxs_models_add(r->srv->models, u->b_id, &l);
	oxs_art_init(&r->art, OXS_ART_DIFF, r->id, u->fmt, &u->opt);
	oxs_art_diff(&r->art, u->b_id);
	if (u->raster)
		oxs_art_raster(&r->art, &u->ras, false);
	r->on_art = oneshot_on_art;
	oxs_art_request(r, &r->art, true);
}

/* Work thread: parse, link, store, answer. */
static void upload_finish(oxs_req *r)
{
	oxs_server *srv = r->srv;
	oxs_upload *u = r->up;
	oxs_loaded l;
	unsigned status = 500;
	char err[600] = "";
	bool created = false;
	if (!keep_model(r, u, r->id, u->diff ? "a" : NULL, &l, &created)) {
		if (u->b != NULL)
			drop_spool(u->b);
		if (u->on_stored != NULL) /* not stored: the answer is set (r->status) */
			u->on_stored(r, NULL, false);
		oxs_resume(r);
		return;
	}
	oxs_metrics_upload(created ? OXS_UP_CREATED : OXS_UP_EXISTING, u->body_bytes);
	r->existing = !created;
	if (u->on_stored != NULL)
		u->on_stored(r, r->id, created);
	oxs_centry *e = oxs_art_summary_now(srv, r->id, l.model, l.dag, &status, err, sizeof(err));
	if (l.model != NULL)
		oxs_models_add(srv->models, r->id, &l); /* the mapping outlives the rename */

	if (u->diff) {
		oxs_cache_release(e);
		diff_finish(r, u);
		return;
	}
	if (r->oneshot) {
		oxs_cache_release(e);
		oxs_art_init(&r->art, OXS_ART_GRAPH, r->id, u->fmt, &u->opt);
		if (u->raster)
			oxs_art_raster(&r->art, &u->ras, false);
		r->on_art = oneshot_on_art;
		oxs_art_request(r, &r->art, true);
		return;
	}
	if (e == NULL) {
		oxs_reply_error(r, status, "render_failed", "", "model stored, but its summary failed: %s",
		                err);
	} else {
		struct MHD_Response *resp = oxs_response_copy(e->data, e->len, "application/json");
		if (resp == NULL) {
			oxs_reply_error(r, 503, "out_of_memory", "", "out of memory");
		} else {
			char loc[OXST_ID_LEN + 16];
			snprintf(loc, sizeof(loc), "/models/%s", r->id);
			MHD_add_response_header(resp, "Location", loc);
			MHD_add_response_header(resp, "Cache-Control", "no-store");
			oxs_reply(r, created ? 201 : 200, resp, e->len);
		}
		oxs_cache_release(e);
	}
	oxs_resume(r);
}

void oxs_upload_adopt(oxs_req *r, int fd, const char *path, const char *datadir,
                      const char *name, uint64_t bytes, oxs_stored_fn on_stored)
{
	oxs_upload *u = calloc(1, sizeof(*u));
	if (u == NULL) {
		close(fd);
		(void)unlink(path);
		if (datadir != NULL)
			oxst_remove_path(datadir);
		oxs_reply_error(r, 503, "out_of_memory", "", "out of memory");
		if (on_stored != NULL)
			on_stored(r, NULL, false);
		oxs_resume(r);
		return;
	}
	u->fd = fd;
	u->dfd = u->dirfd = -1;
	snprintf(u->path, sizeof(u->path), "%s", path);
	u->spooled = true;
	if (datadir != NULL) {
		snprintf(u->dir, sizeof(u->dir), "%s", datadir);
		u->has_dir = true;
	}
	u->store = r->srv->store;
	u->body_bytes = u->model_bytes = bytes;
	u->on_stored = on_stored;
	set_name(u, name, strlen(name));
	r->up = u;
	upload_finish(r);
}

void oxs_upload_adopt_stored(oxs_req *r, const char *name, uint64_t bytes, bool created,
                             oxs_stored_fn on_stored)
{
	oxs_upload *u = calloc(1, sizeof(*u));
	if (u == NULL) {
		oxs_reply_error(r, 503, "out_of_memory", "", "out of memory");
		if (on_stored != NULL)
			on_stored(r, NULL, false);
		oxs_resume(r);
		return;
	}
	u->fd = u->dfd = u->dirfd = -1;
	u->stored = true;
	u->stored_new = created;
	u->store = r->srv->store;
	u->body_bytes = u->model_bytes = bytes;
	u->on_stored = on_stored;
	set_name(u, name, strlen(name));
	r->up = u;
	upload_finish(r);
}

/* True when bucket is one of --source-buckets (comma-separated, spaces ignored). */
static bool source_allowed(const char *list, const char *bucket)
{
	size_t bn = strlen(bucket);
	for (const char *p = list; *p != '\0';) {
		while (*p == ' ' || *p == ',')
			p++;
		size_t n = strcspn(p, ", ");
		if (n == bn && n > 0 && memcmp(p, bucket, n) == 0)
			return true;
		p += n;
	}
	return false;
}

/* The JSON body {"source": "s3://bucket/key"[, "name": "..."]}: into u->src_*, or a
 * failure recorded in u. */
static void parse_source(oxs_server *srv, oxs_upload *u)
{
	json_error_t je;
	json_t *o = json_loadb(u->jbuf, u->jlen, JSON_REJECT_DUPLICATES, &je);
	const char *src = NULL, *key = NULL;
	json_t *v;
	bool ok = json_is_object(o);
	json_object_foreach(ok ? o : NULL, key, v) {
		if (strcmp(key, "source") == 0 && json_is_string(v))
			src = json_string_value(v);
		else if (strcmp(key, "name") == 0 && json_is_string(v))
			set_name(u, json_string_value(v), json_string_length(v));
		else
			ok = false;
	}
	if (!ok || src == NULL) {
		fail(u, 400, "bad_source",
		     "expected {\"source\": \"s3://bucket/key\"} (and an optional \"name\")");
	} else if (!oxst_s3_url_parse(src, u->src_bucket, sizeof(u->src_bucket), u->src_key,
	                              sizeof(u->src_key)) ||
	           u->src_key[0] == '\0') {
		fail(u, 400, "bad_source", "source: expected s3://bucket/key");
	} else if (srv->s3 == NULL || !source_allowed(srv->cfg.source_buckets, u->src_bucket)) {
		fail(u, 403, "source_not_allowed",
		     srv->s3 == NULL ? "registering models by reference is off (--source-buckets)"
		                     : "this bucket is not among --source-buckets");
	} else if (u->name[0] == '\0') {
		set_name(u, u->src_key, strlen(u->src_key));
	}
	json_decref(o);
}

/* Work thread: download the source object into the spool file, hashing it; then on as
 * an upload. */
static void fetch_source(oxs_req *r)
{
	oxs_server *srv = r->srv;
	oxs_upload *u = r->up;
	oxst_s3_req q;
	oxst_s3_req_init(&q, OXST_S3OP_GET, "GET", u->src_bucket, u->src_key);
	q.out_fd = u->fd;
	q.out_sha = true;
	q.out_max = srv->cfg.max_upload;
	oxst_status st = oxst_s3_do(srv->s3, &q);
	unsigned status = 0;
	const char *code = "", *msg = "";
	if (st == OXST_E_NOSPACE && q.length > srv->cfg.max_upload) {
		status = 413, code = "payload_too_large", msg = "the source is larger than --max-upload";
	} else if (st != OXST_OK) {
		status = oxs_store_http_status(st);
		code = status == 507 ? "insufficient_storage" : "source_unavailable";
		msg = "cannot read the source from the object store";
	} else if (q.status == 404 || q.status == 403) {
		status = 422;
		code = q.status == 404 ? "source_not_found" : "source_denied";
		msg = q.status == 404 ? "the object store has no such object"
		                      : "the object store refused to give this object";
	} else if (q.status != 200) {
		status = 503, code = "source_unavailable", msg = "the object store did not give the source";
	}
	if (status != 0) {
		drop_spool(u);
		oxs_metrics_upload(OXS_UP_REJECTED, u->jlen);
		oxs_reply_error(r, status, code, "", "%s", msg);
		oxs_resume(r);
		return;
	}
	u->model_bytes = q.received;
	u->body_bytes = q.received;
	memcpy(r->id, q.sha256, sizeof(r->id));
	upload_finish(r);
}

void oxs_upload_end(oxs_req *r)
{
	oxs_upload *u = r->up;
	if (u->pp != NULL) {
		if (MHD_destroy_post_processor(u->pp) != MHD_YES)
			fail(u, 400, "bad_multipart", "incomplete multipart body");
		u->pp = NULL;
	}
	finish_data(u);
	take_failure(u);
	char gzerr[200];
	if (u->fail_status == 0 && u->gz != NULL && !oxs_gunzip_end(u->gz, gzerr, sizeof(gzerr)))
		fail(u, 400, "bad_encoding", gzerr);
	if (u->fail_status == 0 && u->diff && (!u->got_model || !u->b->got_model))
		fail(u, 400, "bad_multipart", "a diff needs both parts, 'a' and 'b'");
	if (u->fail_status == 0 && u->multipart && !u->got_model)
		fail(u, 400, "bad_multipart", "no 'model' part in the form");
	if (u->fail_status == 0 && u->json)
		parse_source(r->srv, u);
	if (u->fail_status != 0) {
		drop_spool(u);
		if (u->b != NULL)
			drop_spool(u->b);
		oxs_metrics_upload(OXS_UP_REJECTED, u->body_bytes);
		oxs_reply_error(r, u->fail_status, u->fail_code, "", "%s", u->fail_msg);
		return;
	}
	if (u->json) {
		oxs_defer(r, r->srv->work, fetch_source);
		return;
	}
	finish_data(u);
	unsigned char md[32];
	unsigned int n = 0;
	char sha[OXST_ID_LEN + 1];
	bool hashed = EVP_DigestFinal_ex(u->md, md, &n) == 1 && n == 32 &&
	              (oxs_hex(sha, md, 32), oxst_bundle_id(sha, u->model_bytes, u->files, u->nfiles, r->id));
	if (hashed && u->b != NULL)
		hashed = EVP_DigestFinal_ex(u->b->md, md, &n) == 1 && n == 32 &&
		         (oxs_hex(sha, md, 32), oxst_bundle_id(sha, u->b->model_bytes, NULL, 0, u->b_id));
	if (!hashed) {
		drop_spool(u);
		if (u->b != NULL)
			drop_spool(u->b);
		oxs_reply_error(r, 500, "internal", "", "hashing failed");
		return;
	}
	oxs_defer(r, r->srv->work, upload_finish);
}
