/*
 * s3.c — the model store on an S3-compatible object store, shared by any number of
 * replicas (no lock), with a bounded local cache folder in front.
 *
 * Objects under s3://BUCKET/PREFIX/:
 *   models/<id>.onnx          the models, by content id
 *   meta/<id>.json            what was kept at upload (the file's name, graph, producer, ...)
 *   data/<id>/<location>      external data files of a model uploaded with them
 *   blobs/<sha256>            data files of bundles sent resumably (kind data), by SHA-256
 *   uploads/<uid>/state       the state of a resumable transfer (its multipart upload's id)
 *   uploads/<uid>/file        a transfer begun without its id (a model, a data file), until
 *                             copied to its key (models/<id>.onnx, blobs/<sha256>)
 *   renderings/<id>/<name>    cached renderings, documents and tensor statistics
 *   .readyz                   written by /readyz (the store takes a write now)
 *
 * Writes.  Everything is content-addressed, so writes need no coordination between
 * replicas.  A model's data files and meta go up first, the model itself last: a model
 * that can be seen has everything it needs.  Up to --s3-part-size a model is one PUT
 * with "If-None-Match: *" (412: already there, the "200 existing" case) and its SHA-256 in
 * x-amz-content-sha256, which the object store checks before it stores anything; an S3
 * object appears whole or not at all, so no temporary key is needed.  Larger models go
 * up as a multipart upload whose parts are each checked the same way, completed only
 * when a HEAD found no such model.  Ceph RGW 16.2 (measured by tests/s3) honours
 * If-None-Match on PUT — of concurrent conditional PUTs of one new key exactly one
 * succeeds — but ignores it on CompleteMultipartUpload and CopyObject: there a replica
 * racing another may write the same bytes again, which content addressing makes harmless
 * (the header is sent anyway for stores that honour it).  An interrupted multipart upload
 * leaves parts but no object (a lifecycle rule AbortIncompleteMultipartUpload removes them).
 *
 * Reads.  A model is downloaded once into the local cache (a local store under
 * --cache-dir, bounded by a byte budget, least recently used out) and checked on the way:
 * the model's and its data files' SHA-256 must give its id, or nothing is kept and the
 * read fails (no corrupt object is ever parsed).  Renderings are read from the cache or
 * the bucket.  What a replica knows in memory — models seen, their meta, the model count
 * — is a cache: nothing needs invalidating but after a delete (done here, or on another
 * replica: then until the entry leaves).  The cache writes without fsync: the bucket is
 * the durable copy, and after a crash the cache's background verification drops torn
 * files.
 *
 * Failures of the object store (after the client's retries) are OXST_E_UNAVAILABLE, which
 * the service answers 503 with Retry-After; a 404 is only answered when the object store
 * said so.
 */
#include "store/internal.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <openssl/crypto.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#define KNOWN_SLOTS 16384
#define META_SLOTS 4096
#define COUNT_TTL_MS 10000
#define READY_TTL_MS 2000
#define LIST_THREADS 8
#define KEY_MAX 2048
#define UPLOAD_ID_MAX 512 /* bytes of a multipart upload's id, NUL included (AWS: ~170) */

typedef struct known_slot {
	char id[OXST_ID_LEN + 1]; /* "" = empty */
	uint64_t size;
} known_slot;

typedef struct meta_slot {
	char id[OXST_ID_LEN + 1];
	bool has; /* false: the model has no meta object */
	oxst_model_meta meta;
} meta_slot;

/* A transfer's lease this process holds from its last part's UploadPart to its finish (a
 * transfer begun unnamed: see finish_staged): its nonce, as in the state's lease line. */
typedef struct held_lease {
	char uid[OXST_XFER_UID_LEN + 1];
	char nonce[33];
	int64_t until; /* Unix seconds: the lease's end, past it the entry is dropped */
	struct held_lease *next;
} held_lease;

/* A download or an upload of one id in progress in this process. */
typedef struct busy {
	char id[OXST_ID_LEN + 1];
	struct busy *next;
} busy;

typedef struct s3_store {
	oxst_store base;
	oxst_store *cache;
	oxst_s3 *s3;
	char bucket[64];
	char prefix[530]; /* "" or "a/b/" */
	uint64_t part_size, cache_budget;
	uint64_t copy_max, copy_part; /* server-side copies: one CopyObject up to copy_max */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	busy *fetching, *putting;
	held_lease *held; /* guarded by mu */
	known_slot *known;
	meta_slot *metas;
	/* the model count (GET /models "total"), recounted after COUNT_TTL_MS */
	bool count_valid;
	int64_t count_at_ms;
	uint64_t count, count_bytes;
	/* readiness: a thread writes .readyz when asked and the last answer is older than
	 * READY_TTL_MS, so that /readyz answers at once from what it found */
	pthread_t prober;
	bool prober_started, probe_wanted, probe_stop;
	pthread_cond_t probe_cv;
	int64_t ready_at_ms; /* 0: never probed */
	int64_t probe_since_ms; /* 0: no probe running */
	bool ready_ok;
	/* If-Match goes without its quotes: the object store refused the quoted ETag of an
	 * object it still had (Ceph RGW 16.2 compares the bare hex; AWS takes the quoted) */
	atomic_bool if_match_bare;
} s3_store;

/* ---------------------------------------------------------------------------------------
 * Keys and small tables
 */
