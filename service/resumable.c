/*
 * resumable.c — resumable uploads (issue 23, docs/api.md "Resumable uploads"): the tus
 * 1.0.0 protocol (core, creation, termination, expiration) with one rule of S3 multipart
 * added: a file goes up in parts of a fixed size, one part per PATCH, so that each maps
 * to one object-store part — or, with a local store, one part as pieces sent at once
 * (Upload-Piece; decision 79), acknowledged as the part they cover.
 *
 *   POST   /uploads          Upload-Length + Upload-Metadata "sha256 <b64>, filename <b64>,
 *                            structure <b64>": 200 + the model when the server holds the
 *                            file already (nothing is sent twice), else 201 (new) or 200
 *                            (one in progress for the same file: its offset) with
 *                            Location /uploads/{uid}, Upload-Offset, Upload-Part-Size.
 *                            A model or a data file without sha256 (decision 97: its
 *                            parts go while the client still hashes it) is named by its
 *                            last part's Upload-Sha256, checked as the POST's sha256 is
 *   HEAD   /uploads/{uid}    Upload-Offset, Upload-Length, Upload-Expires (GET: as JSON)
 *   PATCH  /uploads/{uid}    Upload-Offset + the next part (application/offset+octet-
 *                            stream), or a piece of it (Upload-Piece: 1, Upload-Offset
 *                            inside the part; 204, the offset unchanged, until the
 *                            pieces cover it): 204 + the new offset once the part is on disk
 *                            (fdatasync, then the state file); the last part: the SHA-256
 *                            of the whole is checked and the file is stored as a model
 *                            exactly as POST /models stores it (201/200 + its summary)
 *   DELETE /uploads/{uid}    204
 *
 * One writer per upload (issue 35, decision 83): {uid} in the URL is a secret of 128
 * random bits told only to the client that started the upload (the store knows it by a
 * hash of it: uid_of_secret); a client resumes by its URL, and every POST that does not
 * find the file stored starts an upload of its own.  Each client (quota.h) has at most
 * --uploads-per-client in progress (429), one with nothing acknowledged expires after
 * --upload-start-expiry, and new uploads stop (503) once as many are known as
 * --max-connections clients each within its quota hold.  One PATCH at a time per upload
 * (409 upload_busy to the other; with an S3 store across replicas too: a lease in the
 * state object, s3.c).
 *
 * The parts and the state of an upload are the store's (oxst.h, the ops xfer_*;
 * docs/decisions.md): the local store writes the file in place under
 * <store>/uploads/<uid>/, an S3 store sends each part as a multipart part and keeps the
 * state as an object, so that any replica takes the next part.  The state carries the
 * running SHA-256 as its midstate: a part is hashed as it arrives, wherever it arrives.
 * Here, under <store>/uploads/ (an S3 store: under its cache folder):
 *   blobs/<sha256> the data files of bundles (kind data), until a manifest takes them
 *   links          structures proven to be whole models' structures (service/links.c:
 *                  their URLs redirect to it; GET /models lists the model once)
 * A part cut short is not acknowledged: the part is sent again.  After kill -9 the state
 * says what was acknowledged.  Uploads past their expiry are aborted by the sweep's
 * thread (sweep_pass: at start, then every half the shorter expiry, 1 s to a minute, at
 * most SWEEP_READS state reads a pass), never on an HTTP thread.
 */
#include "service/resumable.h"
#include "parser/oxp.h"
#include "render/oxr.h"
#include "service/clock.h"
#include "service/config.h"
#include "service/bundle.h"
#include "service/hash.h"
#include "service/links.h"
#include "service/log.h"
#include "service/models.h"
#include "service/quota.h"
#include "service/reply.h"
#include "service/request.h"
#include "service/router.h"
#include "service/server.h"
#include "service/upload.h"
#include "store/oxst.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/random.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#define UID_LEN 32
/* The URL's secret: 32 hex digits from 16 random bytes (getrandom), as tusd's ids. */
#define SECRET_LEN 32
/* state reads of one pass of the expiry sweep (an object store: one GET each) */
#define SWEEP_READS 256
/* parts of an object store's uploads staged at once (each a part-sized temporary of
 * the cache until the object store took it): more answer 503 */
#define MAX_REMOTE_PARTS 16
#define MAX_MANIFEST OXS_MANIFEST_MAX /* a bundle's manifest (bundle.h) */

/* An upload's state (the store keeps it).  kind: "model"; "data": a data file of a
 * bundle, kept as a blob by its SHA-256; "bundle": the manifest of a model and its data
 * files. */
typedef oxst_xfer upstate;

/* Pieces of one part arriving at once (more: 409 upload_busy), and the ranges kept of
 * those received (arriving + kept stay within MAX_KEPT; past it the kept ones are
 * forgotten: their bytes are sent again). */
#define MAX_ARRIVING 8
#define MAX_KEPT 16
#define PART_UNKNOWN UINT64_MAX

typedef struct { uint64_t a, b; } range;

/* An upload in progress this process knows (it started it, a request reached it, or the
 * sweep found it in the store): counted against its owner's quota while known.  A request
 * holds it whole (one PATCH of a whole part, or the commit of a part whose pieces are
 * in), or pieces of its current part arrive at once (Upload-Piece: ranges of the part at
 * part_at, each written in place; the part is hashed and acknowledged when the received
 * ones cover it). */
typedef struct active {
	char uid[UID_LEN + 1];
	bool busy;
	bool counted;     /* one of owner's OXS_Q_UPLOADS */
	bool acked;       /* a part acknowledged (else it expires after --upload-start-expiry) */
	bool seen;        /* the sweep's mark: listed in the store by its last pass */
	int64_t expires;  /* the state's, as last read or written here */
	oxs_client owner;
	uint64_t part_at; /* the offset this process last acknowledged, or PART_UNKNOWN */
	unsigned narr, nkept;
	range arr[MAX_ARRIVING]; /* arriving: disjoint */
	range kept[MAX_KEPT];    /* received: disjoint, not touching */
} active;

struct oxs_resumable {
	char dir[PATH_MAX / 2]; /* <store>/uploads (shorter than PATH_MAX: paths below it fit) */
	char blobs[PATH_MAX / 2 + 8]; /* dir/blobs (bundle.c) */
	oxst_store *store;
	uint64_t part_size, max_total;
	unsigned expiry, start_expiry;
	bool derived_ids;          /* config's test_derived_upload_ids (fuzz_http) */
	unsigned streams;          /* pieces of one part a client may send at once */
	atomic_uint parts_staged;  /* parts of remote uploads arriving now */
	oxs_quota *quota;          /* the server's (OXS_Q_UPLOADS) */
	pthread_mutex_t mu;
	active *act;               /* uploads in progress known here (no order) */
	size_t nact, capact;
	size_t max_new;            /* uploads started only while fewer are known (503 past it) */
	/* the expiry sweep's thread: every `every_ms`, SWEEP_READS state reads at most */
	pthread_t sweeper;
	pthread_cond_t cv;
	bool sweeping, stop;
	unsigned every_ms;
	size_t cursor;             /* where the next pass starts reading in the store's list */
	int64_t blobs_swept;       /* the last sweep of blobs (Unix seconds) */
	oxs_links *links; /* structures proven to be whole models' (links.c) */
	atomic_uint_fast64_t started, resumed, held, completed, expired, aborted, refused, bytes;
	atomic_uint_fast64_t parts, parts_busy; /* parts acknowledged; refused as too many */
	atomic_uint_fast64_t pieces; /* pieces received whole */
	atomic_uint_fast64_t over_quota, full; /* POST /uploads refused: 429, 503 */
	atomic_uint_fast64_t sweeps, sweep_reads;
};

/* What one request carries: POST /uploads (the claimed state) or a PATCH (its part). */
struct oxs_rpatch {
	char uid[UID_LEN + 1]; /* the store's name of the upload (uid_of_secret) */
	oxs_client owner;      /* POST /uploads: the client starting it */
	upstate st;
	bool claimed; /* holds the busy mark of uid */
	bool staged;  /* counted in parts_staged */
	bool piece;   /* a piece of the part at st.offset: [pa, pb) */
	bool piece_on; /* its range is registered as arriving */
	bool late;    /* st.sha256 is this request's Upload-Sha256 (decision 97): a claim no
	               * byte has been checked against yet */
	uint64_t pa, pb, part_fd_at; /* part_fd_at: where the part starts in fd */
	int fd;       /* PATCH: where the part goes (the store's xfer_part_fd) */
	uint64_t at, want, got;
	oxst_sha256 sha; /* the running hash, from the state's midstate */
	int werr;     /* errno of a failed write, 0 */
	/* a bundle being stored: its manifest (its blobs go once the model is stored) */
	oxs_manifest man;
};

/* ---------------------------------------------------------------------------------------
 * Files
 */
/* One writer per upload (issue 35): the upload's URL is /uploads/<secret>, 128 random
 * bits only its creator is told; the store knows the upload by its uid, the first 32 hex
 * digits of SHA-256("onnxviz-upload/2 <secret>"), so neither the store's names (a
 * bucket listing, the uploads folder, the logs) nor a model's id give the URL. */
static void uid_of_secret(const char *secret, char out[UID_LEN + 1])
{
	char text[64];
	int n = snprintf(text, sizeof(text), "onnxviz-upload/2 %s", secret);
	char hex[OXST_ID_LEN + 1]; /* oxs_sha256_hex writes all 64 digits first */
	oxs_sha256_hex(text, (size_t)n, hex, OXST_ID_LEN);
	memcpy(out, hex, UID_LEN);
	out[UID_LEN] = '\0';
}

