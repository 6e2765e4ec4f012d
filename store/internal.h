/*
 * internal.h — shared inside store/ only (and by its unit tests): the backends' common
 * pieces, the S3 client's encoding and XML helpers, and the hooks' callers.
 */
#ifndef OXST_INTERNAL_H
#define OXST_INTERNAL_H

#include "store/oxst.h"

/* The operations of an oxst_ops whose file defines each as static op_<name>
 * (local.c, s3.c): {.name = "...", OXST_OPS_OF_FILE}. */
#define OXST_OPS_OF_FILE                                                                    \
	.spool = op_spool, .put_model = op_put_model, .stat_model = op_stat_model,          \
	.put_meta = op_put_meta, .name_meta = op_name_meta, .open_model = op_open_model, .model_path = op_model_path,  \
	.list_models = op_list, .delete_model = op_delete,                                  \
	.get_rendering = op_get_rendering, .put_rendering = op_put_rendering,               \
	.stats = op_stats, .writable = op_writable, .close = op_close,                      \
	.spool_dir = op_spool_dir, .put_data = op_put_data, .open_data = op_open_data,    \
	.xfer_create = op_xfer_create, .xfer_get = op_xfer_get, .xfer_put = op_xfer_put,    \
	.xfer_part_fd = op_xfer_part_fd, .xfer_part_put = op_xfer_part_put,                 \
	.xfer_finish = op_xfer_finish, .xfer_abort = op_xfer_abort, .xfer_list = op_xfer_list, \
	.blob_stat = op_blob_stat, .put_bundle = op_put_bundle, .blob_expire = op_blob_expire

/* Append s percent-encoded for an S3 URL path or query (every byte but A-Za-z0-9-._~,
 * and '/' too unless keep_slash). */
bool oxst_s3_encode(oxr_buf *b, const char *s, bool keep_slash);
/* The canonical query string (pairs sorted by key, both encoded) of n key/value pairs
 * (kv[2i], kv[2i+1]; a NULL value is written as "key=") into out; false when too long. */
bool oxst_s3_query(char *out, size_t size, const char *const *kv, size_t n);
/* The text of the next <tag>...</tag> element at or after *p (before end), XML entities
 * decoded, into out; *p moves past it.  False when there is none or it does not fit. */
bool oxst_xml_next(const char **p, const char *end, const char *tag, char *out, size_t size);
/* The next <tag>...</tag> element's raw content [*begin, *stop); *p moves past it. */
bool oxst_xml_element(const char **p, const char *end, const char *tag, const char **begin,
                      const char **stop);
/* An ISO 8601 UTC time "2026-12-01T17:11:17.131Z" as Unix seconds; -1 when malformed. */
int64_t oxst_iso8601(const char *s);

/* A transfer's state as "key value" lines (the file or object the backends keep) and
 * back: false when it does not fit, or is malformed or incomplete. */
bool oxst_xfer_text(const oxst_xfer *x, char *out, size_t size, size_t *len);
bool oxst_xfer_parse(const char *text, size_t len, oxst_xfer *x);
/* True when x->h is no midstate (all zeros): a state written before it was kept. */
bool oxst_xfer_unhashed(const oxst_xfer *x);

/* The value of NAME in an environment (NULL-terminated "NAME=value" strings), or NULL. */
const char *oxst_env_get(char *const *envp, const char *name);
/* One header of a signed S3 request: its lowercase name and its value as sent. */
typedef struct oxst_s3_header {
	const char *name, *value;
} oxst_s3_header;
/* The Authorization header's value for a request under AWS Signature Version 4 (service
 * s3, s3client.c): path as sent (percent-encoded), query canonical (oxst_s3_query; "" for
 * none), the n headers signed (lowercase names, each once, at most 16; host, x-amz-date
 * and x-amz-content-sha256 among them), the payload's SHA-256 in hex, amz_date
 * "YYYYMMDDTHHMMSSZ".  False when something does not fit. */
bool oxst_s3_sign(const oxst_s3_config *cfg, const char *method, const char *path,
                  const char *query, const oxst_s3_header *h, size_t n,
                  const char *payload_sha, const char *amz_date, char *out, size_t size);
/* HMAC-SHA256 of msg under key (crypto.c). */
void oxst_hmac_sha256(const void *key, size_t klen, const void *msg, size_t mlen,
                      unsigned char out[32]);

/* Lowercase hex of n bytes into out (2n+1 bytes). */
void oxst_hex(char *out, const unsigned char *bytes, size_t n);
/* The monotonic clock. */
int64_t oxst_now_ms(void);
uint64_t oxst_now_ns(void);
/* Through the hooks (oxst_set_hooks). */
void oxst_log(const char *level, const char *msg, const char *extra);
void oxst_count_request(int op, uint64_t ns, int outcome);

#endif /* OXST_INTERNAL_H */
