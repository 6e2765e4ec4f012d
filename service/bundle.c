/*
 * bundle.c — a model and its data files sent resumably (bundle.h; issue 23 parts 4–5,
 * issue 35 item 6).  The page sends the model file alone first (its structure), then each
 * data file as an upload of kind data, kept here as a blob by its SHA-256, then the
 * manifest (kind bundle) naming them all: the manifest is checked whole before anything
 * is touched — a location that is a folder of another is 400 bad_location, as a multipart
 * POST /models answers — and the bundle is assembled from copies of the blobs, so the
 * blobs stay until the model is stored: a failed store (the budget, the disk) leaves
 * every piece for the manifest sent again.
 */
#include "service/bundle.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_BUNDLE_FILES 4096

oxst_status oxs_errno_status(int e)
{
	if (e == ENOENT)
		return OXST_E_NOT_FOUND;
	if (e == ENOSPC || e == EDQUOT || e == EFBIG)
		return OXST_E_NOSPACE;
	if (e == ENOMEM)
		return OXST_E_NOMEM;
	return OXST_E_IO;
}

/* ---------------------------------------------------------------------------------------
 * The manifest
 */
static int cmp_location(const void *a, const void *b)
{
	return strcmp(((const oxst_bundle_file *)a)->location, ((const oxst_bundle_file *)b)->location);
}

/* A location of m's (sorted) that is a folder of another's: "a" and "a/b" cannot both be
 * files.  NULL when none; *under gets the longer one. */
static const char *folder_of_another(const oxs_manifest *m, const char **under)
{
	for (size_t i = 0; i < m->nfiles; i++) {
		const char *loc = m->files[i].location;
		for (const char *c = strchr(loc, '/'); c != NULL; c = strchr(c + 1, '/')) {
			oxst_bundle_file key;
			size_t n = (size_t)(c - loc);
			memcpy(key.location, loc, n);
			key.location[n] = '\0';
			const oxst_bundle_file *f =
			    bsearch(&key, m->files, m->nfiles, sizeof(*m->files), cmp_location);
			if (f != NULL) {
				*under = loc;
				return f->location;
			}
		}
	}
	return NULL;
}

void oxs_manifest_free(oxs_manifest *m)
{
	free(m->files);
	m->files = NULL;
	m->nfiles = 0;
}

/* The manifest's lines into m; false with a message (422 bad_manifest). */
static bool parse_lines(oxs_manifest *m, char *text, char *err, size_t errsize)
{
	static const char head[] = "onnxviz-bundle/1\nmodel ";
	if (strncmp(text, head, sizeof(head) - 1) != 0) {
		snprintf(err, errsize, "the manifest does not start with \"onnxviz-bundle/1\\nmodel \"");
		return false;
	}
	char *line = text + sizeof(head) - 1, *end = NULL;
	size_t lines = 0;
	for (const char *c = line; *c != '\0'; c++)
		lines += *c == '\n';
	if (lines < 2 || lines - 1 > MAX_BUNDLE_FILES) {
		snprintf(err, errsize, "a manifest lists 1 to %d data files", MAX_BUNDLE_FILES);
		return false;
	}
	m->files = calloc(lines - 1, sizeof(*m->files));
	if (m->files == NULL) {
		snprintf(err, errsize, "out of memory");
		return false;
	}
	if (strlen(line) < OXST_ID_LEN + 3 || line[OXST_ID_LEN] != ' ')
		goto bad;
	memcpy(m->model_sha, line, OXST_ID_LEN);
	m->model_sha[OXST_ID_LEN] = '\0';
	errno = 0;
	m->model_size = strtoull(line + OXST_ID_LEN + 1, &end, 10);
	if (!oxst_id_valid(m->model_sha) || errno != 0 || *end != '\n' || m->model_size == 0)
		goto bad;
	for (line = end + 1; *line != '\0'; line = end + 1) {
		oxst_bundle_file *f = &m->files[m->nfiles];
		if (strncmp(line, "file ", 5) != 0 || strlen(line) < 5 + OXST_ID_LEN + 3 ||
		    line[5 + OXST_ID_LEN] != ' ')
			goto bad;
		memcpy(f->sha256, line + 5, OXST_ID_LEN);
		f->sha256[OXST_ID_LEN] = '\0';
		errno = 0;
		f->size = strtoull(line + 6 + OXST_ID_LEN, &end, 10);
		if (!oxst_id_valid(f->sha256) || errno != 0 || *end != ' ')
			goto bad;
		char *loc = end + 1;
		end = strchr(loc, '\n');
		if (end == NULL || (size_t)(end - loc) > OXST_LOCATION_MAX)
			goto bad;
		memcpy(f->location, loc, (size_t)(end - loc));
		f->location[end - loc] = '\0';
		const char *rule = NULL;
		if (!oxst_location_valid(f->location, &rule)) {
			snprintf(err, errsize, "the data file's location '%s' is refused (%s)", f->location,
			         rule ? rule : "invalid");
			return false;
		}
		m->nfiles++;
	}
	if (m->nfiles > 1)
		qsort(m->files, m->nfiles, sizeof(*m->files), cmp_location);
	for (size_t i = 1; i < m->nfiles; i++) {
		if (strcmp(m->files[i - 1].location, m->files[i].location) == 0) {
			snprintf(err, errsize, "the location '%s' is listed twice", m->files[i].location);
			return false;
		}
	}
	return true;
bad:
	snprintf(err, errsize, "malformed manifest line %zu (want \"file <sha256> <size> "
	         "<location>\")", m->nfiles + 2);
	return false;
}