/* A new secret (SECRET_LEN hex digits); false when the kernel gave no randomness. */
static bool new_secret(char out[SECRET_LEN + 1])
{
	unsigned char rnd[SECRET_LEN / 2];
	size_t got = 0;
	while (got < sizeof(rnd)) {
		ssize_t n = getrandom(rnd + got, sizeof(rnd) - got, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return false;
		got += (size_t)n;
	}
	oxs_hex(out, rnd, sizeof(rnd));
	return true;
}

static oxst_status state_read(const oxs_resumable *rs, const char *uid, upstate *st)
{
	return rs->store->ops->xfer_get(rs->store, uid, st);
}

/* The file's name as kept: no control characters, no newline. */
static void set_name(upstate *st, const char *s, size_t n)
{
	size_t o = 0;
	for (size_t i = 0; i < n && o + 1 < sizeof(st->name); i++)
		if ((unsigned char)s[i] >= 0x20 && s[i] != 0x7f)
			st->name[o++] = s[i];
	st->name[o] = '\0';
}

/* ---------------------------------------------------------------------------------------
 * Uploads this process knows (mu held)
 */
static active *find_active(oxs_resumable *rs, const char *uid)
{
	for (size_t i = 0; i < rs->nact; i++)
		if (strcmp(rs->act[i].uid, uid) == 0)
			return &rs->act[i];
	return NULL;
}

/* Forget uid: its owner's count goes back. */
static void forget_active(oxs_resumable *rs, const char *uid)
{
	active *a = find_active(rs, uid);
	if (a == NULL)
		return;
	if (a->counted)
		oxs_quota_give(rs->quota, &a->owner, OXS_Q_UPLOADS, 1);
	*a = rs->act[--rs->nact];
}

/* A new entry, not counted (the table grows: what bounds it is the quota, and --
 * max_new -- the uploads a POST may add); NULL when out of memory. */
static active *new_active(oxs_resumable *rs, const char *uid)
{
	if (rs->nact == rs->capact) {
		size_t cap = rs->capact ? 2 * rs->capact : 256;
		active *n = realloc(rs->act, cap * sizeof(*n));
		if (n == NULL)
			return NULL;
		rs->act = n;
		rs->capact = cap;
	}
	active *a = &rs->act[rs->nact++];
	memset(a, 0, sizeof(*a));
	memcpy(a->uid, uid, UID_LEN + 1);
	a->part_at = PART_UNKNOWN;
	a->seen = true;
	return a;
}

/* uid as its state says (a request reached it, or the sweep found it: an upload another
 * replica started, or one from before a restart): known from now on, and counted against
 * the owner the state names while that owner is within its quota.  NULL when out of
 * memory. */
static active *know(oxs_resumable *rs, const char *uid, const upstate *st)
{
	active *a = find_active(rs, uid);
	if (a == NULL && (a = new_active(rs, uid)) != NULL && oxs_client_from_hex(st->owner, &a->owner))
		a->counted = oxs_quota_take(rs->quota, &a->owner, OXS_Q_UPLOADS, 1, NULL);
	if (a != NULL) {
		a->expires = st->expires;
		a->acked = a->acked || st->offset > 0;
	}
	return a;
}

/* Mark uid busy: CLAIM_BUSY when another request holds it or pieces of it are arriving,
 * CLAIM_GONE when it is not known (finished, deleted or expired meanwhile). */
typedef enum { CLAIM_OK, CLAIM_BUSY, CLAIM_GONE } claim_verdict;

static claim_verdict claim(oxs_resumable *rs, const char *uid)
{
	pthread_mutex_lock(&rs->mu);
	active *a = find_active(rs, uid);
	claim_verdict v = a == NULL ? CLAIM_GONE : a->busy || a->narr > 0 ? CLAIM_BUSY : CLAIM_OK;
	if (v == CLAIM_OK)
		a->busy = true;
	pthread_mutex_unlock(&rs->mu);
	return v;
}

static void release(oxs_resumable *rs, const char *uid)
{
	pthread_mutex_lock(&rs->mu);
	active *a = find_active(rs, uid);
	if (a != NULL)
		a->busy = false;
	pthread_mutex_unlock(&rs->mu);
}

/* Seconds until the first upload of c (NULL: any client's not yet acknowledged) expires,
 * from 1 to --upload-start-expiry: the Retry-After of a refused POST /uploads. */
static unsigned retry_after(oxs_resumable *rs, const oxs_client *c)
{
	int64_t now = (int64_t)time(NULL), best = rs->start_expiry;
	pthread_mutex_lock(&rs->mu);
	for (size_t i = 0; i < rs->nact; i++) {
		const active *a = &rs->act[i];
		bool mine = c != NULL ? a->counted && memcmp(a->owner.k, c->k, OXS_CLIENT_KEY) == 0
		                      : !a->acked;
		if (mine && a->expires - now < best)
			best = a->expires - now;
	}
	pthread_mutex_unlock(&rs->mu);
	return best < 1 ? 1 : (unsigned)best;
}

/* Pieces: one part sent in several requests at once (Upload-Piece; --upload-streams).
 * Each registers its range of the part first: disjoint from the pieces arriving (two
 * writers of one byte could not both be before the part's hash), anywhere else.  A piece
 * received joins the union of those received; once the union covers the part no piece
 * registers while others arrive (they drain), and the last to arrive commits the part,
 * holding the upload whole meanwhile (the last cut short: the next piece registered
 * does).  A piece sent again, or cut another way, only adds to the union. */
typedef enum { PIECE_OK, PIECE_BUSY, PIECE_MOVED, PIECE_GONE } piece_verdict;

static bool overlaps(uint64_t a, uint64_t b, uint64_t c, uint64_t d)
{
	return a < d && c < b;
}

/* The received pieces cover the part (want bytes from part_at). */
static bool covered(const active *e, uint64_t want)
{
	for (unsigned i = 0; i < e->nkept; i++)
		if (e->kept[i].a <= e->part_at && e->kept[i].b >= e->part_at + want)
			return true;
	return false;
}

/* [a, b) of the part at `part` (the state's offset when the request began); *moved: the
 * offset this process acknowledged since (PIECE_MOVED). */
static piece_verdict piece_register(oxs_resumable *rs, const char *uid, uint64_t part,
                                    uint64_t want, uint64_t a, uint64_t b, uint64_t *moved)
{
	pthread_mutex_lock(&rs->mu);
	active *e = find_active(rs, uid);
	piece_verdict v = PIECE_OK;
	if (e == NULL) {
		v = PIECE_GONE; /* finished, deleted or expired since its state was read */
	} else if (e->busy || e->narr == MAX_ARRIVING) {
		v = PIECE_BUSY;
	} else if (e->part_at != PART_UNKNOWN && e->part_at != part) {
		v = PIECE_MOVED;
		*moved = e->part_at;
	} else if (e->narr > 0 && e->part_at == part && covered(e, want)) {
		v = PIECE_BUSY; /* complete: the pieces still arriving drain, then it is stored */
	} else {
		for (unsigned i = 0; i < e->narr; i++)
			if (overlaps(a, b, e->arr[i].a, e->arr[i].b))
				v = PIECE_BUSY;
	}
	if (v == PIECE_OK) {
		e->part_at = part;
		if (e->nkept + e->narr >= MAX_KEPT)
			e->nkept = 0; /* cut too finely: start the union again (each arriving piece
			                 can then add one range) */
		e->arr[e->narr++] = (range){a, b};
	}
	pthread_mutex_unlock(&rs->mu);
	return v;
}

/* The arriving piece [a, b) is done: gone from those arriving, and (received) joined to
 * the union of the received ones. */
static void piece_done(active *e, uint64_t a, uint64_t b, bool received)
{
	for (unsigned i = 0; i < e->narr; i++)
		if (e->arr[i].a == a && e->arr[i].b == b) {
			e->arr[i] = e->arr[--e->narr];
			break;
		}
	if (!received)
		return;
	for (unsigned i = 0; i < e->nkept;) {
		if (e->kept[i].a <= b && a <= e->kept[i].b) { /* overlapping or touching */
			a = e->kept[i].a < a ? e->kept[i].a : a;
			b = e->kept[i].b > b ? e->kept[i].b : b;
			e->kept[i] = e->kept[--e->nkept];
		} else {
			i++;
		}
	}
	e->kept[e->nkept++] = (range){a, b}; /* room: nkept + narr stayed within MAX_KEPT */
}

/* The piece [a, b) arrived whole.  True when the received pieces now cover the part
 * (want bytes from its offset): the caller then holds the upload (busy) and commits the
 * part. */
static bool piece_received(oxs_resumable *rs, const char *uid, uint64_t a, uint64_t b,
                           uint64_t want)
{
	pthread_mutex_lock(&rs->mu);
	active *e = find_active(rs, uid);
	bool whole = false;
	if (e != NULL) {
		piece_done(e, a, b, true);
		whole = e->narr == 0 && !e->busy && covered(e, want);
		if (whole)
			e->busy = true;
	}
	pthread_mutex_unlock(&rs->mu);
	return whole;
}

/* A piece cut short or refused: its range is free again. */
static void piece_forget(oxs_resumable *rs, const char *uid, uint64_t a, uint64_t b)
{
	pthread_mutex_lock(&rs->mu);
	active *e = find_active(rs, uid);
	if (e != NULL)
		piece_done(e, a, b, false);
	pthread_mutex_unlock(&rs->mu);
}

/* A part was committed (next: the new offset) or its commit failed (PART_UNKNOWN: the
 * state says); the pieces of the part before are gone either way. */
static void settle(oxs_resumable *rs, const char *uid, uint64_t next)
{
	pthread_mutex_lock(&rs->mu);
	active *e = find_active(rs, uid);
	if (e != NULL) {
		e->nkept = 0;
		e->narr = 0;
		e->part_at = next;
		if (next != PART_UNKNOWN) { /* acknowledged: kept --upload-expiry from now */
			e->acked = true;
			e->expires = (int64_t)time(NULL) + rs->expiry;
		}
	}
	pthread_mutex_unlock(&rs->mu);
}

/* Give up an upload and what the store holds of it (the caller holds it, or it is
 * expired and not busy). */
static void remove_upload(oxs_resumable *rs, const char *uid)
{
	oxst_status s = rs->store->ops->xfer_abort(rs->store, uid);
	if (s != OXST_OK) {
		char extra[96];
		snprintf(extra, sizeof(extra), ",\"upload\":\"%s\",\"status\":\"%s\"", uid,
		         oxst_status_name(s));
		oxs_log("warn", "resumable upload: cannot remove its parts (the expiry sweep retries)",
		        extra);
	}
}

/* Remove uid, expired (its state read before: st, or s not OXST_OK when unreadable), when
 * no request holds it and its state, read again once held, still says so (a part may
 * have been acknowledged meanwhile, here or on another replica). */
static void expire_one(oxs_resumable *rs, const char *uid)
{
	pthread_mutex_lock(&rs->mu);
	active *a = find_active(rs, uid);
	bool held = a != NULL && (a->busy || a->narr > 0);
	if (a == NULL && (a = new_active(rs, uid)) == NULL)
		held = true; /* out of memory: the next pass */
	if (!held)
		a->busy = true;
	pthread_mutex_unlock(&rs->mu);
	if (held)
		return;
	upstate st;
	oxst_status s = state_read(rs, uid, &st);
	atomic_fetch_add(&rs->sweep_reads, 1);
	bool gone = s == OXST_E_IO || (s == OXST_OK && st.expires <= (int64_t)time(NULL));
	if (gone)
		remove_upload(rs, uid);
	pthread_mutex_lock(&rs->mu);
	if (gone || s == OXST_E_NOT_FOUND) {
		forget_active(rs, uid);
	} else {
		a = s == OXST_OK ? know(rs, uid, &st) : find_active(rs, uid);
		if (a != NULL)
			a->busy = false;
	}
	pthread_mutex_unlock(&rs->mu);
	if (!gone)
		return;
	atomic_fetch_add(&rs->expired, 1);
	char extra[96];
	snprintf(extra, sizeof(extra), ",\"upload\":\"%s\"", uid);
	oxs_log("info", s == OXST_OK ? "resumable upload expired" : "resumable upload unreadable: removed", extra);
}

/* One pass of the expiry sweep (its thread, off the HTTP threads; issue 35): list the
 * store's uploads; forget those known here that are gone from it (finished or deleted
 * on another replica: their owners' counts go back); read at most SWEEP_READS states —
 * only of uploads not known here (learned, and counted against their owners: another
 * replica's, or from before a restart) or known to be past their expiry (removed unless
 * a part came meanwhile); those known alive cost nothing.  The next pass reads on from
 * where this one stopped. */
static void sweep_pass(oxs_resumable *rs)
{
	int64_t now = (int64_t)time(NULL);
	atomic_fetch_add(&rs->sweeps, 1);
	size_t max = rs->max_new + 4096;
	char(*uids)[UID_LEN + 1] = calloc(max, sizeof(*uids));
	size_t n = 0;
	if (uids == NULL)
		return;
	pthread_mutex_lock(&rs->mu);
	for (size_t i = 0; i < rs->nact; i++) /* those held now may not be listed yet */
		rs->act[i].seen = rs->act[i].busy || rs->act[i].narr > 0;
	pthread_mutex_unlock(&rs->mu);
	bool listed = rs->store->ops->xfer_list(rs->store, uids, max, &n) == OXST_OK;
	if (!listed)
		n = 0;
	/* which to read: unknown, or known and past their expiry */
	size_t reads = 0, from = n > 0 ? rs->cursor % n : 0, k = 0;
	char(*due)[UID_LEN + 1] = calloc(SWEEP_READS, sizeof(*due));
	pthread_mutex_lock(&rs->mu);
	for (size_t i = 0; i < n; i++) {
		active *a = find_active(rs, uids[i]);
		if (a != NULL)
			a->seen = true;
	}
	for (; due != NULL && k < n && reads < SWEEP_READS; k++) {
		const char *uid = uids[(from + k) % n];
		const active *a = find_active(rs, uid);
		if (a == NULL || a->expires <= now)
			memcpy(due[reads++], uid, UID_LEN + 1);
	}
	rs->cursor = n > 0 ? (from + k) % n : 0;
	/* known here, no request on them, not in a whole listing: gone from the store */
	for (size_t i = 0; listed && n < max && i < rs->nact;)
		if (!rs->act[i].seen)
			forget_active(rs, rs->act[i].uid); /* the last moves to i */
		else
			i++;
	pthread_mutex_unlock(&rs->mu);
	free(uids);
	for (size_t i = 0; i < reads; i++) {
		upstate st;
		oxst_status s = state_read(rs, due[i], &st);
		atomic_fetch_add(&rs->sweep_reads, 1);
		if (s == OXST_OK && st.expires > now) {
			pthread_mutex_lock(&rs->mu);
			(void)know(rs, due[i], &st);
			pthread_mutex_unlock(&rs->mu);
		} else if (s == OXST_OK || s == OXST_E_IO) {
			expire_one(rs, due[i]);
		}
	}
	free(due);
	/* blobs: at most every half expiry or minute (an object store lists them) */
	int64_t every = rs->expiry / 2 < 60 ? (int64_t)rs->expiry / 2 : 60;
	if (rs->blobs_swept != 0 && now - rs->blobs_swept < every)
		return;
	rs->blobs_swept = now;
	/* the store's blobs (an object store's data files) past their expiry */
	uint64_t gone = 0;
	if (rs->store->ops->blob_expire(rs->store, now - (int64_t)rs->expiry, &gone) == OXST_OK)
		atomic_fetch_add(&rs->expired, gone);
	/* data files no bundle took */
	char blobs[PATH_MAX];
	snprintf(blobs, sizeof(blobs), "%s/blobs", rs->dir);
	int bfd = open(blobs, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = bfd >= 0 ? fdopendir(bfd) : NULL;
	if (d == NULL) {
		if (bfd >= 0)
			close(bfd);
		return;
	}
	for (struct dirent *e; (e = readdir(d)) != NULL;) {
		struct stat sb;
		if (e->d_name[0] == '.' || fstatat(bfd, e->d_name, &sb, AT_SYMLINK_NOFOLLOW) != 0 ||
		    (int64_t)sb.st_mtime + rs->expiry > now)
			continue;
		if (unlinkat(bfd, e->d_name, 0) == 0)
			atomic_fetch_add(&rs->expired, 1);
	}
	closedir(d);
}

/* ---------------------------------------------------------------------------------------
 * Structures and their whole models: service/links.c proves and keeps the links
 */
bool oxs_resumable_moved(oxs_resumable *rs, const char *id, char full[OXST_ID_LEN + 1])
{
	return rs != NULL && oxs_links_moved(rs->links, id, full);
}

/* ---------------------------------------------------------------------------------------
 * A structure that lies about its weights (issue 23): the byte ranges its external
 * tensors claim in the file must lie within the file's length and must not overlap.
 */
typedef struct xrange {
	uint64_t off, len;
	oxp_str name;
} xrange;

typedef struct xranges {
	xrange *r;
	size_t n, cap;
	bool failed;
	const char *file; /* the file's name: the location the structure's tensors give */
} xranges;

static void ranges_tensor(xranges *x, const oxp_tensor *t)
{
	oxp_external e;
	oxp_ext_rule rule;
	oxp_error err;
	if (t == NULL || t->data_location != 1 || oxp_external_parse(t, &e, &rule, &err) != OXP_OK ||
	    e.location.len != strlen(x->file) || memcmp(e.location.p, x->file, e.location.len) != 0)
		return; /* not a range of this file (the parser judges the rest when read) */
	if (x->n == x->cap) {
		size_t cap = x->cap ? 2 * x->cap : 64;
		xrange *n = realloc(x->r, cap * sizeof(*n));
		if (n == NULL) {
			x->failed = true;
			return;
		}
		x->r = n;
		x->cap = cap;
	}
	x->r[x->n++] = (xrange){e.offset, e.length, t->name};
}

static void ranges_nodes(xranges *x, const oxp_node *nodes, size_t n, int depth);

static void ranges_graph(xranges *x, const oxp_graph *g, int depth)
{
	if (g == NULL || depth > 64)
		return;
	for (size_t i = 0; i < g->ninitializers; i++)
		ranges_tensor(x, &g->initializers[i]);
	for (size_t i = 0; i < g->nsparse_initializers; i++) {
		ranges_tensor(x, g->sparse_initializers[i].values);
		ranges_tensor(x, g->sparse_initializers[i].indices);
	}
	ranges_nodes(x, g->nodes, g->nnodes, depth);
}

static void ranges_nodes(xranges *x, const oxp_node *nodes, size_t n, int depth)
{
	for (size_t i = 0; i < n; i++) {
		for (size_t k = 0; k < nodes[i].nattrs; k++) {
			const oxp_attr *a = &nodes[i].attrs[k];
			ranges_tensor(x, a->t);
			for (size_t j = 0; j < a->ntensors; j++)
				ranges_tensor(x, &a->tensors[j]);
			if (a->sparse_tensor != NULL)
				ranges_tensor(x, a->sparse_tensor->values);
			ranges_graph(x, a->g, depth + 1);
			for (size_t j = 0; j < a->ngraphs; j++)
				ranges_graph(x, &a->graphs[j], depth + 1);
		}
	}
}

static int cmp_range(const void *a, const void *b)
{
	const xrange *x = a, *y = b;
	return x->off < y->off ? -1 : x->off > y->off ? 1 : 0;
}

/* The structure's external ranges against the file's length: false after a 422 naming
 * the tensor and the rule (past_end, overlap), or a 503 when they could not be held. */
static bool structure_honest(oxs_req *r, const upstate *st)
{
	oxs_server *srv = r->srv;
	oxs_mentry *e = NULL;
	if (oxs_models_get(srv->models, srv->store, st->structure, NULL, &e, NULL) != OXST_OK)
		return true; /* not a model the store holds: it is not linked either */
	const oxp_model_proto *mp = oxp_model_proto_get(oxs_mentry_model(e));
	xranges x = {NULL, 0, 0, false, st->name};
	if (mp != NULL) {
		ranges_graph(&x, mp->graph, 0);
		for (size_t i = 0; i < mp->nfunctions; i++)
			ranges_nodes(&x, mp->functions[i].nodes, mp->functions[i].nnodes, 1);
	}
	bool ok = true;
	if (!x.failed && x.n > 1) /* no ranges: x.r is NULL, which qsort must not get */
		qsort(x.r, x.n, sizeof(*x.r), cmp_range);
	/* far: the range reaching farthest so far (in file order, an empty one reaches
	 * nothing: a range is compared with every one before it, not only the last) */
	const xrange *far = NULL;
	for (size_t i = 0; ok && !x.failed && i < x.n; i++) {
		const xrange *c = &x.r[i];
		if (c->len > st->length || c->off > st->length - c->len) {
			oxs_reply_error(r, 422, "structure_lies", ",\"rule\":\"past_end\"",
			                "tensor '%.*s' of the structure claims bytes %" PRIu64 "..%" PRIu64
			                " of %s, which has %" PRIu64 " bytes",
			                (int)(c->name.len > 200 ? 200 : c->name.len), c->name.p, c->off,
			                c->off + c->len, st->name, st->length);
			ok = false;
		} else if (far != NULL && c->off < far->off + far->len && c->len > 0) {
			oxs_reply_error(r, 422, "structure_lies", ",\"rule\":\"overlap\"",
			                "tensor '%.*s' of the structure claims bytes from %" PRIu64
			                ", inside those of '%.*s'",
			                (int)(c->name.len > 200 ? 200 : c->name.len), c->name.p, c->off,
			                (int)(far->name.len > 200 ? 200 : far->name.len), far->name.p);
			ok = false;
		} else if (far == NULL || c->off + c->len > far->off + far->len) {
			far = c; /* within the file (checked above): no overflow */
		}
	}
	if (x.failed) { /* the ranges could not be held: judged by nothing, so not begun */
		oxs_reply_error(r, 503, "out_of_memory", "", "out of memory");
		ok = false;
	}
	free(x.r);
	oxs_models_release(srv->models, e);
	return ok;
}

/* ---------------------------------------------------------------------------------------
 * Replies
 */
static void http_date(int64_t t, char *out, size_t size)
{
	time_t tt = (time_t)t;
	struct tm tm;
	gmtime_r(&tt, &tm);
	strftime(out, size, "%a, %d %b %Y %H:%M:%S GMT", &tm);
}

static void add_header_u64(oxs_req *r, const char *name, uint64_t v)
{
	char buf[32];
	snprintf(buf, sizeof(buf), "%" PRIu64, v);
	if (r->reply != NULL)
		MHD_add_response_header(r->reply, name, buf);
}

/* The tus headers every answer about an upload carries. */
static void add_upload_headers(oxs_req *r, const upstate *st)
{
	if (r->reply == NULL)
		return;
	MHD_add_response_header(r->reply, "Tus-Resumable", "1.0.0");
	MHD_add_response_header(r->reply, "Cache-Control", "no-store");
	add_header_u64(r, "Upload-Offset", st->offset);
	add_header_u64(r, "Upload-Length", st->length);
	add_header_u64(r, "Upload-Part-Size", st->part);
	add_header_u64(r, "Upload-Part-Streams", r->srv->rs->streams);
	char date[64];
	http_date(st->expires, date, sizeof(date));
	MHD_add_response_header(r->reply, "Upload-Expires", date);
}

static void reply_state(oxs_req *r, unsigned status, const char *uid, const upstate *st)
{
	oxr_buf b;
	/* the name (at most 255 bytes) may escape six-fold (\u00XX) */
	oxr_buf_init(&b, 4096);
	char date[64];
	http_date(st->expires, date, sizeof(date));
	oxr_buf_printf(&b,
	               "{\"upload\":\"%s\",\"location\":\"/uploads/%s\",\"offset\":%" PRIu64
	               ",\"length\":%" PRIu64 ",\"part_size\":%" PRIu64 ",\"streams\":%u"
	               ",\"sha256\":%s%s%s,\"expires\":\"%s\",\"name\":",
	               uid, uid, st->offset, st->length, st->part, r->srv->rs->streams,
	               st->sha256[0] ? "\"" : "null", st->sha256, st->sha256[0] ? "\"" : "", date);
	oxr_json_string(&b, st->name, strlen(st->name));
	oxr_buf_printf(&b, ",\"kind\":\"%s\",\"structure\":", st->kind);
	if (st->structure[0] != '\0')
		oxr_buf_printf(&b, "\"%s\"}\n", st->structure);
	else
		oxr_buf_printf(&b, "null}\n");
	oxs_reply_json(r, status, &b);
	add_upload_headers(r, st);
	if (r->reply != NULL && status == 201) {
		char loc[64];
		snprintf(loc, sizeof(loc), "/uploads/%s", uid);
		MHD_add_response_header(r->reply, "Location", loc);
	}
}

static void reply_204(oxs_req *r)
{
	struct MHD_Response *resp = MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
	if (resp == NULL) {
		oxs_reply_error(r, 503, "out_of_memory", "", "out of memory");
		return;
	}
	oxs_response_common(resp, NULL);
	oxs_reply(r, 204, resp, 0);
}

static void reply_io(oxs_req *r, oxst_status s, const char *what)
{
	if (s == OXST_E_NOSPACE)
		oxs_reply_error(r, 507, "insufficient_storage", "", "%s: no space left", what);
	else
		oxs_reply_store_error(r, s, what);
}

/* 200 + the stored model's id: the server holds the file (nothing is sent twice). */
static void reply_stored(oxs_req *r, const upstate *st)
{
	oxr_buf b;
	oxr_buf_init(&b, 256);
	oxr_buf_printf(&b, "{\"id\":\"%s\",\"stored\":true,\"links\":{\"self\":\"/models/%s\"}}\n",
	               st->sha256, st->sha256);
	oxs_reply_json(r, 200, &b);
	if (r->reply != NULL) {
		char loc[OXST_ID_LEN + 16];
		snprintf(loc, sizeof(loc), "/models/%s", st->sha256);
		MHD_add_response_header(r->reply, "Location", loc);
		MHD_add_response_header(r->reply, "Tus-Resumable", "1.0.0");
		MHD_add_response_header(r->reply, "Cache-Control", "no-store");
	}
}

/* ---------------------------------------------------------------------------------------
 * Blobs: the data files of bundles, kept by SHA-256 under uploads/blobs/ until a bundle
 * takes them (or they expire)
 */
/* OXST_OK when the blob of sha is there with `length` bytes (bundle.c). */
static oxst_status blob_stat(const oxs_resumable *rs, const char *sha, uint64_t length)
{
	return oxs_blob_stat(rs->blobs, sha, length);
}

static void reply_blob(oxs_req *r, unsigned status, const upstate *st)
{
	oxr_buf b;
	oxr_buf_init(&b, 256);
	oxr_buf_printf(&b, "{\"sha256\":\"%s\",\"size\":%" PRIu64 ",\"kind\":\"data\",\"stored\":true}\n",
	               st->sha256, st->length);
	oxs_reply_json(r, status, &b);
	if (r->reply != NULL) {
		MHD_add_response_header(r->reply, "Tus-Resumable", "1.0.0");
		MHD_add_response_header(r->reply, "Cache-Control", "no-store");
	}
}

/* ---------------------------------------------------------------------------------------
 * POST /uploads
 */

/* A file's SHA-256 as a client names it (hex digits of either case) into out, lowercased
 * (v and out may be the same): false unless it is an id, and not the 64 zeros that mark an
 * upload not named yet in its state (store/xfer.c): no file hashes to them. */
static bool claim_parse(const char *v, char out[OXST_ID_LEN + 1])
{
	if (strlen(v) != OXST_ID_LEN)
		return false;
	for (size_t i = 0; i <= OXST_ID_LEN; i++)
		out[i] = (char)(v[i] >= 'A' && v[i] <= 'F' ? v[i] + 32 : v[i]);
	return oxst_id_valid(out) && strspn(out, "0") != OXST_ID_LEN;
}

/* A tus metadata value (base64) into out; false when malformed or too long. */
static bool b64_decode(const char *s, size_t n, char *out, size_t size)
{
	size_t o = 0;
	unsigned acc = 0, bits = 0;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		unsigned v;
		if (c >= 'A' && c <= 'Z')
			v = (unsigned)(c - 'A');
		else if (c >= 'a' && c <= 'z')
			v = (unsigned)(c - 'a') + 26;
		else if (c >= '0' && c <= '9')
			v = (unsigned)(c - '0') + 52;
		else if (c == '+' || c == '-')
			v = 62;
		else if (c == '/' || c == '_')
			v = 63;
		else if (c == '=')
			break;
		else
			return false;
		acc = (acc << 6) | v;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			if (o + 1 >= size)
				return false;
			out[o++] = (char)((acc >> bits) & 0xff);
		}
	}
	out[o] = '\0';
	return memchr(out, '\0', o) == NULL;
}