static bool key_fmt(const s3_store *s, char *out, size_t size, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static bool key_fmt(const s3_store *s, char *out, size_t size, const char *fmt, ...)
{
	int n = snprintf(out, size, "%s", s->prefix);
	if (n < 0 || (size_t)n >= size)
		return false;
	va_list ap;
	va_start(ap, fmt);
	int m = vsnprintf(out + n, size - (size_t)n, fmt, ap);
	va_end(ap);
	return m >= 0 && (size_t)m < size - (size_t)n;
}

/* Ids are SHA-256 digests: their first hex digits spread evenly. */
static size_t slot_of(const char *id, size_t slots)
{
	return (size_t)strtoul((char[9]){id[0], id[1], id[2], id[3], id[4], id[5], id[6], id[7], 0},
	                       NULL, 16) % slots;
}

static void known_add(s3_store *s, const char *id, uint64_t size)
{
	known_slot *k = &s->known[slot_of(id, KNOWN_SLOTS)];
	pthread_mutex_lock(&s->mu);
	memcpy(k->id, id, OXST_ID_LEN + 1);
	k->size = size;
	pthread_mutex_unlock(&s->mu);
}

static bool known_get(s3_store *s, const char *id, uint64_t *size)
{
	known_slot *k = &s->known[slot_of(id, KNOWN_SLOTS)];
	pthread_mutex_lock(&s->mu);
	bool hit = strcmp(k->id, id) == 0;
	if (hit && size != NULL)
		*size = k->size;
	pthread_mutex_unlock(&s->mu);
	return hit;
}

static void forget(s3_store *s, const char *id)
{
	pthread_mutex_lock(&s->mu);
	known_slot *k = &s->known[slot_of(id, KNOWN_SLOTS)];
	if (strcmp(k->id, id) == 0)
		k->id[0] = '\0';
	meta_slot *m = &s->metas[slot_of(id, META_SLOTS)];
	if (strcmp(m->id, id) == 0)
		m->id[0] = '\0';
	s->count_valid = false;
	pthread_mutex_unlock(&s->mu);
}

/* Model id (size bytes) is in the bucket now: known, and the count is stale. */
static void stored_now(s3_store *s, const char *id, uint64_t size)
{
	known_add(s, id, size);
	pthread_mutex_lock(&s->mu);
	s->count_valid = false;
	pthread_mutex_unlock(&s->mu);
}

static void meta_keep(s3_store *s, const char *id, const oxst_model_meta *meta)
{
	pthread_mutex_lock(&s->mu);
	meta_slot *m = &s->metas[slot_of(id, META_SLOTS)];
	memcpy(m->id, id, OXST_ID_LEN + 1);
	m->has = meta != NULL;
	if (meta != NULL)
		m->meta = *meta;
	pthread_mutex_unlock(&s->mu);
}

/* True when the meta of id is known (item->has_meta and item->meta then filled). */
static bool meta_lookup(s3_store *s, oxst_model_info *item)
{
	pthread_mutex_lock(&s->mu);
	meta_slot *m = &s->metas[slot_of(item->id, META_SLOTS)];
	bool hit = strcmp(m->id, item->id) == 0;
	if (hit) {
		item->has_meta = m->has;
		if (m->has)
			item->meta = m->meta;
	}
	pthread_mutex_unlock(&s->mu);
	return hit;
}

/* Wait while id is in *list, then add it (one download or upload of an id at a time). */
static void busy_enter(s3_store *s, busy **list, busy *b, const char *id)
{
	memcpy(b->id, id, OXST_ID_LEN + 1);
	pthread_mutex_lock(&s->mu);
	for (;;) {
		busy *p = *list;
		while (p != NULL && strcmp(p->id, id) != 0)
			p = p->next;
		if (p == NULL)
			break;
		pthread_cond_wait(&s->cv, &s->mu);
	}
	b->next = *list;
	*list = b;
	pthread_mutex_unlock(&s->mu);
}

static void busy_leave(s3_store *s, busy **list, busy *b)
{
	pthread_mutex_lock(&s->mu);
	for (busy **pp = list; *pp != NULL; pp = &(*pp)->next) {
		if (*pp == b) {
			*pp = b->next;
			break;
		}
	}
	pthread_cond_broadcast(&s->cv);
	pthread_mutex_unlock(&s->mu);
}

/* An answer other than the ones a caller handles: the store is not usable now. */
static oxst_status unexpected(const oxst_s3_req *r)
{
	(void)r; /* logged by the client with its status and S3 error code */
	return OXST_E_UNAVAILABLE;
}

/* ---------------------------------------------------------------------------------------
 * Requests
 */
static oxst_status s3_head_etag(s3_store *s, const char *key, uint64_t *size, char etag[96])
{
	oxst_s3_req r;
	oxst_s3_req_init(&r, OXST_S3OP_HEAD, "HEAD", s->bucket, key);
	oxst_status st = oxst_s3_do(s->s3, &r);
	if (st != OXST_OK)
		return st;
	if (r.status == 404)
		return OXST_E_NOT_FOUND;
	if (r.status != 200)
		return unexpected(&r);
	if (size != NULL)
		*size = r.length;
	if (etag != NULL)
		memcpy(etag, r.etag, sizeof(r.etag));
	return OXST_OK;
}

static oxst_status s3_head(s3_store *s, const char *key, uint64_t *size)
{
	return s3_head_etag(s, key, size, NULL);
}

/* PUT body at key on a condition: if_none_match "*" (only when there is none) or if_match
 * (only over the object of that ETag, quotes included).  *refused tells that the condition
 * failed (OXST_OK then).  Some stores (Ceph RGW) compare If-Match with the ETag bare: a
 * 412 while the object's ETag is still the one given is tried once more without the
 * quotes, and the store is remembered as one of those. */
static oxst_status put_conditional(s3_store *s, const char *key, const void *body, size_t len,
                                   const char *if_none_match, const char *if_match,
                                   bool *refused)
{
	char bare[96] = "";
	size_t ml = if_match != NULL ? strlen(if_match) : 0;
	if (ml >= 2 && ml < sizeof(bare) && if_match[0] == '"' && if_match[ml - 1] == '"')
		snprintf(bare, sizeof(bare), "%.*s", (int)(ml - 2), if_match + 1);
	bool use_bare = bare[0] != '\0' && atomic_load(&s->if_match_bare);
	oxst_s3_req r;
	oxst_s3_req_init(&r, OXST_S3OP_PUT, "PUT", s->bucket, key);
	r.body = body;
	r.body_len = len;
	r.if_none_match = if_none_match;
	r.if_match = use_bare ? bare : if_match;
	oxst_status st = oxst_s3_do(s->s3, &r);
	if (st == OXST_OK && r.status == 412 && bare[0] != '\0' && !use_bare) {
		/* refused: another writer, or a store that wants the ETag bare */
		char now[96] = "";
		if (s3_head_etag(s, key, NULL, now) == OXST_OK && strcmp(now, if_match) == 0) {
			oxst_s3_req_init(&r, OXST_S3OP_PUT, "PUT", s->bucket, key);
			r.body = body;
			r.body_len = len;
			r.if_match = bare;
			st = oxst_s3_do(s->s3, &r);
			if (st == OXST_OK && r.status == 200)
				atomic_store(&s->if_match_bare, true);
		}
	}
	bool cond = if_none_match != NULL || if_match != NULL;
	*refused = st == OXST_OK && cond && r.status == 412;
	if (st == OXST_OK && r.status != 200 && !*refused)
		st = unexpected(&r);
	return st;
}

static oxst_status s3_delete(s3_store *s, const char *key)
{
	oxst_s3_req r;
	oxst_s3_req_init(&r, OXST_S3OP_DELETE, "DELETE", s->bucket, key);
	oxst_status st = oxst_s3_do(s->s3, &r);
	if (st != OXST_OK)
		return st;
	return r.status == 204 || r.status == 200 || r.status == 404 ? OXST_OK : unexpected(&r);
}

/* CreateMultipartUpload of key: its id into upload_id (no newline: kept in a state line). */
static oxst_status mpu_create(s3_store *s, const char *key, char upload_id[UPLOAD_ID_MAX])
{
	char query[64];
	const char *kv0[] = {"uploads", NULL};
	if (!oxst_s3_query(query, sizeof(query), kv0, 1))
		return OXST_E_INVALID;
	oxr_buf body;
	oxr_buf_init(&body, 1 << 16);
	oxst_s3_req r;
	oxst_s3_req_init(&r, OXST_S3OP_MULTIPART, "POST", s->bucket, key);
	r.query = query;
	r.out = &body;
	oxst_status st = oxst_s3_do(s->s3, &r);
	const char *p = body.data ? body.data : "";
	if (st == OXST_OK && (r.status != 200 ||
	                      !oxst_xml_next(&p, p + body.len, "UploadId", upload_id, UPLOAD_ID_MAX) ||
	                      strchr(upload_id, '\n') != NULL))
		st = unexpected(&r);
	oxr_buf_free(&body);
	return st;
}

/* UploadPart (query "partNumber=N&uploadId=ID") of size bytes of fd from off: its ETag
 * into etag.  OXST_E_NOT_FOUND: no such upload (aborted). */
static oxst_status mpu_part(s3_store *s, const char *key, const char *query, int fd, uint64_t off,
                            uint64_t size, char etag[96])
{
	oxst_s3_req r;
	oxst_s3_req_init(&r, OXST_S3OP_MULTIPART, "PUT", s->bucket, key);
	r.query = query;
	r.body_fd = fd;
	r.body_off = off;
	r.body_size = size;
	oxst_status st = oxst_s3_do(s->s3, &r);
	if (st == OXST_OK && r.status == 404)
		return OXST_E_NOT_FOUND;
	if (st == OXST_OK && (r.status != 200 || r.etag[0] == '\0'))
		st = r.status == 400 && strcmp(r.code, "XAmzContentSHA256Mismatch") == 0 ? OXST_E_IO
		                                                                         : unexpected(&r);
	if (st == OXST_OK)
		memcpy(etag, r.etag, sizeof(r.etag));
	return st;
}

/* CompleteMultipartUpload (query "uploadId=ID") with the parts listed in done: *created
 * when this made the object.  OXST_E_NOT_FOUND: no such upload. */
static oxst_status mpu_complete(s3_store *s, const char *key, const char *query,
                                const oxr_buf *done, bool *created)
{
	oxr_buf ans;
	oxr_buf_init(&ans, 1 << 16);
	oxst_s3_req r;
	oxst_s3_req_init(&r, OXST_S3OP_MULTIPART, "POST", s->bucket, key);
	r.query = query;
	r.body = done->data;
	r.body_len = done->len;
	r.if_none_match = "*"; /* honoured by AWS S3; ignored by Ceph RGW 16 */
	r.out = &ans;
	oxst_status st = oxst_s3_do(s->s3, &r);
	/* a 200 may still carry an <Error> (the store failed while completing) */
	bool error_body = ans.data != NULL && strstr(ans.data, "<Error>") != NULL;
	if (st == OXST_OK && r.status == 200 && !error_body)
		*created = true;
	else if (st == OXST_OK && r.status == 404)
		st = OXST_E_NOT_FOUND;
	else if (st == OXST_OK && r.status != 412)
		st = unexpected(&r);
	oxr_buf_free(&ans);
	return st;
}

/* One part of mpu_run: bytes [off, off + len) of the object as the part `query` names
 * ("partNumber=N&uploadId=ID"), its ETag into etag.  OXST_E_NOT_FOUND: no such upload. */
typedef oxst_status (*part_fn)(s3_store *s, const char *key, const char *query, uint64_t off,
                               uint64_t len, char etag[128], const void *arg);

/* A multipart upload of key (size bytes in parts of `part`, each made by fn), completed
 * when every part is there, else aborted (best effort: a lifecycle rule removes what
 * stays).  *created: the completion made the object. */
static oxst_status mpu_run(s3_store *s, const char *key, uint64_t size, uint64_t part,
                           part_fn fn, const void *arg, bool *created)
{
	/* query: "partNumber=N&uploadId=ID" with every byte of the ID percent-encoded at
	 * worst; upload: "uploadId=ID", for the completion and the abort */
	char upload_id[UPLOAD_ID_MAX];
	char query[sizeof("partNumber=10000&uploadId=") + 3 * UPLOAD_ID_MAX], upload[sizeof(query)];
	oxst_s3_req r;
	oxst_status st = mpu_create(s, key, upload_id);
	const char *kv1[] = {"uploadId", upload_id};
	if (st == OXST_OK && !oxst_s3_query(upload, sizeof(upload), kv1, 1))
		st = OXST_E_INVALID; /* cannot happen (sized above); left to the lifecycle rule */
	if (st != OXST_OK)
		return st;

	/* the parts, then the completion listing their ETags */
	oxr_buf done;
	oxr_buf_init(&done, 64 << 20);
	oxr_buf_printf(&done, "<CompleteMultipartUpload>");
	uint64_t nparts = (size + part - 1) / part;
	for (uint64_t i = 0; st == OXST_OK && i < nparts; i++) {
		char num[24];
		snprintf(num, sizeof(num), "%" PRIu64, i + 1);
		const char *kv[] = {"partNumber", num, "uploadId", upload_id};
		if (!oxst_s3_query(query, sizeof(query), kv, 2)) {
			st = OXST_E_INVALID;
			break;
		}
		char etag[128] = "";
		uint64_t off = i * part;
		st = fn(s, key, query, off, size - off < part ? size - off : part, etag, arg);
		if (st == OXST_E_NOT_FOUND)
			st = OXST_E_UNAVAILABLE; /* the upload (or a copy's source) vanished under us */
		if (st == OXST_OK)
			oxr_buf_printf(&done, "<Part><PartNumber>%" PRIu64 "</PartNumber><ETag>%s</ETag></Part>",
			               i + 1, etag);
	}
	oxr_buf_printf(&done, "</CompleteMultipartUpload>");
	if (st == OXST_OK && done.failed)
		st = OXST_E_NOMEM;
	if (st == OXST_OK)
		st = mpu_complete(s, key, upload, &done, created);
	if (st == OXST_E_NOT_FOUND)
		st = OXST_E_UNAVAILABLE;
	oxr_buf_free(&done);
	if (st != OXST_OK) {
		oxst_s3_req_init(&r, OXST_S3OP_MULTIPART, "DELETE", s->bucket, key);
		r.query = upload;
		(void)oxst_s3_do(s->s3, &r);
	}
	return st;
}

/* mpu_run's parts of a file: arg points at its fd. */
static oxst_status put_part(s3_store *s, const char *key, const char *query, uint64_t off,
                            uint64_t len, char etag[128], const void *arg)
{
	char tag[96];
	oxst_status st = mpu_part(s, key, query, *(const int *)arg, off, len, tag);
	if (st == OXST_OK)
		memcpy(etag, tag, sizeof(tag));
	return st;
}

/* Upload body_size bytes of fd from 0 as key: one conditional PUT, or a multipart upload
 * above the part size (after a HEAD found nothing there).  *created false: it was there. */
static oxst_status s3_put_file(s3_store *s, const char *key, int fd, uint64_t size,
                               const char *sha, bool *created)
{
	*created = false;
	if (size <= s->part_size) {
		oxst_s3_req r;
		oxst_s3_req_init(&r, OXST_S3OP_PUT, "PUT", s->bucket, key);
		r.body_fd = fd;
		r.body_size = size;
		r.body_sha256 = sha;
		r.if_none_match = "*";
		oxst_status st = oxst_s3_do(s->s3, &r);
		if (st != OXST_OK)
			return st;
		if (r.status == 412)
			return OXST_OK;
		if (r.status == 200) {
			*created = true;
			return OXST_OK;
		}
		if (r.status == 400 && strcmp(r.code, "XAmzContentSHA256Mismatch") == 0)
			return OXST_E_IO; /* the bytes changed between hashing and sending */
		return unexpected(&r);
	}
	oxst_status st = s3_head(s, key, NULL);
	if (st == OXST_OK)
		return OXST_OK;
	if (st != OXST_E_NOT_FOUND)
		return st;

	uint64_t part = oxst_s3_part_for(size, s->part_size);
	return mpu_run(s, key, size, part, put_part, &fd, created);
}

/* One page of ListObjectsV2 under prefix (after start_after, "" = from the start; at
 * most maxkeys): each(arg, key, size, modified) for every object, until it says false;
 * token: in, the page to read ("" = the first); out, the next one ("" = none). */
typedef bool (*list_fn)(void *arg, const char *key, uint64_t size, int64_t modified);

static oxst_status list_page(s3_store *s, const char *prefix, const char *start_after,
                             size_t maxkeys, char *token, size_t tsize, list_fn each, void *arg)
{
	char query[4096], key[KEY_MAX], mk[24];
	snprintf(mk, sizeof(mk), "%zu", maxkeys < 1000 ? maxkeys : (size_t)1000);
	const char *kv[8] = {"list-type", "2", "prefix", prefix, "max-keys", mk, NULL, NULL};
	size_t nkv = 3;
	if (token[0] != '\0') {
		kv[6] = "continuation-token";
		kv[7] = token;
		nkv = 4;
	} else if (start_after[0] != '\0') {
		kv[6] = "start-after";
		kv[7] = start_after;
		nkv = 4;
	}
	if (!oxst_s3_query(query, sizeof(query), kv, nkv))
		return OXST_E_INVALID;
	oxr_buf body;
	oxr_buf_init(&body, 16 << 20);
	oxst_s3_req r;
	oxst_s3_req_init(&r, OXST_S3OP_LIST, "GET", s->bucket, "");
	r.query = query;
	r.out = &body;
	oxst_status st = oxst_s3_do(s->s3, &r);
	if (st == OXST_OK && r.status != 200)
		st = unexpected(&r);
	const char *p = body.data ? body.data : "", *end = p + body.len, *a, *z;
	bool more = st == OXST_OK;
	while (more && oxst_xml_element(&p, end, "Contents", &a, &z)) {
		char size[32] = "", modified[64] = "";
		const char *q = a;
		if (!oxst_xml_next(&q, z, "Key", key, sizeof(key)))
			continue;
		q = a;
		(void)oxst_xml_next(&q, z, "Size", size, sizeof(size));
		q = a;
		(void)oxst_xml_next(&q, z, "LastModified", modified, sizeof(modified));
		more = each(arg, key, strtoull(size, NULL, 10), oxst_iso8601(modified));
	}
	char trunc[8] = "";
	p = body.data ? body.data : "";
	(void)oxst_xml_next(&p, end, "IsTruncated", trunc, sizeof(trunc));
	p = body.data ? body.data : "";
	if (st != OXST_OK || !more || strcmp(trunc, "true") != 0 ||
	    !oxst_xml_next(&p, end, "NextContinuationToken", token, tsize))
		token[0] = '\0';
	oxr_buf_free(&body);
	return st;
}

typedef struct key_list {
	char **keys;
	size_t n, cap, max;
	bool failed;
} key_list;

static bool collect_key(void *arg, const char *key, uint64_t size, int64_t modified)
{
	key_list *l = arg;
	(void)size, (void)modified;
	if (l->n == l->cap) {
		size_t nc = l->cap ? l->cap * 2 : 64;
		char **v = realloc(l->keys, nc * sizeof(*v));
		if (v == NULL) {
			l->failed = true;
			return false;
		}
		l->keys = v;
		l->cap = nc;
	}
	if ((l->keys[l->n] = strdup(key)) == NULL) {
		l->failed = true;
		return false;
	}
	l->n++;
	return l->n < l->max;
}

/* Every key under prefix (full keys, into *keys: n of them, the caller frees both the
 * array and the strings); at most max. */
static oxst_status s3_list_all(s3_store *s, const char *prefix, char ***keys, size_t *n,
                               size_t max)
{
	key_list l = {NULL, 0, 0, max, false};
	char token[1100] = "";
	oxst_status st;
	do
		st = list_page(s, prefix, "", 1000, token, sizeof(token), collect_key, &l);
	while (st == OXST_OK && !l.failed && token[0] != '\0');
	if (st == OXST_OK && l.failed)
		st = OXST_E_NOMEM;
	if (st != OXST_OK) {
		for (size_t i = 0; i < l.n; i++)
			free(l.keys[i]);
		free(l.keys);
		l.keys = NULL;
		l.n = 0;
	}
	*keys = l.keys;
	*n = l.n;
	return st;
}

static void free_keys(char **keys, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(keys[i]);
	free(keys);
}

/* Delete every key under prefix. */
static oxst_status s3_delete_prefix(s3_store *s, const char *prefix)
{
	char **keys;
	size_t n;
	oxst_status st = s3_list_all(s, prefix, &keys, &n, SIZE_MAX);
	for (size_t i = 0; st == OXST_OK && i < n; i++)
		st = s3_delete(s, keys[i]);
	free_keys(keys, n);
	return st;
}

/* meta/<id>.json into *out (*has: found and well-formed); its ETag into etag when given
 * ("" when none was found). */
static oxst_status fetch_meta(s3_store *s, const char *id, oxst_model_meta *out, bool *has,
                              char etag[96])
{
	char key[KEY_MAX];
	if (!key_fmt(s, key, sizeof(key), "meta/%s.json", id))
		return OXST_E_INVALID;
	oxr_buf body;
	oxr_buf_init(&body, 8192);
	oxst_s3_req r;
	oxst_s3_req_init(&r, OXST_S3OP_GET, "GET", s->bucket, key);
	r.out = &body;
	oxst_status st = oxst_s3_do(s->s3, &r);
	*has = false;
	if (st == OXST_E_NOSPACE)
		st = OXST_OK; /* a meta object too large to be ours: none */
	else if (st == OXST_OK && r.status == 200)
		*has = oxst_meta_parse(body.data ? body.data : "", body.len, out);
	else if (st == OXST_OK && r.status != 404)
		st = unexpected(&r);
	if (etag != NULL) {
		etag[0] = '\0';
		if (*has)
			memcpy(etag, r.etag, sizeof(r.etag));
	}
	oxr_buf_free(&body);
	return st;
}

/* ---------------------------------------------------------------------------------------
 * Downloads into the local cache
 */
static void close_unlink(int fd, const char *path)
{
	if (fd >= 0)
		close(fd);
	if (path != NULL && path[0] != '\0')
		(void)unlink(path);
}

/* The data files of id (data/<id>/...) into a new spool folder of the cache: *dir (""
 * when the model has none), their list in *files and *n (the caller frees).  Together
 * they take at most `budget` bytes (what the cache has left beside the model): more is
 * OXST_E_NOSPACE, found while downloading (a download stops at what is left). */
static oxst_status fetch_data(s3_store *s, const char *id, uint64_t budget, char *dir,
                              size_t dirsize, oxst_bundle_file **files, size_t *n)
{
	char prefix[KEY_MAX];
	dir[0] = '\0';
	*files = NULL;
	*n = 0;
	if (!key_fmt(s, prefix, sizeof(prefix), "data/%s/", id))
		return OXST_E_INVALID;
	char **keys;
	size_t nkeys;
	oxst_status st = s3_list_all(s, prefix, &keys, &nkeys, 4097);
	if (st != OXST_OK || nkeys == 0) {
		if (st == OXST_OK)
			free(keys);
		return st;
	}
	int dfd = -1;
	if (nkeys > 4096 || (*files = calloc(nkeys, sizeof(**files))) == NULL)
		st = nkeys > 4096 ? OXST_E_IO : OXST_E_NOMEM;
	else if ((st = s->cache->ops->spool_dir(s->cache, dir, dirsize)) == OXST_OK &&
	         (dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
		st = OXST_E_IO;
	size_t plen = strlen(prefix);
	for (size_t i = 0; st == OXST_OK && i < nkeys; i++) {
		const char *loc = keys[i] + plen;
		const char *rule;
		int e = 0;
		if (strncmp(keys[i], prefix, plen) != 0 || !oxst_location_valid(loc, &rule)) {
			st = OXST_E_IO; /* not something this store wrote */
			break;
		}
		int f = oxst_create_beneath(dfd, loc, &e);
		if (f < 0) {
			st = e == ENOSPC ? OXST_E_NOSPACE : OXST_E_IO;
			break;
		}
		oxst_s3_req r;
		oxst_s3_req_init(&r, OXST_S3OP_GET, "GET", s->bucket, keys[i]);
		r.out_fd = f;
		r.out_sha = true;
		r.out_max = budget > 0 ? budget : 1; /* 0 would be no limit: 1 byte is too many */
		st = oxst_s3_do(s->s3, &r);
		if (st == OXST_OK && r.status != 200)
			st = r.status == 404 ? OXST_E_UNAVAILABLE : unexpected(&r); /* deleted meanwhile */
		if (st == OXST_OK && r.received > budget)
			st = OXST_E_NOSPACE;
		if (st == OXST_OK)
			budget -= r.received;
		close(f);
		if (st == OXST_OK) {
			oxst_bundle_file *bf = &(*files)[(*n)++];
			snprintf(bf->location, sizeof(bf->location), "%s", loc);
			bf->size = r.received;
			memcpy(bf->sha256, r.sha256, sizeof(bf->sha256));
		}
	}
	if (dfd >= 0)
		close(dfd);
	free_keys(keys, nkeys);
	if (st != OXST_OK && dir[0] != '\0') {
		oxst_remove_path(dir);
		dir[0] = '\0';
	}
	return st;
}

/* Download model id (and its data files and meta) into the local cache, checking that it
 * hashes to its id. */
static oxst_status download(s3_store *s, const char *id)
{
	oxst_store *c = s->cache;
	char key[KEY_MAX], path[PATH_MAX], dir[PATH_MAX] = "";
	int fd = -1;
	if (!key_fmt(s, key, sizeof(key), "models/%s.onnx", id))
		return OXST_E_INVALID;
	oxst_status st = c->ops->spool(c, &fd, path, sizeof(path));
	if (st != OXST_OK)
		return st;
	oxst_s3_req r;
	oxst_s3_req_init(&r, OXST_S3OP_GET, "GET", s->bucket, key);
	r.out_fd = fd;
	r.out_sha = true;
	r.out_max = s->cache_budget;
	st = oxst_s3_do(s->s3, &r);
	if (st == OXST_OK && r.status == 404)
		st = OXST_E_NOT_FOUND;
	else if (st == OXST_OK && r.status != 200)
		st = unexpected(&r);
	oxst_bundle_file *files = NULL;
	size_t nfiles = 0;
	if (st == OXST_OK) /* the model and its data must fit the cache together */
		st = fetch_data(s, id, s->cache_budget - r.received, dir, sizeof(dir), &files, &nfiles);
	char bid[OXST_ID_LEN + 1];
	if (st == OXST_OK && (!oxst_bundle_id(r.sha256, r.received, files, nfiles, bid) ||
	                      strcmp(bid, id) != 0)) {
		char extra[OXST_ID_LEN + 40];
		snprintf(extra, sizeof(extra), ",\"id\":\"%s\",\"bucket\":true", id);
		oxst_log("error", "stored model does not match its id: not served", extra);
		st = OXST_E_IO;
	}
	free(files);
	oxst_model_meta meta;
	bool has_meta = false;
	if (st == OXST_OK && fetch_meta(s, id, &meta, &has_meta, NULL) == OXST_OK) {
		meta_keep(s, id, has_meta ? &meta : NULL);
		if (has_meta)
			(void)c->ops->put_meta(c, id, &meta);
	}
	if (st == OXST_OK && dir[0] != '\0') {
		st = c->ops->put_data(c, id, dir);
		if (st == OXST_OK)
			dir[0] = '\0';
	}
	bool created = false;
	if (st == OXST_OK) {
		st = c->ops->put_model(c, id, path, fd, &created);
		if (st == OXST_OK)
			path[0] = '\0'; /* moved (or dropped: already cached) */
	}
	if (st == OXST_OK)
		known_add(s, id, r.received);
	if (dir[0] != '\0')
		oxst_remove_path(dir);
	close_unlink(fd, path);
	return st;
}

/* OXST_OK once model id is in the local cache (downloaded now when it was not). */
static oxst_status ensure_local(s3_store *s, const char *id)
{
	if (!oxst_id_valid(id))
		return OXST_E_NOT_FOUND;
	oxst_store *c = s->cache;
	if (c->ops->stat_model(c, id, 0, NULL) == OXST_OK)
		return OXST_OK;
	busy b;
	busy_enter(s, &s->fetching, &b, id);
	/* another thread may have brought it meanwhile */
	oxst_status st = c->ops->stat_model(c, id, 0, NULL);
	if (st != OXST_OK)
		st = download(s, id);
	busy_leave(s, &s->fetching, &b);
	return st;
}

/* ---------------------------------------------------------------------------------------
 * Operations
 */
static oxst_status op_spool(oxst_store *base, int *fd, char *path, size_t pathsize)
{
	s3_store *s = (s3_store *)base;
	return s->cache->ops->spool(s->cache, fd, path, pathsize);
}

static oxst_status op_spool_dir(oxst_store *base, char *path, size_t pathsize)
{
	s3_store *s = (s3_store *)base;
	return s->cache->ops->spool_dir(s->cache, path, pathsize);
}

static oxst_status op_stat_model(oxst_store *base, const char *id, unsigned flags,
                                 uint64_t *size)
{
	s3_store *s = (s3_store *)base;
	if (!oxst_id_valid(id))
		return OXST_E_NOT_FOUND;
	oxst_store *c = s->cache;
	if (!(flags & OXST_STAT_FRESH)) {
		if (c->ops->stat_model(c, id, OXST_STAT_NONBLOCK, size) == OXST_OK ||
		    known_get(s, id, size))
			return OXST_OK;
		if (flags & OXST_STAT_NONBLOCK)
			return OXST_E_AGAIN;
	}
	char key[KEY_MAX];
	uint64_t sz = 0;
	if (!key_fmt(s, key, sizeof(key), "models/%s.onnx", id))
		return OXST_E_INVALID;
	oxst_status st = s3_head(s, key, &sz);
	if (st == OXST_OK) {
		known_add(s, id, sz);
		if (size != NULL)
			*size = sz;
	} else if (st == OXST_E_NOT_FOUND) {
		/* deleted through another replica: not ours to serve from the cache either */
		forget(s, id);
		(void)c->ops->delete_model(c, id);
	}
	return st;
}

/* Write meta/<id>.json conditionally: over nothing (if_match NULL: the first upload's
 * meta stays) or over the version whose ETag is if_match.  *written: this write won (a
 * lost condition, 412, is OXST_OK with *written false); the bucket's meta is then known. */
static oxst_status put_meta_object(s3_store *s, const char *id, const oxst_model_meta *meta,
                                   const char *if_match, bool *written)
{
	char key[KEY_MAX];
	*written = false;
	if (!oxst_id_valid(id) || !key_fmt(s, key, sizeof(key), "meta/%s.json", id))
		return OXST_E_INVALID;
	oxr_buf b;
	oxr_buf_init(&b, 1 << 16);
	if (!oxst_meta_json(&b, meta)) {
		oxr_buf_free(&b);
		return OXST_E_NOMEM;
	}
	bool refused = false;
	oxst_status st = put_conditional(s, key, b.data, b.len, if_match != NULL ? NULL : "*",
	                                 if_match, &refused);
	oxr_buf_free(&b);
	if (st == OXST_OK && !refused) {
		*written = true;
		meta_keep(s, id, meta);
	}
	return st;
}

static oxst_status op_put_meta(oxst_store *base, const char *id, const oxst_model_meta *meta)
{
	s3_store *s = (s3_store *)base;
	bool written;
	oxst_status st = put_meta_object(s, id, meta, NULL, &written);
	if (written)
		(void)s->cache->ops->put_meta(s->cache, id, meta);
	return st;
}

/* The bucket's meta object is replaced only over the version read (If-Match on its
 * ETag): a filler that lost the race to another (412) leaves that one's name. */
static oxst_status op_name_meta(oxst_store *base, const char *id, const char *name)
{
	s3_store *s = (s3_store *)base;
	if (!oxst_id_valid(id) || name == NULL || name[0] == '\0' || strlen(name) >= OXST_META_STR)
		return OXST_E_INVALID;
	oxst_model_meta meta;
	memset(&meta, 0, sizeof(meta));
	bool has = false, written = false;
	char etag[96];
	oxst_status st = fetch_meta(s, id, &meta, &has, etag);
	if (st == OXST_OK && !has)
		st = OXST_E_NOT_FOUND;
	else if (st == OXST_OK && etag[0] == '\0')
		st = OXST_E_IO;
	if (st != OXST_OK || meta.name[0] != '\0') /* named already: the first name stays */
		return st;
	snprintf(meta.name, sizeof(meta.name), "%s", name);
	st = put_meta_object(s, id, &meta, etag, &written);
	if (written)
		(void)s->cache->ops->name_meta(s->cache, id, name);
	return st;
}

static oxst_status op_put_data(oxst_store *base, const char *id, const char *spool_dir)
{
	s3_store *s = (s3_store *)base;
	oxst_bundle_file *files = NULL;
	size_t n = 0;
	if (!oxst_id_valid(id))
		return OXST_E_INVALID;
	if (!oxst_data_files(spool_dir, &files, &n, NULL))
		return OXST_E_IO;
	int dfd = open(spool_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	oxst_status st = dfd >= 0 ? OXST_OK : OXST_E_IO;
	for (size_t i = 0; st == OXST_OK && i < n; i++) {
		char key[KEY_MAX];
		bool created;
		int f = openat(dfd, files[i].location, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
		if (f < 0 || !key_fmt(s, key, sizeof(key), "data/%s/%s", id, files[i].location))
			st = OXST_E_IO;
		else
			st = s3_put_file(s, key, f, files[i].size, files[i].sha256, &created);
		if (f >= 0)
			close(f);
	}
	if (dfd >= 0)
		close(dfd);
	free(files);
	if (st != OXST_OK)
		return st;
	/* in the bucket now; the local cache keeps the folder (moves it) */
	return s->cache->ops->put_data(s->cache, id, spool_dir);
}

static oxst_status op_put_model(oxst_store *base, const char *id, const char *spool_path, int fd,
                                bool *created)
{
	s3_store *s = (s3_store *)base;
	char key[KEY_MAX];
	struct stat st_;
	if (!oxst_id_valid(id) || !key_fmt(s, key, sizeof(key), "models/%s.onnx", id))
		return OXST_E_INVALID;
	if (fstat(fd, &st_) != 0)
		return OXST_E_IO;
	uint64_t size = (uint64_t)st_.st_size;
	if (size > s->cache_budget)
		return OXST_E_NOSPACE; /* no replica could ever hold it to read it */
	busy b;
	busy_enter(s, &s->putting, &b, id);
	oxst_status st = s3_put_file(s, key, fd, size, NULL, created);
	busy_leave(s, &s->putting, &b);
	if (st != OXST_OK)
		return st;
	stored_now(s, id, size);
	/* the spool becomes the local copy (when the cache has room; else it goes) */
	bool local = false;
	if (s->cache->ops->put_model(s->cache, id, spool_path, fd, &local) != OXST_OK)
		(void)unlink(spool_path);
	return OXST_OK;
}

/* A read of the cached copy of model id: `what` 0 opens the model, 1 gives its path, 2
 * opens its data folder.  The model is brought into the cache first; when the cache let it
 * go before the read (a budget too small for what is in use at once), again — a model
 * that is in the bucket is never answered "not found". */
static oxst_status cached_read(s3_store *s, const char *id, int what, int *fd, uint64_t *size,
                               char *path, size_t pathsize)
{
	oxst_store *c = s->cache;
	for (int attempt = 0; attempt < 3; attempt++) {
		oxst_status st = ensure_local(s, id);
		if (st != OXST_OK)
			return st;
		st = what == 0   ? c->ops->open_model(c, id, fd, size)
		     : what == 1 ? c->ops->model_path(c, id, path, pathsize)
		                 : c->ops->open_data(c, id, fd);
		if (st != OXST_E_NOT_FOUND)
			return st;
		if (what == 2 && c->ops->stat_model(c, id, 0, NULL) == OXST_OK)
			return st; /* the model is there: it has no data folder */
	}
	return OXST_E_NOSPACE;
}

static oxst_status op_open_model(oxst_store *base, const char *id, int *fd, uint64_t *size)
{
	return cached_read((s3_store *)base, id, 0, fd, size, NULL, 0);
}

static oxst_status op_model_path(oxst_store *base, const char *id, char *path, size_t pathsize)
{
	return cached_read((s3_store *)base, id, 1, NULL, NULL, path, pathsize);
}

static oxst_status op_open_data(oxst_store *base, const char *id, int *dirfd)
{
	return cached_read((s3_store *)base, id, 2, dirfd, NULL, NULL, 0);
}

/* Listing: the meta of the items that have none cached, fetched by a few threads. */
typedef struct meta_fetch {
	s3_store *s;
	oxst_model_info *items;
	size_t n;
	atomic_size_t next;
} meta_fetch;

static void *meta_worker(void *arg)
{
	meta_fetch *j = arg;
	for (;;) {
		size_t i = atomic_fetch_add(&j->next, 1);
		if (i >= j->n)
			return NULL;
		oxst_model_info *it = &j->items[i];
		if (meta_lookup(j->s, it))
			continue;
		bool has = false;
		if (fetch_meta(j->s, it->id, &it->meta, &has, NULL) == OXST_OK) {
			it->has_meta = has;
			meta_keep(j->s, it->id, has ? &it->meta : NULL);
		}
	}
}

static void fill_meta(s3_store *s, oxst_model_info *items, size_t n)
{
	meta_fetch j = {s, items, n, 0};
	size_t missing = 0;
	for (size_t i = 0; i < n; i++)
		missing += !meta_lookup(s, &items[i]);
	if (missing == 0)
		return;
	pthread_t th[LIST_THREADS];
	size_t nth = 0;
	for (; nth < LIST_THREADS && nth + 1 < missing; nth++)
		if (pthread_create(&th[nth], NULL, meta_worker, &j) != 0)
			break;
	meta_worker(&j);
	for (size_t i = 0; i < nth; i++)
		pthread_join(th[i], NULL);
}

/* The model count and bytes: recounted by a full listing after COUNT_TTL_MS. */
static bool count_key(void *arg, const char *key, uint64_t size, int64_t modified)
{
	uint64_t *nb = arg;
	(void)key, (void)modified;
	nb[0]++;
	nb[1] += size;
	return true;
}

static oxst_status model_count(s3_store *s, uint64_t *count)
{
	pthread_mutex_lock(&s->mu);
	bool fresh = s->count_valid && oxst_now_ms() - s->count_at_ms < COUNT_TTL_MS;
	*count = s->count;
	pthread_mutex_unlock(&s->mu);
	if (fresh)
		return OXST_OK;
	char prefix[KEY_MAX], token[1100] = "";
	if (!key_fmt(s, prefix, sizeof(prefix), "models/"))
		return OXST_E_INVALID;
	uint64_t nb[2] = {0, 0};
	oxst_status st;
	do
		st = list_page(s, prefix, "", 1000, token, sizeof(token), count_key, nb);
	while (st == OXST_OK && token[0] != '\0');
	if (st != OXST_OK)
		return st;
	pthread_mutex_lock(&s->mu);
	s->count = nb[0];
	s->count_bytes = nb[1];
	s->count_valid = true;
	s->count_at_ms = oxst_now_ms();
	pthread_mutex_unlock(&s->mu);
	*count = nb[0];
	return OXST_OK;
}

/* Listing: models/<id>.onnx keys into items. */
typedef struct model_page {
	oxst_model_info *out;
	size_t n, max, plen;
} model_page;

static bool add_model(void *arg, const char *key, uint64_t size, int64_t modified)
{
	model_page *pg = arg;
	size_t kl = strlen(key);
	if (kl != pg->plen + OXST_ID_LEN + 5 || strcmp(key + kl - 5, ".onnx") != 0)
		return true; /* not a model of ours */
	oxst_model_info *it = &pg->out[pg->n];
	memset(it, 0, sizeof(*it));
	memcpy(it->id, key + pg->plen, OXST_ID_LEN);
	it->id[OXST_ID_LEN] = '\0';
	if (!oxst_id_valid(it->id))
		return true;
	it->size = size;
	it->created = modified > 0 ? modified : 0;
	pg->n++;
	return pg->n < pg->max;
}

static oxst_status op_list(oxst_store *base, const char *after, oxst_model_info *out, size_t max,
                           size_t *n, uint64_t *total)
{
	s3_store *s = (s3_store *)base;
	char prefix[KEY_MAX], start[KEY_MAX], token[1100] = "";
	*n = 0;
	if (!key_fmt(s, prefix, sizeof(prefix), "models/") ||
	    !key_fmt(s, start, sizeof(start), "models/%s.onnx", after ? after : ""))
		return OXST_E_INVALID;
	model_page pg = {out, 0, max, strlen(prefix)};
	if (after == NULL || after[0] == '\0')
		start[0] = '\0';
	oxst_status st = OXST_OK;
	do
		st = list_page(s, prefix, start, max - pg.n, token, sizeof(token), add_model, &pg);
	while (st == OXST_OK && pg.n < max && token[0] != '\0');
	*n = pg.n;
	if (st != OXST_OK)
		return st;
	fill_meta(s, out, *n);
	if (total != NULL) {
		st = model_count(s, total);
		if (st == OXST_OK && *total < *n)
			*total = *n; /* counted before a recent upload elsewhere */
	}
	return st;
}

static oxst_status op_delete(oxst_store *base, const char *id)
{
	s3_store *s = (s3_store *)base;
	char key[KEY_MAX], prefix[KEY_MAX];
	if (!oxst_id_valid(id) || !key_fmt(s, key, sizeof(key), "models/%s.onnx", id))
		return OXST_E_NOT_FOUND;
	oxst_status st = s3_head(s, key, NULL);
	if (st == OXST_E_NOT_FOUND) {
		forget(s, id);
		(void)s->cache->ops->delete_model(s->cache, id);
	}
	if (st != OXST_OK)
		return st;
	/* the model first: from now on it is gone for every replica */
	st = s3_delete(s, key);
	forget(s, id);
	(void)s->cache->ops->delete_model(s->cache, id);
	if (st == OXST_OK && key_fmt(s, key, sizeof(key), "meta/%s.json", id))
		st = s3_delete(s, key);
	if (st == OXST_OK && key_fmt(s, prefix, sizeof(prefix), "data/%s/", id))
		st = s3_delete_prefix(s, prefix);
	if (st == OXST_OK && key_fmt(s, prefix, sizeof(prefix), "renderings/%s/", id))
		st = s3_delete_prefix(s, prefix);
	return st;
}

static oxst_status op_get_rendering(oxst_store *base, const char *id, const char *name, int *fd,
                                    uint64_t *size)
{
	s3_store *s = (s3_store *)base;
	oxst_store *c = s->cache;
	oxst_status st = c->ops->get_rendering(c, id, name, fd, size);
	if (st == OXST_OK || st == OXST_E_INVALID)
		return st;
	/* only renderings of a model that is there (none of one deleted meanwhile) */
	st = op_stat_model(base, id, 0, NULL);
	if (st != OXST_OK)
		return st;
	char key[KEY_MAX], path[PATH_MAX];
	if (!key_fmt(s, key, sizeof(key), "renderings/%s/%s", id, name))
		return OXST_E_INVALID;
	int f = -1;
	st = c->ops->spool(c, &f, path, sizeof(path));
	if (st != OXST_OK)
		return st;
	oxst_s3_req r;
	oxst_s3_req_init(&r, OXST_S3OP_GET, "GET", s->bucket, key);
	r.out_fd = f;
	r.out_max = s->cache_budget;
	st = oxst_s3_do(s->s3, &r);
	(void)unlink(path); /* the open file is the answer */
	if (st == OXST_OK && r.status == 404)
		st = OXST_E_NOT_FOUND;
	else if (st == OXST_OK && r.status != 200)
		st = unexpected(&r);
	if (st != OXST_OK) {
		close(f);
		return st;
	}
	/* keep it in the cache as well when the model is there and it is not big */
	if (r.received <= (16u << 20) && c->ops->stat_model(c, id, OXST_STAT_NONBLOCK, NULL) == OXST_OK) {
		char *data = oxst_read_all(f, r.received);
		if (data != NULL)
			(void)c->ops->put_rendering(c, id, name, data, (size_t)r.received);
		free(data);
	}
	*fd = f;
	*size = r.received;
	return OXST_OK;
}

static oxst_status op_put_rendering(oxst_store *base, const char *id, const char *name,
                                    const void *data, size_t len)
{
	s3_store *s = (s3_store *)base;
	char key[KEY_MAX];
	if (!oxst_id_valid(id) || !key_fmt(s, key, sizeof(key), "renderings/%s/%s", id, name))
		return OXST_E_INVALID;
	oxst_s3_req r;
	oxst_s3_req_init(&r, OXST_S3OP_PUT, "PUT", s->bucket, key);
	r.body = data;
	r.body_len = len;
	oxst_status st = oxst_s3_do(s->s3, &r);
	if (st == OXST_OK && r.status != 200)
		st = unexpected(&r);
	oxst_status cs = s->cache->ops->put_rendering(s->cache, id, name, data, len);
	(void)cs; /* the cache keeps it when it has the model and room */
	return st;
}

static void op_stats(oxst_store *base, oxst_stats *out)
{
	s3_store *s = (s3_store *)base;
	s->cache->ops->stats(s->cache, out);
	pthread_mutex_lock(&s->mu);
	if (s->count_valid) {
		/* the bucket's models as last counted; renderings are the cache's */
		out->models = s->count;
		out->model_bytes = s->count_bytes;
	}
	pthread_mutex_unlock(&s->mu);
}

static void *prober_main(void *arg)
{
	s3_store *s = arg;
	char key[KEY_MAX];
	bool named = key_fmt(s, key, sizeof(key), ".readyz");
	pthread_mutex_lock(&s->mu);
	for (;;) {
		while (!s->probe_wanted && !s->probe_stop)
			pthread_cond_wait(&s->probe_cv, &s->mu);
		if (s->probe_stop)
			break;
		s->probe_since_ms = oxst_now_ms();
		pthread_mutex_unlock(&s->mu);
		oxst_s3_req r;
		oxst_s3_req_init(&r, OXST_S3OP_PUT, "PUT", s->bucket, key);
		r.body = "ok\n";
		r.body_len = 3;
		bool ok = named && oxst_s3_do(s->s3, &r) == OXST_OK && r.status == 200;
		pthread_mutex_lock(&s->mu);
		s->ready_ok = ok;
		s->ready_at_ms = oxst_now_ms();
		s->probe_since_ms = 0;
		s->probe_wanted = false;
		pthread_cond_broadcast(&s->probe_cv);
	}
	pthread_mutex_unlock(&s->mu);
	return NULL;
}

/* Readiness without waiting on the network: the last probe's answer, a new probe asked
 * for when it is older than READY_TTL_MS (only the very first call waits for one). */
static bool op_writable(oxst_store *base)
{
	s3_store *s = (s3_store *)base;
	pthread_mutex_lock(&s->mu);
	if (s->ready_at_ms == 0 || oxst_now_ms() - s->ready_at_ms >= READY_TTL_MS) {
		s->probe_wanted = true;
		pthread_cond_broadcast(&s->probe_cv);
	}
	while (s->ready_at_ms == 0 && s->prober_started)
		pthread_cond_wait(&s->probe_cv, &s->mu);
	/* a probe that hangs says more than the last answer */
	bool ok = s->ready_ok &&
	          (s->probe_since_ms == 0 || oxst_now_ms() - s->probe_since_ms < READY_TTL_MS);
	pthread_mutex_unlock(&s->mu);
	return ok && s->cache->ops->writable(s->cache);
}

static void op_close(oxst_store *base)
{
	s3_store *s = (s3_store *)base;
	if (s->prober_started) {
		oxst_s3_cancel(s->s3); /* a probe waiting on a hung store ends now */
		pthread_mutex_lock(&s->mu);
		s->probe_stop = true;
		pthread_cond_broadcast(&s->probe_cv);
		pthread_mutex_unlock(&s->mu);
		pthread_join(s->prober, NULL);
	}
	pthread_cond_destroy(&s->probe_cv);
	if (s->cache != NULL)
		s->cache->ops->close(s->cache);
	while (s->held != NULL) {
		held_lease *h = s->held;
		s->held = h->next;
		free(h);
	}
	oxst_s3_free(s->s3);
	free(s->known);
	free(s->metas);
	pthread_cond_destroy(&s->cv);
	pthread_mutex_destroy(&s->mu);
	free(s);
}

/* ---------------------------------------------------------------------------------------
 * Resumable transfers (docs/decisions.md): a model's transfer is a multipart upload to the
 * key the model will have (models/<id>.onnx), created with the transfer, one UploadPart
 * per part; its state is the object uploads/<uid>/state (oxst_xfer_text, the upload's id
 * in backend), written after each part, so that any replica takes the next part.  The
 * last part: ListParts, then CompleteMultipartUpload, after the caller checked the whole
 * hash.  A bundle's data file (kind data) goes the same way to blobs/<sha256>, kept
 * there by its SHA-256 until a manifest (kind bundle, whose upload goes to blobs/<id>
 * and is read back at its end) makes the bundle by server-side copies (op_put_bundle).
 * A transfer begun unnamed (a model or a data file; decision 97; x->staged) goes to a key
 * of its own, uploads/<uid>/file, instead: at its end the claim its bytes were checked
 * against is written into the state, the upload completed there and copied server-side
 * to the model's key or the blob's (finish_staged), the temporary removed with the
 * transfer.
 * Parts smaller than S3 takes (--upload-part-size below 5M) stay transfers of the local
 * cache: only the replica that took their first part goes on with them.
 */
static oxst_status s3_copy(s3_store *s, const char *src, const char *dst, uint64_t size);

static bool xfer_remote(const oxst_xfer *x)
{
	return x->part >= OXST_S3_MIN_PART;
}

/* Where the file of x named x->sha256 is kept: the model's key, or the blob of its bytes. */
static bool named_key(const s3_store *s, const oxst_xfer *x, char *key, size_t size)
{
	if (!oxst_id_valid(x->sha256))
		return false;
	if (strcmp(x->kind, "model") == 0)
		return key_fmt(s, key, size, "models/%s.onnx", x->sha256);
	return key_fmt(s, key, size, "blobs/%s", x->sha256);
}

/* Where a transfer's multipart upload goes: named_key, or (begun unnamed) its own. */
static bool xfer_key(const s3_store *s, const char *uid, const oxst_xfer *x, char *key,
                     size_t size)
{
	if (x->staged)
		return oxst_xfer_uid_valid(uid) && key_fmt(s, key, size, "uploads/%s/file", uid);
	return named_key(s, x, key, size);
}

static bool state_key(const s3_store *s, char *key, size_t size, const char *uid)
{
	return oxst_xfer_uid_valid(uid) && key_fmt(s, key, size, "uploads/%s/state", uid);
}

/* Read the state object; etag (when not NULL, 96 bytes) gets its ETag. */
static oxst_status s3_xfer_read(s3_store *s, const char *uid, oxst_xfer *x, char *etag)
{
	char key[KEY_MAX];
	if (!state_key(s, key, sizeof(key), uid))
		return OXST_E_INVALID;
	oxr_buf body;
	oxr_buf_init(&body, 4096);
	oxst_s3_req r;
	oxst_s3_req_init(&r, OXST_S3OP_GET, "GET", s->bucket, key);
	r.out = &body;
	oxst_status st = oxst_s3_do(s->s3, &r);
	if (st == OXST_E_NOSPACE)
		st = OXST_E_IO; /* too large to be a state */
	else if (st == OXST_OK && r.status == 404)
		st = OXST_E_NOT_FOUND;
	else if (st == OXST_OK && r.status != 200)
		st = unexpected(&r);
	else if (st == OXST_OK && (!oxst_xfer_parse(body.data ? body.data : "", body.len, x) ||
	                           oxst_xfer_unhashed(x) || strncmp(x->backend, "mpu ", 4) != 0))
		st = OXST_E_IO;
	if (st == OXST_OK && etag != NULL)
		snprintf(etag, 96, "%s", r.etag);
	oxr_buf_free(&body);
	return st;
}

static oxst_status s3_xfer_get(s3_store *s, const char *uid, oxst_xfer *x)
{
	return s3_xfer_read(s, uid, x, NULL);
}

/* Write the state object (if_none_match "*": only when there is none; if_match: only over
 * the object of that ETag; *refused then tells that the condition failed). */
static oxst_status s3_xfer_write(s3_store *s, const char *uid, const oxst_xfer *x,
                                 const char *if_none_match, const char *if_match,
                                 bool *refused)
{
	char key[KEY_MAX], text[4096];
	size_t len = 0;
	if (!state_key(s, key, sizeof(key), uid) || !oxst_xfer_text(x, text, sizeof(text), &len))
		return OXST_E_INVALID;
	bool no = false;
	oxst_status st = put_conditional(s, key, text, len, if_none_match, if_match, &no);
	if (refused != NULL)
		*refused = no;
	return st;
}

/* The query "uploadId=ID" (with partNumber=N when part > 0) of the state's upload. */
static bool mpu_query(const oxst_xfer *x, uint64_t part, char *out, size_t size)
{
	if (strncmp(x->backend, "mpu ", 4) != 0)
		return false;
	char num[24];
	snprintf(num, sizeof(num), "%" PRIu64, part);
	const char *kv[] = {"partNumber", num, "uploadId", x->backend + 4};
	return part > 0 ? oxst_s3_query(out, size, kv, 2) : oxst_s3_query(out, size, kv + 2, 1);
}

static oxst_status mpu_abort(s3_store *s, const char *uid, const oxst_xfer *x)
{
	char key[KEY_MAX], query[sizeof("uploadId=") + 3 * UPLOAD_ID_MAX];
	if (!xfer_key(s, uid, x, key, sizeof(key)) || !mpu_query(x, 0, query, sizeof(query)))
		return OXST_E_INVALID;
	oxst_s3_req r;
	oxst_s3_req_init(&r, OXST_S3OP_MULTIPART, "DELETE", s->bucket, key);
	r.query = query;
	oxst_status st = oxst_s3_do(s->s3, &r);
	if (st == OXST_OK && r.status != 204 && r.status != 200 && r.status != 404)
		st = unexpected(&r);
	return st;
}

static oxst_status op_xfer_get(oxst_store *base, const char *uid, oxst_xfer *x)
{
	s3_store *s = (s3_store *)base;
	oxst_status st = s->cache->ops->xfer_get(s->cache, uid, x);
	return st == OXST_E_NOT_FOUND ? s3_xfer_get(s, uid, x) : st;
}

static oxst_status op_xfer_put(oxst_store *base, const char *uid, const oxst_xfer *x)
{
	s3_store *s = (s3_store *)base;
	if (!xfer_remote(x))
		return s->cache->ops->xfer_put(s->cache, uid, x);
	return s3_xfer_write(s, uid, x, NULL, NULL, NULL);
}

static oxst_status op_xfer_create(oxst_store *base, const char *uid, oxst_xfer *x, bool *created)
{
	s3_store *s = (s3_store *)base;
	*created = false;
	if (!xfer_remote(x))
		return s->cache->ops->xfer_create(s->cache, uid, x, created);
	oxst_xfer cur;
	oxst_status st = s3_xfer_get(s, uid, &cur);
	if (st == OXST_OK) {
		*x = cur;
		return OXST_OK;
	}
	if (st != OXST_E_NOT_FOUND && st != OXST_E_IO)
		return st;
	char skey[KEY_MAX];
	if (st == OXST_E_IO && state_key(s, skey, sizeof(skey), uid))
		(void)s3_delete(s, skey); /* an unreadable state: started over */
	char key[KEY_MAX], upload_id[UPLOAD_ID_MAX];
	/* not named yet (a model, a data file): its own key until its bytes name it */
	x->staged = x->sha256[0] == '\0';
	if (!xfer_key(s, uid, x, key, sizeof(key)))
		return OXST_E_INVALID;
	st = mpu_create(s, key, upload_id);
	if (st != OXST_OK)
		return st;
	snprintf(x->backend, sizeof(x->backend), "mpu %s", upload_id);
	bool exists = false;
	/* one state per transfer: of two replicas starting it at once, one wins */
	st = s3_xfer_write(s, uid, x, "*", NULL, &exists);
	if (st != OXST_OK || exists) {
		(void)mpu_abort(s, uid, x);
		if (st == OXST_OK)
			st = s3_xfer_get(s, uid, x);
		return st;
	}
	*created = true;
	return OXST_OK;
}

static oxst_status op_xfer_part_fd(oxst_store *base, const char *uid, const oxst_xfer *x,
                                   int *fd, uint64_t *at)
{
	s3_store *s = (s3_store *)base;
	if (!xfer_remote(x))
		return s->cache->ops->xfer_part_fd(s->cache, uid, x, fd, at);
	/* a part-sized temporary of the cache, gone when closed */
	char path[PATH_MAX];
	oxst_status st = s->cache->ops->spool(s->cache, fd, path, sizeof(path));
	if (st == OXST_OK)
		(void)unlink(path);
	*at = 0;
	return st;
}

/* One writer per part (issue 35): before its UploadPart a replica writes the state with
 * a lease of its own ("<nonce> <until>") over the state it read (If-Match on its ETag),
 * and after it the next state over its lease the same way.  Of two replicas given part N
 * at once one gets the lease, the other OXST_E_BUSY before it sent a byte, so a part
 * acknowledged is never replaced: a part is leased only while the state's offset is still
 * before it.  A lease left by a replica that died is taken over once past `until`, which
 * lies beyond the longest an UploadPart may take (the client's attempts, 1 s per MiB).
 * A condition refused after an answer was lost (the retry of a write that was made) is
 * told apart by reading the state again: our nonce, or our offset and hash, are there. */
static int64_t lease_seconds(const oxst_xfer *x)
{
	return 120 + 4 * (int64_t)(x->part >> 20);
}

static bool lease_live(const oxst_xfer *x, int64_t now)
{
	const char *sp = strchr(x->lease, ' ');
	return sp != NULL && strtoll(sp + 1, NULL, 10) > now;
}

static oxst_status lease_take(s3_store *s, const char *uid, const oxst_xfer *x, char etag[96],
                              char nonce[33], oxst_xfer *out)
{
	oxst_xfer cur;
	oxst_status st = s3_xfer_read(s, uid, &cur, etag);
	if (st != OXST_OK)
		return st;
	int64_t now = (int64_t)time(NULL);
	if (cur.offset != x->offset || strcmp(cur.backend, x->backend) != 0 ||
	    memcmp(cur.h, x->h, sizeof(cur.h)) != 0 || lease_live(&cur, now))
		return OXST_E_BUSY; /* moved on, or another replica writes the part now */
	unsigned char rnd[16];
	if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd))
		return OXST_E_IO;
	for (int i = 0; i < 16; i++)
		snprintf(nonce + 2 * i, 3, "%02x", rnd[i]);
	snprintf(cur.lease, sizeof(cur.lease), "%s %" PRId64, nonce, now + lease_seconds(x));
	char held[96];
	snprintf(held, sizeof(held), "%s", etag);
	bool refused = false;
	st = s3_xfer_write(s, uid, &cur, NULL, held, &refused);
	if (st != OXST_OK)
		return st;
	st = s3_xfer_read(s, uid, out, etag);
	if (st != OXST_OK)
		return st;
	return strncmp(out->lease, nonce, 32) == 0 ? OXST_OK : OXST_E_BUSY;
}

/* Keep the lease a transfer's last part took for its finish (held_lease; false when out
 * of memory: the caller releases it then).  Entries past their lease go meanwhile. */
static bool lease_hold(s3_store *s, const char *uid, const char *nonce, const char *lease)
{
	held_lease *h = calloc(1, sizeof(*h));
	if (h == NULL)
		return false;
	snprintf(h->uid, sizeof(h->uid), "%s", uid);
	snprintf(h->nonce, sizeof(h->nonce), "%s", nonce);
	const char *sp = strchr(lease, ' ');
	h->until = sp != NULL ? strtoll(sp + 1, NULL, 10) : 0;
	int64_t now = (int64_t)time(NULL);
	pthread_mutex_lock(&s->mu);
	for (held_lease **pp = &s->held; *pp != NULL;) {
		held_lease *o = *pp;
		if (o->until > now && strcmp(o->uid, uid) != 0) {
			pp = &o->next;
			continue;
		}
		*pp = o->next;
		free(o);
	}
	h->next = s->held;
	s->held = h;
	pthread_mutex_unlock(&s->mu);
	return true;
}

/* The lease held for uid's finish, taken out of the list into *out: false when none. */
static bool lease_held(s3_store *s, const char *uid, held_lease *out)
{
	bool found = false;
	pthread_mutex_lock(&s->mu);
	for (held_lease **pp = &s->held; *pp != NULL; pp = &(*pp)->next) {
		held_lease *h = *pp;
		if (strcmp(h->uid, uid) != 0)
			continue;
		*pp = h->next;
		if (out != NULL)
			*out = *h;
		free(h);
		found = true;
		break;
	}
	pthread_mutex_unlock(&s->mu);
	return found;
}

static oxst_status op_xfer_part_put(oxst_store *base, const char *uid, const oxst_xfer *x,
                                    const oxst_xfer *next, int fd, uint64_t at, uint64_t len)
{
	s3_store *s = (s3_store *)base;
	if (!xfer_remote(x))
		return s->cache->ops->xfer_part_put(s->cache, uid, x, next, fd, at, len);
	if (x->part == 0 || x->offset % x->part != 0)
		return OXST_E_INVALID;
	uint64_t number = x->offset / x->part + 1;
	char key[KEY_MAX], query[sizeof("partNumber=10000&uploadId=") + 3 * UPLOAD_ID_MAX];
	if (number > OXST_S3_MAX_PARTS || !xfer_key(s, uid, x, key, sizeof(key)) ||
	    !mpu_query(x, number, query, sizeof(query)))
		return OXST_E_INVALID;
	char etag[96] = "", nonce[33] = "";
	oxst_xfer cur;
	oxst_status st = lease_take(s, uid, x, etag, nonce, &cur);
	if (st != OXST_OK)
		return st;
	char pet[96];
	st = mpu_part(s, key, query, fd, at, len, pet); /* 404: aborted (expired) */
	uint64_t have = 0;
	if (st == OXST_E_NOT_FOUND && next == NULL && s3_head(s, key, &have) == OXST_OK &&
	    have == x->length)
		st = OXST_OK; /* the last part again after a finish that failed once the upload was
		                 complete: the object holds the parts (the service checks the hash;
		                 begun unnamed, the state names the file since before the completion) */
	/* begun unnamed: the lease stays until the finish, so that the last part it completes
	 * is this one, whose bytes the service checks against the claim */
	if (st == OXST_OK && next == NULL && x->staged && lease_hold(s, uid, nonce, cur.lease))
		return OXST_OK;
	/* the next state, or (the last part, or a failed one) the state as it was: the
	 * lease goes either way, so a retry finds the part free */
	oxst_xfer after = next != NULL && st == OXST_OK ? *next : *x;
	after.lease[0] = '\0';
	if (x->staged) /* named by its finish only (x may carry the last part's claim) */
		memcpy(after.sha256, cur.sha256, sizeof(after.sha256));
	bool refused = false;
	oxst_status w = s3_xfer_write(s, uid, &after, NULL, etag, &refused);
	if (w == OXST_OK && refused) { /* the answer to a write that was made got lost? */
		oxst_xfer now_st;
		w = s3_xfer_read(s, uid, &now_st, NULL);
		if (w == OXST_OK && (now_st.offset != after.offset || now_st.lease[0] != '\0' ||
		                     memcmp(now_st.h, after.h, sizeof(now_st.h)) != 0))
			w = OXST_E_BUSY; /* taken over: this replica held the lease too long */
	}
	return st != OXST_OK ? st : w;
}

/* The parts of the upload (ListParts, pages of 1000) as the completion's body: every part
 * 1..n there with its size (x->part, the last the rest). */
static oxst_status mpu_parts(s3_store *s, const char *key, const oxst_xfer *x, oxr_buf *done)
{
	uint64_t n = (x->length + x->part - 1) / x->part, next = 1;
	char marker[24] = "0";
	oxr_buf_printf(done, "<CompleteMultipartUpload>");
	for (;;) {
		char query[sizeof("max-parts=1000&part-number-marker=10000&uploadId=") + 3 * UPLOAD_ID_MAX];
		const char *kv[] = {"max-parts", "1000", "part-number-marker", marker, "uploadId",
		                    x->backend + 4};
		if (!oxst_s3_query(query, sizeof(query), kv, 3))
			return OXST_E_INVALID;
		oxr_buf body;
		oxr_buf_init(&body, 4 << 20);
		oxst_s3_req r;
		oxst_s3_req_init(&r, OXST_S3OP_MULTIPART, "GET", s->bucket, key);
		r.query = query;
		r.out = &body;
		oxst_status st = oxst_s3_do(s->s3, &r);
		if (st == OXST_OK && r.status == 404)
			st = OXST_E_NOT_FOUND;
		else if (st == OXST_OK && r.status != 200)
			st = unexpected(&r);
		const char *p = body.data ? body.data : "", *end = p + body.len, *a, *z;
		uint64_t last = next;
		while (st == OXST_OK && oxst_xml_element(&p, end, "Part", &a, &z)) {
			char num[24] = "", size[32] = "", etag[128] = "";
			const char *q = a;
			(void)oxst_xml_next(&q, z, "PartNumber", num, sizeof(num));
			q = a;
			(void)oxst_xml_next(&q, z, "Size", size, sizeof(size));
			q = a;
			(void)oxst_xml_next(&q, z, "ETag", etag, sizeof(etag));
			uint64_t k = strtoull(num, NULL, 10), want = k == n ? x->length - (n - 1) * x->part : x->part;
			if (k != next || strtoull(size, NULL, 10) != want || etag[0] == '\0') {
				st = OXST_E_IO; /* a part missing or of another size: not this file */
				break;
			}
			oxr_buf_printf(done, "<Part><PartNumber>%" PRIu64 "</PartNumber><ETag>%s</ETag></Part>",
			               k, etag);
			next++;
		}
		char trunc[8] = "";
		p = body.data ? body.data : "";
		(void)oxst_xml_next(&p, end, "IsTruncated", trunc, sizeof(trunc));
		oxr_buf_free(&body);
		if (st != OXST_OK)
			return st;
		if (strcmp(trunc, "true") != 0 || next == last)
			break;
		snprintf(marker, sizeof(marker), "%" PRIu64, next - 1);
	}
	oxr_buf_printf(done, "</CompleteMultipartUpload>");
	if (next != n + 1)
		return OXST_E_IO;
	return done->failed ? OXST_E_NOMEM : OXST_OK;
}

static oxst_status s3_xfer_abort(s3_store *s, const char *uid)
{
	char key[KEY_MAX];
	oxst_xfer x;
	if (!state_key(s, key, sizeof(key), uid))
		return OXST_E_INVALID;
	oxst_status st = s3_xfer_get(s, uid, &x);
	/* a manifest is read once its bundle is stored, a transfer begun unnamed copied to the
	 * model's key: their objects go too */
	bool read_back = st == OXST_OK && xfer_remote(&x) && (strcmp(x.kind, "bundle") == 0 || x.staged);
	if (st == OXST_OK)
		st = mpu_abort(s, uid, &x);
	char blob[KEY_MAX];
	if (read_back && (st == OXST_OK || st == OXST_E_NOT_FOUND) &&
	    xfer_key(s, uid, &x, blob, sizeof(blob)))
		st = s3_delete(s, blob);
	if (st == OXST_OK || st == OXST_E_NOT_FOUND || st == OXST_E_IO)
		st = s3_delete(s, key);
	return st;
}

/* The end of a transfer to a blob: a data file stays there (*fd -1); a manifest is read
 * back into a spool file of the cache, checked against its SHA-256, and its blob goes. */
static oxst_status xfer_fetch_blob(s3_store *s, const char *key, const oxst_xfer *x, int *fd,
                                   char *spool, size_t spoolsize)
{
	*fd = -1;
	if (strcmp(x->kind, "bundle") != 0)
		return OXST_OK;
	int f = -1;
	oxst_status st = s->cache->ops->spool(s->cache, &f, spool, spoolsize);
	if (st != OXST_OK)
		return st;
	oxst_s3_req r;
	oxst_s3_req_init(&r, OXST_S3OP_GET, "GET", s->bucket, key);
	r.out_fd = f;
	r.out_max = x->length;
	r.out_sha = true;
	st = oxst_s3_do(s->s3, &r);
	if (st == OXST_OK && r.status == 404)
		st = OXST_E_NOT_FOUND; /* taken by another replica finishing the same manifest */
	else if (st == OXST_OK && r.status != 200)
		st = unexpected(&r);
	else if (st == OXST_OK && (r.received != x->length || strcmp(r.sha256, x->sha256) != 0))
		st = OXST_E_IO;
	if (st != OXST_OK) {
		close(f);
		(void)unlink(spool);
		return st;
	}
	*fd = f; /* the manifest's blob goes with its transfer (s3_xfer_abort), once the bundle
	            is stored: a finish that fails reads it again */
	return OXST_OK;
}

/* The state of uid named x->sha256 under the lease held (h), written If-Match its ETag
 * (read into etag, then the one after).  OXST_E_BUSY when the lease is not ours any more,
 * or another claim named it. */
static oxst_status name_state(s3_store *s, const char *uid, const oxst_xfer *x,
                              const held_lease *h, char etag[96])
{
	oxst_xfer cur;
	oxst_status st = s3_xfer_read(s, uid, &cur, etag);
	if (st != OXST_OK)
		return st;
	if (strncmp(cur.lease, h->nonce, 32) != 0 ||
	    (cur.sha256[0] != '\0' && strcmp(cur.sha256, x->sha256) != 0))
		return OXST_E_BUSY;
	if (cur.sha256[0] != '\0')
		return OXST_OK;
	memcpy(cur.sha256, x->sha256, sizeof(cur.sha256));
	char held[96];
	snprintf(held, sizeof(held), "%s", etag);
	bool refused = false;
	st = s3_xfer_write(s, uid, &cur, NULL, held, &refused);
	if (st == OXST_OK) /* written, or refused after an answer lost: read it to tell */
		st = s3_xfer_read(s, uid, &cur, etag);
	if (st == OXST_OK && (strncmp(cur.lease, h->nonce, 32) != 0 || strcmp(cur.sha256, x->sha256) != 0))
		st = OXST_E_BUSY;
	return st;
}

/* The end of a transfer begun unnamed (x->staged: a model, or a data file kept as its
 * blob; x->sha256 the claim its bytes hashed to).  Under the lease its last part took (held since that UploadPart, so the part this
 * completes is the one whose bytes were checked) the claim goes into the state first:
 * from then on the transfer is named, a retry of the last part must make the same claim
 * (the object completed holds those bytes), and a finish that fails half-way is finished
 * by the last part sent again.  Then the upload is completed at its own key and copied
 * server-side to the model's key or the blob's (CopyObject, UploadPartCopy past copy_max),
 * unless it is there; the lease goes; the temporary goes with the transfer (xfer_abort). */
static oxst_status finish_staged(s3_store *s, const char *uid, const oxst_xfer *x,
                                 bool *created)
{
	held_lease h;
	char tmp[KEY_MAX], dst[KEY_MAX], query[sizeof("uploadId=") + 3 * UPLOAD_ID_MAX];
	if (!lease_held(s, uid, &h))
		return OXST_E_BUSY; /* the last part's lease is not this request's */
	if (!xfer_key(s, uid, x, tmp, sizeof(tmp)) || !named_key(s, x, dst, sizeof(dst)) ||
	    !mpu_query(x, 0, query, sizeof(query)))
		return OXST_E_INVALID;
	char etag[96] = "";
	oxst_status st = x->length > s->cache_budget ? OXST_E_NOSPACE /* no replica could read it */
	                                             : name_state(s, uid, x, &h, etag);
	busy b;
	busy_enter(s, &s->putting, &b, x->sha256);
	/* OXST_OK: stored meanwhile, or by this one's finish that failed after (a blob of
	 * another length: this one replaces it) */
	uint64_t there = 0;
	bool model = strcmp(x->kind, "model") == 0;
	oxst_status m = st == OXST_OK ? s3_head(s, dst, &there) : OXST_OK;
	if (m == OXST_OK && !model && there != x->length)
		m = OXST_E_NOT_FOUND;
	if (st == OXST_OK && m != OXST_E_NOT_FOUND)
		st = m;
	else if (st == OXST_OK) {
		uint64_t have = 0;
		st = s3_head(s, tmp, &have); /* completed by a finish that failed after? */
		if (st == OXST_OK && have != x->length)
			st = OXST_E_IO;
		if (st == OXST_E_NOT_FOUND) {
			oxr_buf done;
			oxr_buf_init(&done, 1 << 20);
			st = mpu_parts(s, tmp, x, &done);
			if (st == OXST_OK)
				st = mpu_complete(s, tmp, query, &done, created);
			oxr_buf_free(&done);
			if (st == OXST_E_NOT_FOUND && s3_head(s, tmp, &have) == OXST_OK && have == x->length)
				st = OXST_OK; /* completed, its answer lost */
		}
		if (st == OXST_OK)
			st = s3_copy(s, tmp, dst, x->length);
		*created = st == OXST_OK;
	}
	busy_leave(s, &s->putting, &b);
	/* the lease goes (a retry need not wait it out); refused: taken over meanwhile */
	oxst_xfer cur;
	char now[96];
	if (s3_xfer_read(s, uid, &cur, now) == OXST_OK && strncmp(cur.lease, h.nonce, 32) == 0) {
		cur.lease[0] = '\0';
		(void)s3_xfer_write(s, uid, &cur, NULL, now, NULL);
	}
	if (st == OXST_OK && model)
		stored_now(s, x->sha256, x->length);
	return st;
}

static oxst_status op_xfer_finish(oxst_store *base, const char *uid, const oxst_xfer *x,
                                  int *fd, char *spool, size_t spoolsize, bool *created)
{
	s3_store *s = (s3_store *)base;
	*fd = -1;
	*created = false;
	if (!xfer_remote(x))
		return s->cache->ops->xfer_finish(s->cache, uid, x, fd, spool, spoolsize, created);
	if (x->staged)
		return finish_staged(s, uid, x, created);
	if (x->length > s->cache_budget)
		return OXST_E_NOSPACE; /* no replica could ever hold it to read it */
	char key[KEY_MAX], query[sizeof("uploadId=") + 3 * UPLOAD_ID_MAX];
	if (!xfer_key(s, uid, x, key, sizeof(key)) || !mpu_query(x, 0, query, sizeof(query)))
		return OXST_E_INVALID;
	bool model = strcmp(x->kind, "model") == 0;
	busy b;
	busy_enter(s, &s->putting, &b, x->sha256);
	uint64_t have = 0;
	oxst_status st = s3_head(s, key, &have);
	if (st == OXST_OK && (model || have == x->length)) {
		/* stored meanwhile (another upload of the same bytes), or by this one's finish
		 * that failed after: the transfer stays until the service removes it */
		busy_leave(s, &s->putting, &b);
		return model ? OXST_OK : xfer_fetch_blob(s, key, x, fd, spool, spoolsize);
	}
	if (st == OXST_OK)
		st = OXST_E_NOT_FOUND; /* a blob of another length: this upload replaces it */
	oxr_buf done;
	oxr_buf_init(&done, 1 << 20);
	if (st == OXST_E_NOT_FOUND)
		st = mpu_parts(s, key, x, &done);
	if (st == OXST_OK)
		st = mpu_complete(s, key, query, &done, created); /* 404: completed or aborted elsewhere */
	oxr_buf_free(&done);
	busy_leave(s, &s->putting, &b);
	if (st == OXST_E_NOT_FOUND && s3_head(s, key, NULL) == OXST_OK)
		st = OXST_OK; /* another replica completed it */
	if (st != OXST_OK)
		return st;
	/* the state stays until the service has stored the model (xfer_abort): a failure
	 * after this (the cache, the parse's memory) is finished again by the last part */
	if (!model)
		return xfer_fetch_blob(s, key, x, fd, spool, spoolsize);
	stored_now(s, x->sha256, x->length);
	return OXST_OK;
}

static oxst_status op_xfer_abort(oxst_store *base, const char *uid)
{
	s3_store *s = (s3_store *)base;
	(void)lease_held(s, uid, NULL); /* a last part refused for its hash: its lease goes too */
	(void)s->cache->ops->xfer_abort(s->cache, uid);
	return s3_xfer_abort(s, uid);
}

typedef struct uid_list {
	char (*uids)[OXST_XFER_UID_LEN + 1];
	size_t n, max, plen;
} uid_list;

static bool add_uid(void *arg, const char *key, uint64_t size, int64_t modified)
{
	uid_list *l = arg;
	(void)size, (void)modified;
	size_t kl = strlen(key);
	if (kl != l->plen + OXST_XFER_UID_LEN + 6 || strcmp(key + kl - 6, "/state") != 0)
		return true;
	char uid[OXST_XFER_UID_LEN + 1];
	memcpy(uid, key + l->plen, OXST_XFER_UID_LEN);
	uid[OXST_XFER_UID_LEN] = '\0';
	if (oxst_xfer_uid_valid(uid))
		memcpy(l->uids[l->n++], uid, OXST_XFER_UID_LEN + 1);
	return l->n < l->max;
}

static oxst_status op_xfer_list(oxst_store *base, char (*uids)[OXST_XFER_UID_LEN + 1], size_t max,
                                size_t *n)
{
	s3_store *s = (s3_store *)base;
	oxst_status st = s->cache->ops->xfer_list(s->cache, uids, max, n);
	if (st != OXST_OK)
		return st;
	char prefix[KEY_MAX], token[1100] = "";
	if (!key_fmt(s, prefix, sizeof(prefix), "uploads/"))
		return OXST_E_INVALID;
	uid_list l = {uids, *n, max, strlen(prefix)};
	while (st == OXST_OK && l.n < max) {
		st = list_page(s, prefix, "", 1000, token, sizeof(token), add_uid, &l);
		if (token[0] == '\0')
			break;
	}
	*n = l.n;
	return st;
}

/* ---------------------------------------------------------------------------------------
 * Blobs (data files of bundles by SHA-256, from resumable transfers of kind data) and the
 * bundles made of them: server-side copies into the keys a multipart POST /models of the
 * same files writes (data/<id>/<location>, then models/<id>.onnx), so the bundle is the
 * same whichever replica completes it.  The blobs stay until --upload-expiry after their
 * upload (blob_expire, from the expiry sweep): a manifest sent again (its replica died
 * before it answered), another replica completing the same manifest at once, or another
 * bundle sharing a data file finds them there (docs/decisions.md).
 */
static oxst_status op_blob_stat(oxst_store *base, const char *sha, uint64_t length)
{
	s3_store *s = (s3_store *)base;
	char key[KEY_MAX];
	uint64_t size = 0;
	if (!oxst_id_valid(sha) || !key_fmt(s, key, sizeof(key), "blobs/%s", sha))
		return OXST_E_INVALID;
	oxst_status st = s3_head(s, key, &size);
	return st == OXST_OK && size != length ? OXST_E_NOT_FOUND : st;
}

/* CopyObject of src to dst (one request; an error can come in a 200). */
static oxst_status s3_copy_object(s3_store *s, const char *src, const char *dst)
{
	oxr_buf ans;
	oxr_buf_init(&ans, 1 << 16);
	oxst_s3_req r;
	oxst_s3_req_init(&r, OXST_S3OP_PUT, "PUT", s->bucket, dst);
	r.copy_key = src;
	r.out = &ans;
	oxst_status st = oxst_s3_do(s->s3, &r);
	bool error_body = ans.data != NULL && strstr(ans.data, "<Error>") != NULL;
	if (st == OXST_OK && r.status == 404)
		st = OXST_E_NOT_FOUND; /* the source went (a blob expired) */
	else if (st == OXST_OK && (r.status != 200 || error_body))
		st = unexpected(&r);
	oxr_buf_free(&ans);
	return st;
}

/* CopyObject copies at most 5 GiB; above, parts of at least 1 GiB (fewer requests: the
 * bytes do not pass through here).  ONNXVIZ_TEST_S3_COPY_MAX lowers both to its value
 * (5M..5G; a test's knob, not an option): the s3 suite copies a 14 MB file in ranges, as
 * a 13 GB one would be. */
#define COPY_MAX ((uint64_t)5 << 30)
#define COPY_PART ((uint64_t)1 << 30)

/* mpu_run's parts copied from another object (UploadPartCopy of a range): arg is its key;
 * the ETag comes in the answer's body. */
static oxst_status copy_part(s3_store *s, const char *key, const char *query, uint64_t off,
                             uint64_t len, char etag[128], const void *arg)
{
	char range[64];
	snprintf(range, sizeof(range), "bytes=%" PRIu64 "-%" PRIu64, off, off + len - 1);
	oxr_buf ans;
	oxr_buf_init(&ans, 1 << 16);
	oxst_s3_req r;
	oxst_s3_req_init(&r, OXST_S3OP_MULTIPART, "PUT", s->bucket, key);
	r.query = query;
	r.copy_key = arg;
	r.copy_range = range;
	r.out = &ans;
	oxst_status st = oxst_s3_do(s->s3, &r);
	const char *p = ans.data ? ans.data : "";
	if (st == OXST_OK && r.status == 404)
		st = OXST_E_NOT_FOUND;
	else if (st == OXST_OK && (r.status != 200 || strstr(p, "<Error>") != NULL ||
	                           !oxst_xml_next(&p, p + ans.len, "ETag", etag, 128) ||
	                           strchr(etag, '<') != NULL))
		st = unexpected(&r);
	oxr_buf_free(&ans);
	return st;
}

/* Server-side copy of src (size bytes) to dst: CopyObject up to 5 GiB, else a multipart
 * upload of UploadPartCopy ranges, completed when every part copied. */
static oxst_status s3_copy(s3_store *s, const char *src, const char *dst, uint64_t size)
{
	if (size <= s->copy_max)
		return s3_copy_object(s, src, dst);
	uint64_t part = oxst_s3_part_for(size, s->copy_part);
	bool created = false;
	return mpu_run(s, dst, size, part, copy_part, src, &created);
}

static oxst_status op_put_bundle(oxst_store *base, const char *id, const char *model_sha,
                                 uint64_t model_size, const struct oxst_bundle_file *files,
                                 size_t n, bool *created)
{
	s3_store *s = (s3_store *)base;
	char key[KEY_MAX], src[KEY_MAX];
	*created = false;
	if (!oxst_id_valid(id) || !oxst_id_valid(model_sha) ||
	    !key_fmt(s, key, sizeof(key), "models/%s.onnx", id))
		return OXST_E_INVALID;
	uint64_t total = model_size;
	for (size_t i = 0; i < n; i++) {
		const char *rule = NULL;
		if (!oxst_id_valid(files[i].sha256) || !oxst_location_valid(files[i].location, &rule) ||
		    total + files[i].size < total)
			return OXST_E_INVALID;
		total += files[i].size;
	}
	if (total > s->cache_budget)
		return OXST_E_NOSPACE; /* no replica could ever hold it to read it */
	busy b;
	busy_enter(s, &s->putting, &b, id);
	oxst_status st = s3_head(s, key, NULL);
	if (st == OXST_OK) { /* stored already (another replica, an earlier manifest) */
		busy_leave(s, &s->putting, &b);
		return OXST_OK;
	}
	/* the model file: stored as a model, or a blob */
	uint64_t size = 0;
	if (st == OXST_E_NOT_FOUND && key_fmt(s, src, sizeof(src), "models/%s.onnx", model_sha)) {
		st = s3_head(s, src, &size);
		if (st == OXST_OK && size != model_size)
			st = OXST_E_NOT_FOUND;
		if (st == OXST_E_NOT_FOUND && key_fmt(s, src, sizeof(src), "blobs/%s", model_sha)) {
			st = s3_head(s, src, &size);
			if (st == OXST_OK && size != model_size)
				st = OXST_E_NOT_FOUND;
		}
	}
	/* every data file there before anything is written */
	for (size_t i = 0; st == OXST_OK && i < n; i++)
		st = op_blob_stat(base, files[i].sha256, files[i].size);
	/* the data files, then the model: a model that can be seen has all it needs */
	for (size_t i = 0; st == OXST_OK && i < n; i++) {
		char from[KEY_MAX], to[KEY_MAX];
		if (!key_fmt(s, from, sizeof(from), "blobs/%s", files[i].sha256) ||
		    !key_fmt(s, to, sizeof(to), "data/%s/%s", id, files[i].location))
			st = OXST_E_INVALID;
		else
			st = s3_copy(s, from, to, files[i].size);
	}
	if (st == OXST_OK)
		st = s3_copy(s, src, key, model_size);
	busy_leave(s, &s->putting, &b);
	if (st != OXST_OK)
		return st;
	*created = true;
	stored_now(s, id, model_size);
	return OXST_OK;
}

typedef struct old_blobs {
	key_list l;
	int64_t before;
} old_blobs;

static bool add_old_blob(void *arg, const char *key, uint64_t size, int64_t modified)
{
	old_blobs *o = arg;
	if (modified <= 0 || modified >= o->before)
		return true;
	return collect_key(&o->l, key, size, modified);
}

static oxst_status op_blob_expire(oxst_store *base, int64_t before, uint64_t *removed)
{
	s3_store *s = (s3_store *)base;
	char prefix[KEY_MAX], token[1100] = "";
	*removed = 0;
	if (!key_fmt(s, prefix, sizeof(prefix), "blobs/"))
		return OXST_E_INVALID;
	old_blobs o = {{NULL, 0, 0, 65536, false}, before};
	oxst_status st = OXST_OK;
	for (;;) {
		st = list_page(s, prefix, "", 1000, token, sizeof(token), add_old_blob, &o);
		if (st != OXST_OK || o.l.failed || o.l.n >= o.l.max || token[0] == '\0')
			break;
	}
	for (size_t i = 0; st == OXST_OK && i < o.l.n; i++) {
		st = s3_delete(s, o.l.keys[i]);
		if (st == OXST_OK)
			(*removed)++;
	}
	free_keys(o.l.keys, o.l.n);
	return st == OXST_OK && o.l.failed ? OXST_E_NOMEM : st;
}

static const oxst_ops s3_ops = {
    .name = "s3",
    .remote = true,
    OXST_OPS_OF_FILE,
};

oxst_status oxst_s3_open(oxst_store **out, const oxst_s3_options *opt, char *err,
                         size_t errsize)
{
	char bucket[64], prefix[520];
	if (!oxst_s3_url_parse(opt->url, bucket, sizeof(bucket), prefix, sizeof(prefix))) {
		snprintf(err, errsize, "--store: expected s3://BUCKET[/PREFIX] (bucket: 3..63 of "
		                       "a-z 0-9 . -)");
		return OXST_E_INVALID;
	}
	if (opt->part_size < ((uint64_t)5 << 20) || opt->part_size > ((uint64_t)5 << 30)) {
		snprintf(err, errsize, "--s3-part-size: 5M..5G (the S3 limits of a part)");
		return OXST_E_INVALID;
	}
	if (opt->cache_budget == 0) { /* every download is bounded by it */
		snprintf(err, errsize, "--store-budget: an S3 store's cache needs one (> 0)");
		return OXST_E_INVALID;
	}
	oxst_s3_config cfg;
	if (!oxst_s3_config_env(&cfg, opt->envp, opt->timeout, err, errsize))
		return OXST_E_INVALID;
	if (!oxst_s3_load(err, errsize)) {
		OPENSSL_cleanse(&cfg, sizeof(cfg));
		return OXST_E_IO;
	}
	s3_store *s = calloc(1, sizeof(*s));
	if (s == NULL) {
		snprintf(err, errsize, "out of memory");
		return OXST_E_NOMEM;
	}
	s->base.ops = &s3_ops;
	pthread_mutex_init(&s->mu, NULL);
	pthread_cond_init(&s->cv, NULL);
	pthread_cond_init(&s->probe_cv, NULL);
	snprintf(s->bucket, sizeof(s->bucket), "%s", bucket);
	snprintf(s->prefix, sizeof(s->prefix), "%s%s", prefix, prefix[0] ? "/" : "");
	s->part_size = opt->part_size;
	s->cache_budget = opt->cache_budget;
	s->copy_max = COPY_MAX;
	s->copy_part = opt->part_size > COPY_PART ? opt->part_size : COPY_PART;
	const char *knob = oxst_env_get(opt->envp, "ONNXVIZ_TEST_S3_COPY_MAX");
	if (knob != NULL) {
		char *end = NULL;
		unsigned long long v = strtoull(knob, &end, 10);
		if (*end == '\0' && v >= ((uint64_t)5 << 20) && v <= COPY_MAX)
			s->copy_max = s->copy_part = v;
	}
	s->known = calloc(KNOWN_SLOTS, sizeof(*s->known));
	s->metas = calloc(META_SLOTS, sizeof(*s->metas));
	s->s3 = oxst_s3_new(&cfg);
	OPENSSL_cleanse(&cfg, sizeof(cfg));
	if (s->known == NULL || s->metas == NULL || s->s3 == NULL) {
		snprintf(err, errsize, "out of memory (S3 client)");
		op_close(&s->base);
		return OXST_E_NOMEM;
	}
	/* the cache: a local store this replica alone uses (its lock says so), verified in the
	 * background, whose models may always be evicted (the bucket keeps them) */
	oxst_local_options lo = {.budget = opt->cache_budget, .evict_models = true,
	                              .verify = false, .verify_background = true, .no_sync = true};
	oxst_status st = oxst_local_open(&s->cache, opt->cache_dir, &lo, err, errsize);
	if (st != OXST_OK) {
		op_close(&s->base);
		return st;
	}
	/* the first readiness probe starts now, in the background */
	s->probe_wanted = true;
	if (pthread_create(&s->prober, NULL, prober_main, s) != 0) {
		snprintf(err, errsize, "cannot start the readiness thread");
		op_close(&s->base);
		return OXST_E_NOMEM;
	}
	s->prober_started = true;
	*out = &s->base;
	return OXST_OK;
}