bool oxs_manifest_parse(oxs_manifest *m, const char *text, size_t len, const char *id,
                        unsigned *status, const char **code, char *err, size_t errsize)
{
	memset(m, 0, sizeof(*m));
	*status = 422;
	*code = "bad_manifest";
	if (memchr(text, '\0', len) != NULL) {
		snprintf(err, errsize, "a NUL byte in the manifest");
		return false;
	}
	char *copy = malloc(len + 1);
	if (copy == NULL) {
		*status = 503;
		*code = "out_of_memory";
		snprintf(err, errsize, "out of memory");
		return false;
	}
	memcpy(copy, text, len);
	copy[len] = '\0';
	bool ok = parse_lines(m, copy, err, errsize);
	free(copy);
	char want[OXST_ID_LEN + 1];
	if (ok && !(oxst_bundle_id(m->model_sha, m->model_size, m->files, m->nfiles, want) &&
	            strcmp(want, id) == 0)) {
		snprintf(err, errsize, "the manifest is not in its canonical form (files sorted by "
		         "location, as oxst_bundle_id writes it): its id would be %s", want);
		ok = false;
	}
	const char *under = NULL, *folder = ok ? folder_of_another(m, &under) : NULL;
	if (folder != NULL) {
		*status = 400;
		*code = "bad_location";
		snprintf(err, errsize, "data file locations collide: '%s' is a file and the folder of "
		         "'%.*s'", folder, 200, under);
		ok = false;
	}
	if (!ok)
		oxs_manifest_free(m);
	return ok;
}

/* ---------------------------------------------------------------------------------------
 * Blobs
 */
bool oxs_blob_path(const char *blobs, const char *sha, char *out, size_t size)
{
	int n = snprintf(out, size, "%s/%s", blobs, sha);
	return oxst_id_valid(sha) && n > 0 && (size_t)n < size;
}

oxst_status oxs_blob_stat(const char *blobs, const char *sha, uint64_t length)
{
	char path[PATH_MAX];
	struct stat sb;
	if (!oxs_blob_path(blobs, sha, path, sizeof(path)))
		return OXST_E_INVALID;
	if (lstat(path, &sb) != 0)
		return oxs_errno_status(errno);
	return S_ISREG(sb.st_mode) && (uint64_t)sb.st_size == length ? OXST_OK : OXST_E_NOT_FOUND;
}

static int sync_dir(const char *path)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	int rc = fsync(fd);
	close(fd);
	return rc;
}

oxst_status oxs_blob_keep(const char *blobs, const char *sha, const char *spool)
{
	char blob[PATH_MAX];
	if (!oxs_blob_path(blobs, sha, blob, sizeof(blob)))
		return OXST_E_INVALID;
	if (rename(spool, blob) != 0 || sync_dir(blobs) != 0)
		return oxs_errno_status(errno);
	return OXST_OK;
}

void oxs_bundle_release(const char *blobs, const oxs_manifest *m)
{
	char blob[PATH_MAX];
	for (size_t i = 0; i < m->nfiles; i++)
		if (oxs_blob_path(blobs, m->files[i].sha256, blob, sizeof(blob)))
			(void)unlink(blob); /* the same bytes twice: gone the first time */
	(void)sync_dir(blobs);
}

/* ---------------------------------------------------------------------------------------
 * The bundle's files
 */
/* Copy len bytes of in (from 0) to out (at 0). */
static bool copy_fd(int in, int out, uint64_t len)
{
	loff_t ip = 0, op = 0;
	while ((uint64_t)ip < len) {
		size_t want = len - (uint64_t)ip > ((uint64_t)1 << 30) ? (size_t)1 << 30 : (size_t)(len - (uint64_t)ip);
		ssize_t n = copy_file_range(in, &ip, out, &op, want, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n > 0)
			continue;
		if (n == 0)
			return false;
		/* no copy_file_range here: read and write */
		char buf[1 << 16];
		while ((uint64_t)ip < len) {
			ssize_t k = pread(in, buf, sizeof(buf), ip);
			if (k <= 0 || pwrite(out, buf, (size_t)k, op) != k)
				return false;
			ip += k;
			op += k;
		}
	}
	return true;
}

/* Make the folders of loc (a valid location) beneath dir. */
static bool make_parents(const char *dir, const char *loc)
{
	char path[PATH_MAX];
	int n = snprintf(path, sizeof(path), "%s/%s", dir, loc);
	if (n < 0 || (size_t)n >= sizeof(path))
		return false;
	for (char *c = path + strlen(dir) + 1; *c != '\0'; c++) {
		if (*c != '/')
			continue;
		*c = '\0';
		bool ok = mkdir(path, 0700) == 0 || errno == EEXIST;
		*c = '/';
		if (!ok)
			return false;
	}
	return true;
}