/* Upload-Metadata: "key b64, key b64, ...": sha256 (required), filename, structure. */
static bool parse_metadata(const char *h, upstate *st, char *err, size_t errsize)
{
	char sha[OXST_ID_LEN + 8] = "", structure[OXST_ID_LEN + 8] = "", name[OXST_META_STR * 2] = "";
	char kind[16] = "model";
	for (const char *p = h; *p != '\0';) {
		while (*p == ' ' || *p == ',')
			p++;
		if (*p == '\0')
			break;
		size_t kn = strcspn(p, " ,");
		const char *v = p + kn;
		while (*v == ' ')
			v++;
		size_t vn = *v == ',' ? 0 : strcspn(v, " ,");
		char *out = NULL;
		size_t osize = 0;
		if (kn == 6 && memcmp(p, "sha256", 6) == 0)
			out = sha, osize = sizeof(sha);
		else if (kn == 9 && memcmp(p, "structure", 9) == 0)
			out = structure, osize = sizeof(structure);
		else if (kn == 8 && memcmp(p, "filename", 8) == 0)
			out = name, osize = sizeof(name);
		else if (kn == 4 && memcmp(p, "kind", 4) == 0)
			out = kind, osize = sizeof(kind);
		if (out != NULL && !b64_decode(v, vn, out, osize)) {
			snprintf(err, errsize, "Upload-Metadata: the value of %.*s is not base64 of a "
			         "short text", (int)kn, p);
			return false;
		}
		p = v + vn;
	}
	/* a model or a bundle's data file may start unnamed (decision 97): its last part
	 * names it; a manifest is sent once every hash is known (it lists them) */
	bool unnamed = sha[0] == '\0' && strcmp(kind, "bundle") != 0;
	if (!unnamed && !claim_parse(sha, sha)) {
		snprintf(err, errsize, "Upload-Metadata: sha256 (the file's SHA-256 as 64 hex "
		         "digits, base64-encoded as tus wants) is missing or malformed%s",
		         sha[0] == '\0' ? " (only a model or a data file may leave it to its last "
		                          "part's Upload-Sha256)" : "");
		return false;
	}
	if (structure[0] != '\0' && !oxst_id_valid(structure)) {
		snprintf(err, errsize, "Upload-Metadata: structure is not a model id");
		return false;
	}
	if (strcmp(kind, "model") != 0 && strcmp(kind, "data") != 0 && strcmp(kind, "bundle") != 0) {
		snprintf(err, errsize, "Upload-Metadata: kind is model (the default), data or bundle");
		return false;
	}
	snprintf(st->kind, sizeof(st->kind), "%s", kind);
	memcpy(st->sha256, sha, OXST_ID_LEN + 1);
	memcpy(st->structure, structure, strlen(structure) + 1);
	const char *base = name;
	for (const char *c = name; *c; c++)
		if (*c == '/' || *c == '\\')
			base = c + 1;
	set_name(st, base, strlen(base));
	return true;
}

/* The request's upload object (freed by oxs_resumable_cleanup); NULL after a reply. */
static oxs_rpatch *new_rpatch(oxs_req *r)
{
	oxs_rpatch *p = calloc(1, sizeof(*p));
	if (p == NULL) {
		oxs_reply_error(r, 503, "out_of_memory", "", "out of memory");
		return NULL;
	}
	p->fd = -1;
	r->rp = p;
	return p;
}

static bool tus_version_ok(oxs_req *r)
{
	const char *v = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, "Tus-Resumable");
	if (v == NULL || strcmp(v, "1.0.0") == 0)
		return true;
	oxs_reply_error(r, 412, "tus_version", "", "Tus-Resumable: this server speaks 1.0.0");
	if (r->reply != NULL)
		MHD_add_response_header(r->reply, "Tus-Version", "1.0.0");
	return false;
}

/* A new upload of p->st's file for the request's client (p->owner), its URL's secret
 * told only in this answer: every POST that does not find the file stored starts one of
 * its own (issue 35: nobody else can write into it, or end it).  Refused: 429 past the
 * client's --uploads-per-client, 503 when as many uploads are known as the table is
 * sized for (both with Retry-After: when the first that would make room expires); never
 * a leak: the entry and the count go again on every path that does not create it. */
static void start_upload(oxs_req *r)
{
	oxs_resumable *rs = r->srv->rs;
	oxs_rpatch *p = r->rp;
	upstate *st = &p->st;
	char secret[SECRET_LEN + 1];
	if (rs->derived_ids) { /* fuzz_http's seeds: the old derived id, which they compute */
		char text[128], hex[OXST_ID_LEN + 1];
		int n = snprintf(text, sizeof(text), "onnxviz-upload/1 %s %" PRIu64, st->sha256, st->length);
		oxs_sha256_hex(text, (size_t)n, hex, OXST_ID_LEN);
		snprintf(secret, sizeof(secret), "%.*s", SECRET_LEN, hex);
	} else if (!new_secret(secret)) {
		oxs_reply_error(r, 503, "no_randomness", "", "cannot make the upload's id; retry");
		oxs_resume(r);
		return;
	}
	uid_of_secret(secret, p->uid);
	upstate cur;
	if (rs->derived_ids && state_read(rs, p->uid, &cur) == OXST_OK) { /* a seed again */
		reply_state(r, 200, secret, &cur);
		oxs_resume(r);
		return;
	}
	uint64_t held = 0, limit = oxs_quota_limit(rs->quota, OXS_Q_UPLOADS);
	pthread_mutex_lock(&rs->mu);
	bool room = rs->nact < rs->max_new && find_active(rs, p->uid) == NULL;
	bool mine = room && oxs_quota_take(rs->quota, &p->owner, OXS_Q_UPLOADS, 1, &held);
	active *a = mine ? new_active(rs, p->uid) : NULL;
	if (a != NULL) {
		a->busy = a->counted = true;
		a->owner = p->owner;
	} else if (mine) {
		oxs_quota_give(rs->quota, &p->owner, OXS_Q_UPLOADS, 1);
	}
	pthread_mutex_unlock(&rs->mu);
	if (!room || (!mine && held < limit) || (mine && a == NULL)) {
		bool full = !room;
		atomic_fetch_add(&rs->full, full);
		oxs_reply_error(r, 503, full ? "uploads_full" : "out_of_memory", "",
		                full ? "the server has as many uploads in progress as it takes; retry"
		                     : "out of memory");
		char ra[16];
		snprintf(ra, sizeof(ra), "%u", full ? retry_after(rs, NULL) : 1);
		if (r->reply != NULL)
			MHD_add_response_header(r->reply, "Retry-After", ra);
		oxs_resume(r);
		return;
	}
	if (!mine) {
		atomic_fetch_add(&rs->over_quota, 1);
		oxs_reply_error(r, 429, "too_many_uploads", "",
		                "%" PRIu64 " uploads of this client are in progress (--uploads-per-client "
		                "%" PRIu64 "): finish or DELETE one, or retry once one expires",
		                held, limit);
		char ra[16];
		snprintf(ra, sizeof(ra), "%u", retry_after(rs, &p->owner));
		if (r->reply != NULL)
			MHD_add_response_header(r->reply, "Retry-After", ra);
		oxs_resume(r);
		return;
	}
	p->claimed = true;
	/* nothing acknowledged yet: kept --upload-start-expiry, then --upload-expiry from
	 * each part */
	upstate fresh = *st;
	int64_t now = (int64_t)time(NULL);
	oxst_xfer_init(st, fresh.length, oxst_s3_part_for(fresh.length, rs->part_size), now,
	               rs->start_expiry < rs->expiry ? rs->start_expiry : rs->expiry);
	memcpy(st->sha256, fresh.sha256, sizeof(st->sha256));
	memcpy(st->structure, fresh.structure, sizeof(st->structure));
	memcpy(st->name, fresh.name, sizeof(st->name));
	memcpy(st->kind, fresh.kind, sizeof(st->kind));
	oxs_client_hex(&p->owner, st->owner);
	bool created = false;
	oxst_status s = rs->store->ops->xfer_create(rs->store, p->uid, st, &created);
	if (s != OXST_OK || !created) { /* !created: a uid taken, which 128 random bits make moot */
		if (s == OXST_OK)
			remove_upload(rs, p->uid);
		pthread_mutex_lock(&rs->mu);
		forget_active(rs, p->uid);
		pthread_mutex_unlock(&rs->mu);
		p->claimed = false;
		if (s == OXST_OK)
			oxs_reply_error(r, 503, "busy", "", "cannot start the upload; retry");
		else
			reply_io(r, s, "cannot start the upload");
		oxs_resume(r);
		return;
	}
	pthread_mutex_lock(&rs->mu);
	a = find_active(rs, p->uid);
	if (a != NULL)
		a->expires = st->expires;
	pthread_mutex_unlock(&rs->mu);
	atomic_fetch_add(&rs->started, 1);
	reply_state(r, 201, secret, st);
	oxs_resume(r);
}