/* The model file: stored as a model of that size, else a blob; -1 when neither. */
static int open_model_file(oxst_store *store, const char *blobs, const oxs_manifest *m)
{
	int fd = -1;
	uint64_t have = 0;
	if (store->ops->open_model(store, m->model_sha, &fd, &have) == OXST_OK && have == m->model_size)
		return fd;
	if (fd >= 0)
		close(fd);
	char blob[PATH_MAX];
	if (oxs_blob_stat(blobs, m->model_sha, m->model_size) != OXST_OK ||
	    !oxs_blob_path(blobs, m->model_sha, blob, sizeof(blob)))
		return -1;
	return open(blob, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
}

bool oxs_bundle_here(oxst_store *store, const char *blobs, const oxs_manifest *m, char *err,
                     size_t errsize)
{
	for (size_t i = 0; i < m->nfiles; i++) {
		if (oxs_blob_stat(blobs, m->files[i].sha256, m->files[i].size) != OXST_OK) {
			snprintf(err, errsize, "the data file %s (%s, %" PRIu64 " bytes) has not been "
			         "uploaded (POST /uploads with kind data)", m->files[i].location,
			         m->files[i].sha256, m->files[i].size);
			return false;
		}
	}
	int fd = open_model_file(store, blobs, m);
	if (fd < 0) {
		snprintf(err, errsize, "the model file %s (%" PRIu64 " bytes) has not been "
		         "uploaded (POST /models, or POST /uploads with kind data)", m->model_sha,
		         m->model_size);
		return false;
	}
	close(fd);
	return true;
}

void oxs_bundle_missing(oxst_store *store, const char *blobs, const oxs_manifest *m, char *err,
                        size_t errsize)
{
	snprintf(err, errsize, "the model file %s (%" PRIu64 " bytes) has not been "
	         "uploaded (POST /models, or POST /uploads with kind data)", m->model_sha, m->model_size);
	for (size_t i = 0; i < m->nfiles; i++) {
		const oxst_bundle_file *f = &m->files[i];
		if (oxs_blob_stat(blobs, f->sha256, f->size) != OXST_OK &&
		    store->ops->blob_stat(store, f->sha256, f->size) == OXST_E_NOT_FOUND) {
			snprintf(err, errsize, "the data file %s (%s, %" PRIu64 " bytes) has not been "
			         "uploaded (POST /uploads with kind data)", f->location, f->sha256, f->size);
			return;
		}
	}
}

/* The data file i at its location in dir: a copy of its blob (copy_file_range: a reflink
 * where the filesystem shares extents, else a copy in the kernel).  Not a hard link: a
 * model's data file has one link (parser/external.c refuses more), and not a move: the
 * blob must outlive a store that fails. */
static oxst_status place(const char *blobs, const oxs_manifest *m, size_t i, const char *dir)
{
	char blob[PATH_MAX], path[PATH_MAX];
	const oxst_bundle_file *f = &m->files[i];
	if (!oxs_blob_path(blobs, f->sha256, blob, sizeof(blob)) || !make_parents(dir, f->location) ||
	    snprintf(path, sizeof(path), "%s/%s", dir, f->location) >= (int)sizeof(path))
		return OXST_E_IO;
	int in = open(blob, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	int out = in >= 0 ? open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600) : -1;
	errno = 0;
	oxst_status s = OXST_OK;
	if (in < 0 || out < 0 || !copy_fd(in, out, f->size) || fsync(out) != 0)
		s = oxs_errno_status(errno ? errno : EIO);
	if (in >= 0)
		close(in);
	if (out >= 0)
		close(out);
	return s;
}

oxst_status oxs_bundle_assemble(oxst_store *store, const char *blobs, const oxs_manifest *m,
                                int *sfd, char *spool, size_t spoolsize, char *dir,
                                size_t dirsize)
{
	*sfd = -1;
	int mfd = open_model_file(store, blobs, m);
	if (mfd < 0)
		return OXST_E_NOT_FOUND;
	oxst_status s = store->ops->spool(store, sfd, spool, spoolsize);
	bool spooled = s == OXST_OK, dirred = false;
	if (s == OXST_OK && !copy_fd(mfd, *sfd, m->model_size))
		s = OXST_E_IO;
	close(mfd);
	if (s == OXST_OK) {
		s = store->ops->spool_dir(store, dir, dirsize);
		dirred = s == OXST_OK;
	}
	for (size_t i = 0; s == OXST_OK && i < m->nfiles; i++)
		s = place(blobs, m, i, dir);
	if (s == OXST_OK) {
		int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (dfd < 0 || syncfs(dfd) != 0)
			s = OXST_E_IO;
		if (dfd >= 0)
			close(dfd);
	}
	if (s != OXST_OK) {
		if (*sfd >= 0)
			close(*sfd);
		*sfd = -1;
		if (spooled)
			(void)unlink(spool);
		if (dirred)
			oxst_remove_path(dir);
	}
	return s;
}