/* POST /uploads of a file the server holds already (a data file: as a blob): answered
 * with it (true; nothing is sent twice), or with the store's error. */
static bool answered_held(oxs_req *r)
{
	oxs_server *srv = r->srv;
	oxs_resumable *rs = srv->rs;
	upstate *st = &r->rp->st;
	oxst_store *store = srv->store;
	bool data = strcmp(st->kind, "data") == 0;
	oxst_status have = data ? blob_stat(rs, st->sha256, st->length)
	                       : store->ops->stat_model(store, st->sha256, OXST_STAT_FRESH, NULL);
	if (data && have == OXST_E_NOT_FOUND) /* an object store's blob, whichever replica took it */
		have = store->ops->blob_stat(store, st->sha256, st->length);
	if (have == OXST_OK && data) {
		atomic_fetch_add(&rs->held, 1);
		reply_blob(r, 200, st);
		return true;
	}
	if (have == OXST_OK) {
		/* a structure named for a stored model: linked only when the stored bytes prove
		 * it (links.c), never on the claim */
		if (st->structure[0] != '\0' && strcmp(st->structure, st->sha256) != 0)
			(void)oxs_links_prove(rs->links, st->structure, st->sha256, st->name);
		atomic_fetch_add(&rs->held, 1);
		reply_stored(r, st);
		return true;
	}
	if (have != OXST_E_NOT_FOUND) {
		oxs_reply_store_error(r, have, "cannot look the model up in the store");
		return true;
	}
	return false;
}

static void create_job(oxs_req *r)
{
	oxs_resumable *rs = r->srv->rs;
	upstate *st = &r->rp->st;
	/* a model not named yet (decision 97) has nothing to look up */
	if (st->sha256[0] != '\0' && answered_held(r)) {
		oxs_resume(r);
		return;
	}
	if (st->structure[0] != '\0' && strcmp(st->kind, "model") == 0 && !structure_honest(r, st)) {
		atomic_fetch_add(&rs->refused, 1);
		oxs_resume(r);
		return;
	}
	start_upload(r);
}

void oxs_resumable_create(oxs_req *r)
{
	oxs_server *srv = r->srv;
	oxs_resumable *rs = srv->rs;
	if (!tus_version_ok(r))
		return;
	if (!oxs_rate_allow(r))
		return;
	const char *len = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, "Upload-Length");
	if (MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, "Upload-Defer-Length") != NULL) {
		oxs_reply_error(r, 400, "bad_upload", "", "Upload-Defer-Length: the length must be known");
		return;
	}
	char *end = NULL;
	errno = 0;
	unsigned long long n = len != NULL && len[0] >= '0' && len[0] <= '9' ? strtoull(len, &end, 10) : 0;
	if (len == NULL || end == NULL || *end != '\0' || errno != 0 || n == 0 ||
	    n > ((uint64_t)1 << 50)) {
		oxs_reply_error(r, 400, "bad_upload", "", "Upload-Length: the file's size in bytes (1 or more)");
		return;
	}
	const char *meta = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, "Upload-Metadata");
	oxs_rpatch *p = new_rpatch(r);
	if (p == NULL)
		return;
	p->st.length = n;
	char err[300];
	if (!parse_metadata(meta != NULL ? meta : "", &p->st, err, sizeof(err))) {
		oxs_reply_error(r, 400, "bad_upload", "", "%s", err);
		return;
	}
	if (strcmp(p->st.kind, "bundle") == 0 && n > MAX_MANIFEST) {
		oxs_reply_error(r, 413, "upload_too_large", "",
		                "a bundle's manifest is at most %" PRIu64 " bytes", MAX_MANIFEST);
		return;
	}
	if (rs->max_total != 0 && n > rs->max_total) {
		oxs_reply_error(r, 413, "upload_too_large", "",
		                "the file (%llu bytes) is larger than --max-resumable (%" PRIu64 " bytes)",
		                n, rs->max_total);
		return;
	}
	oxst_stats ss;
	srv->store->ops->stats(srv->store, &ss);
	if (ss.budget != 0 && n > ss.budget) {
		oxs_reply_error(r, 507, "insufficient_storage", "",
		                "the file (%llu bytes) is larger than the store's budget (%" PRIu64
		                " bytes, --store-budget)", n, ss.budget);
		return;
	}
	struct statvfs vfs;
	bool here = !srv->store->ops->remote || oxst_s3_part_for(n, rs->part_size) < OXST_S3_MIN_PART;
	if (here && statvfs(rs->dir, &vfs) == 0 && (uint64_t)vfs.f_bavail * vfs.f_frsize < n) {
		oxs_reply_error(r, 507, "insufficient_storage", "",
		                "the file (%llu bytes) does not fit the disk (%" PRIu64 " bytes free)",
		                n, (uint64_t)vfs.f_bavail * vfs.f_frsize);
		return;
	}
	memcpy(r->id, p->st.sha256, OXST_ID_LEN + 1);
	oxs_client_of(r, &p->owner);
	oxs_defer(r, srv->work, create_job);
}

/* ---------------------------------------------------------------------------------------
 * GET/HEAD, DELETE /uploads/{uid}
 */

/* The state of the upload whose URL's secret is the path's (uid: its store name), known
 * from now on (counted against its owner), answering 404 when there is none or it
 * expired (the sweep removes it, off this thread).  admin: the path may also be the store
 * name itself (the admin token's DELETE of an upload it has no URL of: the names are in
 * the log and the store).  False after a reply. */
static bool find_upload(oxs_req *r, upstate *st, char uid[UID_LEN + 1], bool admin)
{
	oxs_resumable *rs = r->srv->rs;
	if (!oxst_xfer_uid_valid(r->param)) {
		oxs_reply_error(r, 404, "upload_not_found", "", "no such upload");
		return false;
	}
	uid_of_secret(r->param, uid);
	oxst_status s = state_read(rs, uid, st);
	if (s == OXST_E_NOT_FOUND && admin) {
		memcpy(uid, r->param, UID_LEN + 1);
		s = state_read(rs, uid, st);
	}
	if (s == OXST_OK && st->expires <= (int64_t)time(NULL))
		s = OXST_E_NOT_FOUND;
	if (s == OXST_E_NOT_FOUND || s == OXST_E_IO) {
		oxs_reply_error(r, 404, "upload_not_found", "",
		                "no such upload (it finished, expired or was deleted)");
		if (r->reply != NULL)
			MHD_add_response_header(r->reply, "Tus-Resumable", "1.0.0");
		return false;
	}
	if (s != OXST_OK) {
		reply_io(r, s, "cannot read the upload");
		return false;
	}
	pthread_mutex_lock(&rs->mu);
	bool known = know(rs, uid, st) != NULL;
	pthread_mutex_unlock(&rs->mu);
	if (!known) {
		oxs_reply_error(r, 503, "out_of_memory", "", "out of memory");
		return false;
	}
	return true;
}

/* An answer for an upload that went between its state's read and its claim. */
static void reply_gone(oxs_req *r)
{
	oxs_reply_error(r, 404, "upload_not_found", "",
	                "no such upload (it finished, expired or was deleted)");
	if (r->reply != NULL)
		MHD_add_response_header(r->reply, "Tus-Resumable", "1.0.0");
}

void oxs_resumable_get(oxs_req *r)
{
	upstate st;
	char uid[UID_LEN + 1];
	if (!find_upload(r, &st, uid, false))
		return;
	atomic_fetch_add(&r->srv->rs->resumed, 1);
	reply_state(r, 200, r->param, &st);
}

/* DELETE: by the upload's creator (the URL's secret), or by the admin token (the store's
 * name of it); nobody else can name it. */
void oxs_resumable_delete(oxs_req *r)
{
	oxs_resumable *rs = r->srv->rs;
	upstate st;
	char uid[UID_LEN + 1];
	if (!tus_version_ok(r) || !find_upload(r, &st, uid, oxs_authorize(r, OXS_ACCESS_ADMIN) == 0))
		return;
	claim_verdict v = claim(rs, uid);
	if (v == CLAIM_GONE) {
		reply_gone(r);
		return;
	}
	if (v == CLAIM_BUSY) {
		oxs_reply_error(r, 409, "upload_busy", "", "a part of this upload is arriving");
		return;
	}
	remove_upload(rs, uid);
	pthread_mutex_lock(&rs->mu);
	forget_active(rs, uid);
	pthread_mutex_unlock(&rs->mu);
	atomic_fetch_add(&rs->aborted, 1);
	reply_204(r);
	if (r->reply != NULL)
		MHD_add_response_header(r->reply, "Tus-Resumable", "1.0.0");
}

/* ---------------------------------------------------------------------------------------
 * PATCH /uploads/{uid}
 */
static bool parse_u64(const char *s, uint64_t *out)
{
	if (s == NULL || *s < '0' || *s > '9' || strlen(s) > 19)
		return false;
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno != 0 || *end != '\0')
		return false;
	*out = v;
	return true;
}

/* The bytes of the part at st->offset: a part, the last one the rest. */
static uint64_t part_len(const upstate *st)
{
	return st->length - st->offset < st->part ? st->length - st->offset : st->part;
}

/* Where p's bytes go: the store's place for the part at st->offset, and in it for the
 * bytes from `offset` on (a piece: its place in the part).  false: answered. */
static bool open_part(oxs_req *r, oxs_rpatch *p, const upstate *st, uint64_t offset)
{
	oxst_store *store = r->srv->store;
	uint64_t at = 0;
	oxst_status s = store->ops->xfer_part_fd(store, p->uid, st, &p->fd, &at);
	if (s != OXST_OK) {
		p->fd = -1;
		reply_io(r, s, "cannot open the upload");
		return false;
	}
	p->part_fd_at = at;
	p->at = at + (offset - st->offset);
	memcpy(r->id, st->sha256, OXST_ID_LEN + 1);
	return true;
}

/* A piece [offset, offset + clen) of the part at st->offset (want bytes), written in place
 * and hashed with the part when the pieces cover it (piece_job). */
static void piece_begin(oxs_req *r, const char *uid, const upstate *st, uint64_t offset,
                        uint64_t clen, uint64_t want)
{
	oxs_resumable *rs = r->srv->rs;
	if (offset < st->offset || offset - st->offset >= want) {
		oxs_reply_error(r, 409, "offset_mismatch", "",
		                "the part being sent is bytes %" PRIu64 "..%" PRIu64 ": a piece lies "
		                "inside it, not at %" PRIu64 " (Upload-Offset tells where to go on)",
		                st->offset, st->offset + want, offset);
		add_upload_headers(r, st);
		return;
	}
	if (clen == 0 || clen > st->offset + want - offset) {
		oxs_reply_error(r, clen == 0 ? 400 : 413, clen == 0 ? "bad_part_size" : "part_too_large",
		                "",
		                "the piece at byte %" PRIu64 " is %" PRIu64 " bytes: it ends past the "
		                "part (bytes %" PRIu64 "..%" PRIu64 ") or is empty",
		                offset, clen, st->offset, st->offset + want);
		add_upload_headers(r, st);
		return;
	}
	oxs_rpatch *p = new_rpatch(r);
	if (p == NULL)
		return;
	memcpy(p->uid, uid, UID_LEN + 1);
	p->st = *st;
	uint64_t moved = 0;
	piece_verdict v = piece_register(rs, p->uid, st->offset, want, offset, offset + clen, &moved);
	if (v == PIECE_GONE) {
		reply_gone(r);
		return;
	}
	if (v == PIECE_MOVED) {
		upstate now = *st;
		now.offset = moved;
		oxs_reply_error(r, 409, "offset_mismatch", "",
		                "the upload is at byte %" PRIu64 " now (Upload-Offset tells where to "
		                "go on)", moved);
		add_upload_headers(r, &now);
		return;
	}
	if (v == PIECE_BUSY) {
		oxs_reply_error(r, 409, "upload_busy", "",
		                "this part is being stored, or a piece overlapping bytes %" PRIu64
		                "..%" PRIu64 " is arriving (or %d pieces are)", offset, offset + clen,
		                MAX_ARRIVING);
		add_upload_headers(r, st);
		return;
	}
	p->piece = p->piece_on = true;
	p->pa = offset;
	p->pb = offset + clen;
	p->want = clen;
	(void)open_part(r, p, st, offset);
}

static void finish_upload(oxs_resumable *rs, oxs_rpatch *p, bool abort);

/* The last part of a model whose file the store holds already: a finish that stored it
 * and failed after (its answer a 5xx; the upload's file handed over to the model, never
 * written again), or the same file stored by another upload meanwhile.  The upload is
 * over: it goes, and the answer is the stored model's (true). */
static bool stored_meanwhile(oxs_req *r, oxs_rpatch *p, const upstate *st, uint64_t want)
{
	oxs_server *srv = r->srv;
	uint64_t size = 0;
	if (strcmp(st->kind, "model") != 0 || st->offset + want != st->length ||
	    srv->store->ops->stat_model(srv->store, st->sha256, OXST_STAT_FRESH, &size) != OXST_OK ||
	    size != st->length)
		return false;
	if (st->structure[0] != '\0' && strcmp(st->structure, st->sha256) != 0)
		(void)oxs_links_prove(srv->rs->links, st->structure, st->sha256, st->name);
	finish_upload(srv->rs, p, true);
	atomic_fetch_add(&srv->rs->held, 1);
	reply_stored(r, st);
	return true;
}

/* Upload-Sha256 (decision 97): the whole file's SHA-256, naming an upload begun without
 * one.  Every request of such an upload's last part carries it (any piece of the part may
 * be the one that completes it), and there it is the id the bytes received are checked
 * against, as a POST's sha256 is (422 checksum_mismatch, nothing kept): the server names
 * a model only by the hash it computed.  Elsewhere only its form is checked; on a named
 * upload it must be that name.  st->sha256 gets the claim on the last part (*late: it
 * did).  False after a 400. */
static bool take_claim(oxs_req *r, upstate *st, uint64_t want, bool *late)
{
	const char *v = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, "Upload-Sha256");
	char sha[OXST_ID_LEN + 1] = "";
	if (v != NULL && !claim_parse(v, sha)) {
		oxs_reply_error(r, 400, "bad_upload", "",
		                "Upload-Sha256: the file's SHA-256 as 64 hex digits");
		return false;
	}
	if (v != NULL && st->sha256[0] != '\0' && strcmp(sha, st->sha256) != 0) {
		oxs_reply_error(r, 400, "bad_upload", "",
		                "Upload-Sha256: this upload ends as %s (its POST's sha256), not %s",
		                st->sha256, sha);
		return false;
	}
	if (st->sha256[0] != '\0' || st->offset + want != st->length)
		return true;
	if (v == NULL) {
		oxs_reply_error(r, 400, "sha256_required", "",
		                "the last part of an upload begun without sha256 carries "
		                "Upload-Sha256: the file's SHA-256, the id it must hash to");
		add_upload_headers(r, st);
		return false;
	}
	memcpy(st->sha256, sha, sizeof(sha));
	*late = true;
	return true;
}

void oxs_resumable_patch_begin(oxs_req *r)
{
	oxs_server *srv = r->srv;
	oxs_resumable *rs = srv->rs;
	if (!oxs_authorize_body(r, oxs_route_at(r->route)))
		return;
	if (!tus_version_ok(r))
		return;
	const char *ct = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, "Content-Type");
	if (ct == NULL || strcasecmp(ct, "application/offset+octet-stream") != 0) {
		oxs_reply_error(r, 415, "unsupported_media_type", "",
		                "a part is sent as application/offset+octet-stream");
		return;
	}
	uint64_t offset = 0, clen = 0;
	if (!parse_u64(MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, "Upload-Offset"),
	               &offset)) {
		oxs_reply_error(r, 400, "bad_upload", "", "Upload-Offset: the part's offset in bytes");
		return;
	}
	if (!parse_u64(MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, "Content-Length"),
	               &clen)) {
		oxs_reply_error(r, 411, "length_required", "", "a part needs its Content-Length");
		return;
	}
	const char *piece = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, "Upload-Piece");
	if (piece != NULL && strcmp(piece, "1") != 0) {
		oxs_reply_error(r, 400, "bad_upload", "", "Upload-Piece: 1 marks a piece of a part");
		return;
	}
	if (piece != NULL && rs->streams < 2) {
		oxs_reply_error(r, 400, "pieces_unsupported", "",
		                "this server takes whole parts, one PATCH each (Upload-Part-Streams: 1)");
		return;
	}
	upstate st;
	char uid[UID_LEN + 1];
	if (!find_upload(r, &st, uid, false))
		return;
	uint64_t want = part_len(&st);
	bool late = false;
	if (!take_claim(r, &st, want, &late))
		return;
	if (piece != NULL) {
		piece_begin(r, uid, &st, offset, clen, want);
		if (r->rp != NULL)
			r->rp->late = late;
		return;
	}
	if (offset != st.offset) {
		oxs_reply_error(r, 409, "offset_mismatch", "",
		                "the upload is at byte %" PRIu64 ", not %" PRIu64 " (Upload-Offset "
		                "tells where to go on)", st.offset, offset);
		add_upload_headers(r, &st);
		return;
	}
	if (clen != want) {
		oxs_reply_error(r, clen > want ? 413 : 400, clen > want ? "part_too_large" : "bad_part_size",
		                "",
		                "the part at byte %" PRIu64 " is %" PRIu64 " bytes (parts are %" PRIu64
		                " bytes, the last one the rest), not %" PRIu64,
		                offset, want, st.part, clen);
		add_upload_headers(r, &st);
		return;
	}
	oxs_rpatch *p = new_rpatch(r);
	if (p == NULL)
		return;
	memcpy(p->uid, uid, UID_LEN + 1);
	p->st = st;
	claim_verdict cv = claim(rs, p->uid);
	if (cv == CLAIM_GONE) {
		reply_gone(r);
		return;
	}
	if (cv == CLAIM_BUSY) {
		oxs_reply_error(r, 409, "upload_busy", "", "another part of this upload is arriving");
		add_upload_headers(r, &st);
		return;
	}
	p->claimed = true;
	p->late = late;
	oxst_store *store = srv->store;
	if (store->ops->remote && st.part >= OXST_S3_MIN_PART) {
		/* a part staged on its way to the object store: a bounded number at once */
		if (atomic_fetch_add(&rs->parts_staged, 1) >= MAX_REMOTE_PARTS) {
			atomic_fetch_sub(&rs->parts_staged, 1);
			atomic_fetch_add(&rs->parts_busy, 1);
			oxs_reply_error(r, 503, "parts_busy", "",
			                "%d parts are on their way to the object store; retry", MAX_REMOTE_PARTS);
			if (r->reply != NULL)
				MHD_add_response_header(r->reply, "Retry-After", "1");
			add_upload_headers(r, &st);
			return;
		}
		p->staged = true;
	}
	/* (a claim of this request is checked against the bytes first: complete) */
	if (!late && stored_meanwhile(r, p, &st, want))
		return;
	if (!open_part(r, p, &st, st.offset))
		return;
	oxst_sha256_resume(&p->sha, st.h, st.offset); /* the hash goes on where it stopped */
	p->want = want;
}

bool oxs_resumable_patch_data(oxs_req *r, const char *data, size_t size)
{
	oxs_rpatch *p = r->rp;
	if (p->fd < 0 || p->werr != 0)
		return true; /* a reply is set; the rest is dropped */
	while (size > 0) {
		ssize_t w = pwrite(p->fd, data, size, (off_t)(p->at + p->got));
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			p->werr = w < 0 ? errno : EIO;
			return true;
		}
		if (!p->piece) /* a piece is hashed with its part, in order (piece_job) */
			oxst_sha256_update(&p->sha, data, (size_t)w);
		p->got += (uint64_t)w;
		data += w;
		size -= (size_t)w;
	}
	return true;
}

/* The upload is over (stored, or refused for what it is: abort, what the store holds of
 * it goes; a finish that failed otherwise: it stays, to be finished again) and this
 * process forgets it. */
static void finish_upload(oxs_resumable *rs, oxs_rpatch *p, bool abort)
{
	if (abort)
		remove_upload(rs, p->uid);
	pthread_mutex_lock(&rs->mu);
	forget_active(rs, p->uid);
	pthread_mutex_unlock(&rs->mu);
	p->claimed = false;
}

/* The end of the store of a whole file (oxs_upload_adopt*): stored as model id, or not
 * (id NULL: answered, r->status says how).  Stored, or refused for its content (4xx: the
 * parser's, a bundle's): the upload goes (a bundle's blobs with the model); a failure
 * of the server's (507, 5xx) leaves it whole: the last part sent again finishes it. */
static void on_stored(oxs_req *r, const char *id, bool created)
{
	(void)created;
	oxs_rpatch *p = r->rp;
	oxs_resumable *rs = r->srv->rs;
	if (id == NULL) {
		bool refused = r->status >= 400 && r->status < 500;
		if (refused)
			atomic_fetch_add(&rs->refused, 1);
		finish_upload(rs, p, refused);
		return;
	}
	atomic_fetch_add(&rs->completed, 1);
	if (p->man.files != NULL)
		oxs_bundle_release(rs->blobs, &p->man);
	finish_upload(rs, p, true);
	/* the structure the client named is linked only when the stored bytes prove it */
	if (p->st.structure[0] != '\0' && strcmp(p->st.structure, id) != 0)
		(void)oxs_links_prove(rs->links, p->st.structure, id, p->st.name);
}

/* A data file of a bundle has arrived: kept as a blob until its bundle's manifest. */
static void complete_blob(oxs_req *r, int fd, const char *spool)
{
	oxs_resumable *rs = r->srv->rs;
	oxs_rpatch *p = r->rp;
	close(fd);
	oxst_status s = oxs_blob_keep(rs->blobs, p->st.sha256, spool);
	if (s != OXST_OK) {
		(void)unlink(spool);
		reply_io(r, s, "cannot keep the data file");
		oxs_resume(r); /* the upload stays: the last part sent again keeps it */
		return;
	}
	finish_upload(rs, p, true);
	atomic_fetch_add(&rs->completed, 1);
	reply_blob(r, 201, &p->st);
	oxs_resume(r);
}

/* A refusal of the manifest for what it says: the upload goes. */
static void refuse_bundle(oxs_req *r, unsigned status, const char *code, const char *err)
{
	oxs_resumable *rs = r->srv->rs;
	finish_upload(rs, r->rp, true);
	atomic_fetch_add(&rs->refused, 1);
	oxs_reply_error(r, status, code, "", "%s", err);
	oxs_resume(r);
}

/* A bundle whose data files are the store's blobs (an object store: any replica took
 * them): the store makes the bundle from them and the model file itself, keys as
 * POST /models writes them; then it is parsed from the store like any resumable model. */
static void complete_bundle_stored(oxs_req *r, uint64_t total)
{
	oxs_server *srv = r->srv;
	oxs_rpatch *p = r->rp;
	oxst_store *store = srv->store;
	bool created = false;
	oxst_status s = store->ops->put_bundle(store, p->st.sha256, p->man.model_sha,
	                                       p->man.model_size, p->man.files, p->man.nfiles,
	                                       &created);
	if (s == OXST_E_NOT_FOUND) {
		char err[1400];
		oxs_bundle_missing(store, srv->rs->blobs, &p->man, err, sizeof(err));
		refuse_bundle(r, 422, "bundle_incomplete", err);
		return;
	}
	if (s != OXST_OK) {
		reply_io(r, s, "cannot assemble the bundle");
		oxs_resume(r);
		return;
	}
	memcpy(r->id, p->st.sha256, OXST_ID_LEN + 1);
	oxs_upload_adopt_stored(r, p->st.name, total, created, on_stored);
}

/* A bundle's manifest has arrived (fd: its bytes, handed over at spool): checked whole
 * before anything is touched (bundle.c), then the model file (stored, e.g. uploaded alone
 * first as the bundle's structure) and the data files (blobs) it lists make the model,
 * stored as POST /models stores a model with its data files. */
static void complete_bundle(oxs_req *r, int fd, const char *spool)
{
	oxs_server *srv = r->srv;
	oxs_resumable *rs = srv->rs;
	oxs_rpatch *p = r->rp;
	char *text = malloc((size_t)p->st.length);
	bool read_ok = text != NULL && pread(fd, text, (size_t)p->st.length, 0) == (ssize_t)p->st.length;
	close(fd);
	(void)unlink(spool); /* the upload keeps the bytes until the bundle is stored */
	if (!read_ok) {
		free(text);
		reply_io(r, text == NULL ? OXST_E_NOMEM : OXST_E_IO, "cannot read the manifest");
		oxs_resume(r);
		return;
	}
	unsigned status = 0;
	const char *code = NULL;
	char err[1400] = "";
	bool ok = oxs_manifest_parse(&p->man, text, (size_t)p->st.length, p->st.sha256, &status,
	                             &code, err, sizeof(err));
	free(text);
	if (!ok && status == 503) {
		oxs_reply_error(r, 503, code, "", "%s", err);
		oxs_resume(r);
		return;
	}
	if (!ok) {
		refuse_bundle(r, status, code, err);
		return;
	}
	/* every piece is here?  Here, or all in the store (an object store's blobs) */
	uint64_t total = p->man.model_size;
	size_t here = 0;
	for (size_t i = 0; i < p->man.nfiles; i++) {
		total += p->man.files[i].size;
		here += oxs_blob_stat(rs->blobs, p->man.files[i].sha256, p->man.files[i].size) == OXST_OK;
	}
	if (here < p->man.nfiles) {
		complete_bundle_stored(r, total);
		return;
	}
	if (!oxs_bundle_here(srv->store, rs->blobs, &p->man, err, sizeof(err))) {
		refuse_bundle(r, 422, "bundle_incomplete", err);
		return;
	}
	/* the model file into a spool file, the blobs copied into a spool folder */
	char mspool[PATH_MAX], dir[PATH_MAX];
	int sfd = -1;
	oxst_status s = oxs_bundle_assemble(srv->store, rs->blobs, &p->man, &sfd, mspool,
	                                    sizeof(mspool), dir, sizeof(dir));
	if (s != OXST_OK) {
		reply_io(r, s, "cannot assemble the bundle");
		oxs_resume(r);
		return;
	}
	memcpy(r->id, p->st.sha256, OXST_ID_LEN + 1);
	oxs_upload_adopt(r, sfd, mspool, dir, p->st.name, total, on_stored);
}

/* The last part is in: the whole file's hash, then the file is stored (a model exactly
 * as POST /models stores it; a data file as a blob; a manifest makes its bundle).  The
 * upload stays until then: a finish that fails is tried again with the last part. */
static void complete(oxs_req *r, const char *hex)
{
	oxs_server *srv = r->srv;
	oxs_resumable *rs = srv->rs;
	oxs_rpatch *p = r->rp;
	if (strcmp(hex, p->st.sha256) != 0) {
		finish_upload(rs, p, true); /* nothing is kept: the parts go too */
		atomic_fetch_add(&rs->refused, 1);
		oxs_reply_error(r, 422, "checksum_mismatch", ",\"rule\":\"sha256\"",
		                "the %" PRIu64 " bytes received hash to %s, not to the sha256 given "
		                "(%s): nothing is kept",
		                p->st.length, hex, p->st.sha256);
		oxs_resume(r);
		return;
	}
	/* named by its last part: stored meanwhile is told only now the bytes are its own */
	if (p->late && stored_meanwhile(r, p, &p->st, part_len(&p->st))) {
		oxs_resume(r);
		return;
	}
	char spool[PATH_MAX];
	int sfd = -1;
	bool created = false;
	oxst_status s = srv->store->ops->xfer_finish(srv->store, p->uid, &p->st, &sfd, spool,
	                                             sizeof(spool), &created);
	if (s != OXST_OK) {
		reply_io(r, s, "cannot store the upload");
		oxs_resume(r);
		return;
	}
	if (strcmp(p->st.kind, "data") == 0 && sfd >= 0) {
		complete_blob(r, sfd, spool);
		return;
	}
	if (strcmp(p->st.kind, "data") == 0) { /* the store keeps it as its blob */
		finish_upload(rs, p, true);
		atomic_fetch_add(&rs->completed, 1);
		reply_blob(r, 201, &p->st);
		oxs_resume(r);
		return;
	}
	if (strcmp(p->st.kind, "bundle") == 0 && sfd >= 0) {
		complete_bundle(r, sfd, spool);
		return;
	}
	if (strcmp(p->st.kind, "bundle") == 0) { /* a store always hands a manifest over */
		oxs_reply_error(r, 500, "internal", "", "the store kept no manifest");
		oxs_resume(r);
		return;
	}
	memcpy(r->id, p->st.sha256, OXST_ID_LEN + 1);
	if (sfd < 0) /* the object store assembled the model from its parts */
		oxs_upload_adopt_stored(r, p->st.name, p->st.length, created, on_stored);
	else
		oxs_upload_adopt(r, sfd, spool, NULL, p->st.name, p->st.length, on_stored);
}

/* The body could not be written: the answer says why (true). */
static bool write_failed(oxs_req *r, const char *what)
{
	if (r->rp->werr == 0)
		return false;
	reply_io(r, oxs_errno_status(r->rp->werr), what);
	oxs_resume(r);
	return true;
}

static void patch_job(oxs_req *r)
{
	oxs_resumable *rs = r->srv->rs;
	oxst_store *store = r->srv->store;
	oxs_rpatch *p = r->rp;
	if (write_failed(r, "cannot write the part"))
		return;
	upstate st = p->st;
	st.offset = p->st.offset + p->got;
	st.expires = (int64_t)time(NULL) + rs->expiry;
	bool last = st.offset == st.length;
	uint64_t hashed = 0;
	if (!last && !(oxst_sha256_midstate(&p->sha, st.h, &hashed) && hashed == st.offset)) {
		oxs_reply_error(r, 500, "internal", "", "the part does not end at a hash block");
		oxs_resume(r);
		return;
	}
	/* the last part is stored but not recorded: until the file is kept the state stays
	 * before it, and a retry sends it again */
	oxst_status s = store->ops->xfer_part_put(store, p->uid, &p->st, last ? NULL : &st, p->fd,
	                                          p->at, p->got);
	if (!last || s != OXST_OK)
		settle(rs, p->uid, s == OXST_OK ? st.offset : PART_UNKNOWN);
	if (s == OXST_E_NOT_FOUND) {
		oxs_reply_error(r, 404, "upload_not_found", "",
		                "no such upload (it finished, expired or was deleted)");
		oxs_resume(r);
		return;
	}
	if (s == OXST_E_BUSY) { /* an object store: another replica writes this part */
		oxs_reply_error(r, 409, "upload_busy", "",
		                "another request is storing this part (or stored it): ask HEAD where "
		                "the upload stands");
		add_upload_headers(r, &p->st);
		oxs_resume(r);
		return;
	}
	if (s != OXST_OK) {
		reply_io(r, s, "cannot record the part");
		oxs_resume(r);
		return;
	}
	close(p->fd);
	p->fd = -1;
	atomic_fetch_add(&rs->bytes, p->got);
	atomic_fetch_add(&rs->parts, 1);
	if (last) {
		char hex[OXST_ID_LEN + 1];
		oxst_sha256_final(&p->sha, hex);
		complete(r, hex);
		return;
	}
	p->st = st;
	reply_204(r);
	add_upload_headers(r, &st);
	oxs_resume(r);
}
/* A piece arrived whole: 204 with the offset unchanged, or — the pieces now cover the
 * part — the part is hashed and committed as one PATCH of it would be (patch_job). */
static void piece_job(oxs_req *r)
{
	oxs_resumable *rs = r->srv->rs;
	oxs_rpatch *p = r->rp;
	if (write_failed(r, "cannot write the piece"))
		return;
	atomic_fetch_add(&rs->pieces, 1);
	uint64_t want = part_len(&p->st);
	bool whole = piece_received(rs, p->uid, p->pa, p->pb, want);
	p->piece_on = false; /* received: in the union until the part is committed */
	if (!whole) {
		reply_204(r);
		add_upload_headers(r, &p->st);
		oxs_resume(r);
		return;
	}
	p->claimed = true; /* piece_received marked the upload busy */
	/* the part's bytes, written by its pieces, hashed in order from the state's midstate */
	oxst_sha256_resume(&p->sha, p->st.h, p->st.offset);
	errno = 0;
	if (!oxst_sha256_read(&p->sha, p->fd, p->part_fd_at, p->part_fd_at + want)) {
		settle(rs, p->uid, PART_UNKNOWN);
		reply_io(r, oxs_errno_status(errno != 0 ? errno : EIO), "cannot read the part back");
		oxs_resume(r);
		return;
	}
	p->at = p->part_fd_at;
	p->got = want;
	patch_job(r);
}

void oxs_resumable_patch_end(oxs_req *r)
{
	oxs_rpatch *p = r->rp;
	if (p == NULL || p->fd < 0) {
		oxs_reply_error(r, 500, "internal", "", "no part");
		return;
	}
	if (p->werr != 0) { /* the server's failure, not a short body: 5xx, the part sent again */
		reply_io(r, oxs_errno_status(p->werr), "cannot write the part");
		return;
	}
	if (p->got != p->want) {
		oxs_reply_error(r, 400, "bad_part_size", "", "the part ended after %" PRIu64 " of %" PRIu64
		                " bytes", p->got, p->want);
		return;
	}
	oxs_defer(r, r->srv->work, p->piece ? piece_job : patch_job);
}

void oxs_resumable_replied(oxs_req *r)
{
	oxs_rpatch *p = r->rp;
	/* the answer is on its way: the client may send its next part at once, maybe on
	 * another connection, before this request's completion is seen (cleanup): the busy
	 * mark goes now (nothing more is written by this request: its part is committed, or
	 * it was answered before its body) */
	if (p != NULL && p->claimed && (p->fd < 0 || p->got == p->want || p->werr != 0)) {
		release(r->srv->rs, p->uid);
		p->claimed = false;
	}
}

void oxs_resumable_cleanup(oxs_req *r)
{
	oxs_rpatch *p = r->rp;
	r->rp = NULL;
	if (p == NULL)
		return;
	if (p->fd >= 0)
		close(p->fd);
	if (p->staged)
		atomic_fetch_sub(&r->srv->rs->parts_staged, 1);
	if (p->claimed)
		release(r->srv->rs, p->uid);
	if (p->piece_on)
		piece_forget(r->srv->rs, p->uid, p->pa, p->pb);
	oxs_manifest_free(&p->man);
	free(p);
}

/* ---------------------------------------------------------------------------------------
 * Life and metrics
 */
/* The sweep's thread: a pass every every_ms until stopped. */
static void *sweeper(void *arg)
{
	oxs_resumable *rs = arg;
	pthread_mutex_lock(&rs->mu);
	while (!rs->stop) {
		struct timespec t;
		clock_gettime(CLOCK_MONOTONIC, &t);
		t.tv_sec += rs->every_ms / 1000;
		t.tv_nsec += (long)(rs->every_ms % 1000) * 1000000L;
		if (t.tv_nsec >= 1000000000L) {
			t.tv_sec++;
			t.tv_nsec -= 1000000000L;
		}
		(void)pthread_cond_timedwait(&rs->cv, &rs->mu, &t);
		if (rs->stop)
			break;
		pthread_mutex_unlock(&rs->mu);
		sweep_pass(rs);
		pthread_mutex_lock(&rs->mu);
	}
	pthread_mutex_unlock(&rs->mu);
	return NULL;
}

oxs_resumable *oxs_resumable_open(const oxs_config *c, oxst_store *store, oxs_quota *quota,
                                  char *err, size_t errsize)
{
	oxs_resumable *rs = calloc(1, sizeof(*rs));
	if (rs == NULL) {
		snprintf(err, errsize, "out of memory");
		return NULL;
	}
	bool s3 = strncmp(c->store, "s3://", 5) == 0;
	int n = snprintf(rs->dir, sizeof(rs->dir), "%s/uploads", s3 ? c->cache_dir : c->store);
	if (n < 0 || (size_t)n >= sizeof(rs->dir) || (mkdir(rs->dir, 0700) != 0 && errno != EEXIST)) {
		snprintf(err, errsize, "cannot create %s: %s", rs->dir, strerror(errno));
		free(rs);
		return NULL;
	}
	if (snprintf(rs->blobs, sizeof(rs->blobs), "%s/blobs", rs->dir) >= (int)sizeof(rs->blobs) ||
	    (mkdir(rs->blobs, 0700) != 0 && errno != EEXIST)) {
		snprintf(err, errsize, "cannot create %s/blobs: %s", rs->dir, strerror(errno));
		free(rs);
		return NULL;
	}
	rs->store = store;
	rs->quota = quota;
	rs->part_size = c->upload_part_size;
	rs->max_total = c->max_resumable;
	rs->expiry = c->upload_expiry;
	rs->start_expiry = c->upload_start_expiry;
	rs->derived_ids = c->test_derived_upload_ids;
	/* the uploads a POST may add to those known: what --max-connections clients each
	 * within --uploads-per-client hold (decision 83) */
	rs->max_new = (size_t)c->max_connections * c->uploads_per_client;
	/* a pass every half of the shorter expiry, from 1 s to a minute */
	unsigned shortest = rs->start_expiry < rs->expiry ? rs->start_expiry : rs->expiry;
	rs->every_ms = shortest >= 120 ? 60000 : shortest < 2 ? 1000 : shortest * 500;
	/* an object store's part is a temporary per request: pieces need the file in place */
	rs->streams = store->ops->remote ? 1 : c->upload_streams;
	pthread_mutex_init(&rs->mu, NULL);
	rs->links = oxs_links_open(rs->dir, store);
	if (rs->links == NULL) {
		snprintf(err, errsize, "out of memory");
		pthread_mutex_destroy(&rs->mu);
		free(rs->act);
		free(rs);
		return NULL;
	}
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&rs->cv, &ca);
	pthread_condattr_destroy(&ca);
	sweep_pass(rs); /* what is in progress counts against its owners from the start */
	rs->expired = 0; /* counted from now: the metrics are this process's */
	rs->sweeping = pthread_create(&rs->sweeper, NULL, sweeper, rs) == 0;
	if (!rs->sweeping) {
		snprintf(err, errsize, "cannot start the uploads' expiry sweep");
		oxs_resumable_free(rs);
		return NULL;
	}
	return rs;
}

void oxs_resumable_free(oxs_resumable *rs)
{
	if (rs == NULL)
		return;
	if (rs->sweeping) {
		pthread_mutex_lock(&rs->mu);
		rs->stop = true;
		pthread_cond_signal(&rs->cv);
		pthread_mutex_unlock(&rs->mu);
		pthread_join(rs->sweeper, NULL);
	}
	free(rs->act);
	oxs_links_free(rs->links);
	pthread_cond_destroy(&rs->cv);
	pthread_mutex_destroy(&rs->mu);
	free(rs);
}

void oxs_resumable_metrics(oxs_server *srv, oxr_buf *o)
{
	oxs_resumable *rs = srv->rs;
	if (rs == NULL)
		return;
	oxr_buf_printf(o, "# HELP onnxviz_resumable_uploads_total Resumable uploads (POST "
	               "/uploads) by event: started, resumed (GET/HEAD of one in progress), held (the "
	               "server had the file: nothing sent), completed, refused (hash or model), "
	               "expired, aborted (DELETE).\n# TYPE onnxviz_resumable_uploads_total counter\n");
	const struct {
		const char *name;
		atomic_uint_fast64_t *v;
	} ev[] = {{"started", &rs->started},     {"resumed", &rs->resumed},
	          {"held", &rs->held},           {"completed", &rs->completed},
	          {"refused", &rs->refused},     {"expired", &rs->expired},
	          {"aborted", &rs->aborted}};
	for (size_t i = 0; i < sizeof(ev) / sizeof(ev[0]); i++)
		oxr_buf_printf(o, "onnxviz_resumable_uploads_total{event=\"%s\"} %" PRIu64 "\n",
		               ev[i].name, (uint64_t)atomic_load(ev[i].v));
	oxr_buf_printf(o, "# HELP onnxviz_resumable_bytes_total Bytes of resumable upload parts "
	               "acknowledged.\n# TYPE onnxviz_resumable_bytes_total counter\n"
	               "onnxviz_resumable_bytes_total %" PRIu64 "\n",
	               (uint64_t)atomic_load(&rs->bytes));
	oxr_buf_printf(o, "# HELP onnxviz_resumable_parts_total Resumable upload parts by outcome: "
	               "stored (acknowledged), busy (503: too many on their way to the object "
	               "store at once).\n# TYPE onnxviz_resumable_parts_total counter\n"
	               "onnxviz_resumable_parts_total{outcome=\"stored\"} %" PRIu64 "\n"
	               "onnxviz_resumable_parts_total{outcome=\"busy\"} %" PRIu64 "\n",
	               (uint64_t)atomic_load(&rs->parts), (uint64_t)atomic_load(&rs->parts_busy));
	oxr_buf_printf(o, "# HELP onnxviz_resumable_pieces_total Pieces of resumable upload parts "
	               "received whole (a part sent in several requests at once, Upload-Piece).\n"
	               "# TYPE onnxviz_resumable_pieces_total counter\n"
	               "onnxviz_resumable_pieces_total %" PRIu64 "\n",
	               (uint64_t)atomic_load(&rs->pieces));
	uint64_t served = 0, pending = 0, dropped = 0;
	oxs_links_counts(rs->links, &served, &pending, &dropped);
	oxr_buf_printf(o, "# HELP onnxviz_structure_links Structures whose URLs redirect to their "
	               "whole model, by state: served (proven), pending (kept, checked again at "
	               "start and not served until proven).\n# TYPE onnxviz_structure_links gauge\n"
	               "onnxviz_structure_links{state=\"served\"} %" PRIu64 "\n"
	               "onnxviz_structure_links{state=\"pending\"} %" PRIu64 "\n"
	               "# HELP onnxviz_structure_links_dropped_total Kept links the start-up check "
	               "could not prove from the stored bytes (dropped and logged).\n"
	               "# TYPE onnxviz_structure_links_dropped_total counter\n"
	               "onnxviz_structure_links_dropped_total %" PRIu64 "\n",
	               served, pending, dropped);
	pthread_mutex_lock(&rs->mu);
	size_t known = rs->nact;
	pthread_mutex_unlock(&rs->mu);
	oxr_buf_printf(o, "# HELP onnxviz_resumable_refused_total POST /uploads refused: quota "
	               "(429, the client's --uploads-per-client), full (503, as many uploads "
	               "known as the table takes).\n# TYPE onnxviz_resumable_refused_total counter\n"
	               "onnxviz_resumable_refused_total{reason=\"quota\"} %" PRIu64 "\n"
	               "onnxviz_resumable_refused_total{reason=\"full\"} %" PRIu64 "\n"
	               "# HELP onnxviz_resumable_known Resumable uploads in progress this process "
	               "knows (each counted against its owner).\n# TYPE onnxviz_resumable_known "
	               "gauge\nonnxviz_resumable_known %zu\n"
	               "# HELP onnxviz_resumable_sweeps_total Passes of the expiry sweep's thread.\n"
	               "# TYPE onnxviz_resumable_sweeps_total counter\n"
	               "onnxviz_resumable_sweeps_total %" PRIu64 "\n"
	               "# HELP onnxviz_resumable_sweep_reads_total States the expiry sweep read (an "
	               "object store: one GET each).\n"
	               "# TYPE onnxviz_resumable_sweep_reads_total counter\n"
	               "onnxviz_resumable_sweep_reads_total %" PRIu64 "\n",
	               (uint64_t)atomic_load(&rs->over_quota), (uint64_t)atomic_load(&rs->full),
	               known, (uint64_t)atomic_load(&rs->sweeps),
	               (uint64_t)atomic_load(&rs->sweep_reads));
	oxr_buf_printf(o, "# HELP onnxviz_resumable_parts_staged Parts of resumable uploads on "
	               "their way to the object store now.\n# TYPE onnxviz_resumable_parts_staged "
	               "gauge\nonnxviz_resumable_parts_staged %u\n",
	               (unsigned)atomic_load(&rs->parts_staged));
}
