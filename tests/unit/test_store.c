/*
 * test_store.c — the local folder store: durable put, idempotent ids, listing, renderings,
 * the byte budget, the lock, and recovery at open (temporaries removed, corrupt or
 * misnamed files quarantined, renderings without a model dropped); meta kept with models;
 * verification after open (in the background, and before a model is first read); the
 * data-folder helpers the S3 store shares.
 */
#include "store/internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

static char root[256];

static void sha256_hex(const void *data, size_t len, char out[65])
{
	unsigned char md[32];
	unsigned int n = 0;
	assert_int_equal(EVP_Digest(data, len, md, &n, EVP_sha256(), NULL), 1);
	oxst_hex(out, md, 32);
}

static int count_entries(const char *dir)
{
	DIR *d = opendir(dir);
	if (d == NULL)
		return -1;
	int n = 0;
	struct dirent *e;
	while ((e = readdir(d)) != NULL)
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			n++;
	closedir(d);
	return n;
}

static void write_file(const char *path, const void *data, size_t len)
{
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(data, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}

static int setup(void **state)
{
	(void)state;
	snprintf(root, sizeof(root), "/tmp/oxs-store-test-XXXXXX");
	assert_non_null(mkdtemp(root));
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[300];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	return system(cmd) == 0 ? 0 : -1;
}

static oxst_store *open_store(const oxst_local_options *opt)
{
	oxst_store *s = NULL;
	char err[256];
	oxst_status rc = oxst_local_open(&s, root, opt, err, sizeof(err));
	if (rc != OXST_OK)
		fail_msg("open: %s", err);
	return s;
}

/* Spool `data`, put it; returns whether it was created and fills id. */
static oxst_status put_bytes(oxst_store *s, const void *data, size_t len, char id[65],
                             bool *created)
{
	int fd;
	char path[1024];
	assert_int_equal(s->ops->spool(s, &fd, path, sizeof(path)), OXST_OK);
	assert_int_equal(write(fd, data, len), (ssize_t)len);
	sha256_hex(data, len, id);
	oxst_status rc = s->ops->put_model(s, id, path, fd, created);
	close(fd);
	return rc;
}

static void test_put_get_idempotent(void **state)
{
	(void)state;
	oxst_store *s = open_store(NULL);
	char id[65], id2[65];
	bool created = false;
	const char body[] = "model bytes";
	assert_int_equal(put_bytes(s, body, sizeof(body), id, &created), OXST_OK);
	assert_true(created);
	/* the file is under its id, fanned out by prefix, with the bytes */
	char path[1024];
	assert_int_equal(s->ops->model_path(s, id, path, sizeof(path)), OXST_OK);
	char want[1024];
	snprintf(want, sizeof(want), "%s/models/%.2s/%s.onnx", root, id, id);
	assert_string_equal(path, want);
	int fd;
	uint64_t size;
	assert_int_equal(s->ops->open_model(s, id, &fd, &size), OXST_OK);
	assert_int_equal(size, sizeof(body));
	char got[64];
	assert_int_equal(read(fd, got, sizeof(got)), (ssize_t)sizeof(body));
	assert_memory_equal(got, body, sizeof(body));
	close(fd);
	/* the same bytes again: not created, the spool is gone, tmp/ is empty */
	assert_int_equal(put_bytes(s, body, sizeof(body), id2, &created), OXST_OK);
	assert_false(created);
	assert_string_equal(id, id2);
	char tmp[300];
	snprintf(tmp, sizeof(tmp), "%s/tmp", root);
	assert_int_equal(count_entries(tmp), 0);
	/* unknown and malformed ids */
	assert_int_equal(s->ops->model_path(s, "00", path, sizeof(path)), OXST_E_NOT_FOUND);
	char zero[65];
	memset(zero, '0', 64);
	zero[64] = '\0';
	assert_int_equal(s->ops->open_model(s, zero, &fd, &size), OXST_E_NOT_FOUND);
	s->ops->close(s);
}

static void test_list_delete(void **state)
{
	(void)state;
	oxst_store *s = open_store(NULL);
	char ids[5][65];
	bool created;
	for (int i = 0; i < 5; i++) {
		char body[16];
		snprintf(body, sizeof(body), "model %d", i);
		assert_int_equal(put_bytes(s, body, strlen(body), ids[i], &created), OXST_OK);
	}
	oxst_model_info page[3];
	size_t n = 0;
	uint64_t total = 0;
	assert_int_equal(s->ops->list_models(s, "", page, 3, &n, &total), OXST_OK);
	assert_int_equal(n, 3);
	assert_int_equal(total, 5);
	assert_true(strcmp(page[0].id, page[1].id) < 0 && strcmp(page[1].id, page[2].id) < 0);
	oxst_model_info rest[3];
	size_t m = 0;
	assert_int_equal(s->ops->list_models(s, page[2].id, rest, 3, &m, &total), OXST_OK);
	assert_int_equal(m, 2);
	assert_true(strcmp(page[2].id, rest[0].id) < 0);
	/* a rendering goes with its model */
	assert_int_equal(s->ops->put_rendering(s, rest[0].id, "graph-1.svg", "<svg/>", 6), OXST_OK);
	assert_int_equal(s->ops->delete_model(s, rest[0].id), OXST_OK);
	assert_int_equal(s->ops->delete_model(s, rest[0].id), OXST_E_NOT_FOUND);
	int fd;
	uint64_t size;
	assert_int_equal(s->ops->get_rendering(s, rest[0].id, "graph-1.svg", &fd, &size),
	                 OXST_E_NOT_FOUND);
	char dir[400];
	snprintf(dir, sizeof(dir), "%s/renderings/%s", root, rest[0].id);
	assert_int_equal(count_entries(dir), -1);
	assert_int_equal(s->ops->list_models(s, "", page, 3, &n, &total), OXST_OK);
	assert_int_equal(total, 4);
	s->ops->close(s);
}

static void test_renderings(void **state)
{
	(void)state;
	oxst_store *s = open_store(NULL);
	char id[65];
	bool created;
	assert_int_equal(put_bytes(s, "abc", 3, id, &created), OXST_OK);
	assert_int_equal(s->ops->put_rendering(s, id, "summary-1.json", "{}", 2), OXST_OK);
	assert_int_equal(s->ops->put_rendering(s, id, "summary-1.json", "{\"a\":1}", 7), OXST_OK);
	int fd;
	uint64_t size;
	assert_int_equal(s->ops->get_rendering(s, id, "summary-1.json", &fd, &size), OXST_OK);
	assert_int_equal(size, 7);
	close(fd);
	/* names are checked; renderings need their model */
	assert_int_equal(s->ops->put_rendering(s, id, "../escape", "x", 1), OXST_E_INVALID);
	assert_int_equal(s->ops->put_rendering(s, id, ".hidden", "x", 1), OXST_E_INVALID);
	assert_int_equal(s->ops->get_rendering(s, id, "a/b", &fd, &size), OXST_E_INVALID);
	char other[65];
	sha256_hex("nothing", 7, other);
	assert_int_equal(s->ops->put_rendering(s, other, "x.json", "x", 1), OXST_E_NOT_FOUND);
	oxst_stats st;
	s->ops->stats(s, &st);
	assert_int_equal(st.models, 1);
	assert_int_equal(st.renderings, 1);
	assert_int_equal(st.rendering_bytes, 7);
	assert_true(s->ops->writable(s));
	s->ops->close(s);
}

static void test_lock(void **state)
{
	(void)state;
	oxst_store *s = open_store(NULL);
	oxst_store *t = NULL;
	char err[256];
	assert_int_equal(oxst_local_open(&t, root, NULL, err, sizeof(err)), OXST_E_BUSY);
	assert_null(t);
	s->ops->close(s);
	assert_int_equal(oxst_local_open(&t, root, NULL, err, sizeof(err)), OXST_OK);
	t->ops->close(t);
}

/* What a crash leaves behind, and what a restart makes of it. */
static void test_recovery(void **state)
{
	(void)state;
	oxst_store *s = open_store(NULL);
	char good[65];
	bool created;
	assert_int_equal(put_bytes(s, "good model", 10, good, &created), OXST_OK);
	assert_int_equal(s->ops->put_rendering(s, good, "graph-a.svg", "<svg/>", 6), OXST_OK);
	/* an upload cut by the crash: spooled, never renamed */
	int fd;
	char spool[1024];
	assert_int_equal(s->ops->spool(s, &fd, spool, sizeof(spool)), OXST_OK);
	assert_int_equal(write(fd, "half", 4), 4);
	close(fd);
	s->ops->close(s); /* a clean close empties tmp/ itself: put the leftovers back after */
	write_file(spool, "half", 4);

	char path[1024];
	/* a rendering temporary */
	snprintf(path, sizeof(path), "%s/renderings/%s/.tmp-7", root, good);
	write_file(path, "partial", 7);
	/* a file whose content does not match its name (bit rot, or tampering) */
	char liar[65];
	sha256_hex("what the name says", 18, liar);
	char dir[400];
	snprintf(dir, sizeof(dir), "%s/models/%.2s", root, liar);
	mkdir(dir, 0700);
	snprintf(path, sizeof(path), "%s/%s.onnx", dir, liar);
	write_file(path, "something else", 14);
	/* a misnamed file in a prefix folder, and a stray folder */
	snprintf(path, sizeof(path), "%s/models/%.2s/notes.txt", root, good);
	write_file(path, "x", 1);
	snprintf(path, sizeof(path), "%s/models/zz", root);
	mkdir(path, 0700);
	/* renderings of a model that is not there */
	char ghost[65];
	sha256_hex("ghost", 5, ghost);
	snprintf(dir, sizeof(dir), "%s/renderings/%s", root, ghost);
	mkdir(dir, 0700);
	snprintf(path, sizeof(path), "%s/graph-b.svg", dir);
	write_file(path, "<svg/>", 6);

	oxst_local_options opt = {.budget = 0, .evict_models = false, .verify = true};
	s = open_store(&opt);
	oxst_stats st;
	s->ops->stats(s, &st);
	assert_int_equal(st.models, 1);
	assert_int_equal(st.renderings, 1);
	assert_int_equal(st.removed_temporaries, 2); /* the spool and the rendering .tmp */
	assert_int_equal(st.quarantined, 3);         /* the liar, notes.txt, zz/ */
	char tmp[300];
	snprintf(tmp, sizeof(tmp), "%s/tmp", root);
	assert_int_equal(count_entries(tmp), 0);
	snprintf(tmp, sizeof(tmp), "%s/quarantine", root);
	assert_int_equal(count_entries(tmp), 3);
	assert_int_equal(count_entries(dir), -1); /* the ghost's renderings are gone */
	assert_int_equal(s->ops->model_path(s, liar, path, sizeof(path)), OXST_E_NOT_FOUND);
	assert_int_equal(s->ops->get_rendering(s, good, "graph-a.svg", &fd, &(uint64_t){0}), OXST_OK);
	close(fd);
	s->ops->close(s);
}

static void test_budget(void **state)
{
	(void)state;
	oxst_local_options opt = {.budget = 1000, .evict_models = false, .verify = true};
	oxst_store *s = open_store(&opt);
	char a[65], b[65], c[65];
	bool created;
	char big[800];
	memset(big, 'a', sizeof(big));
	assert_int_equal(put_bytes(s, big, 400, a, &created), OXST_OK);
	char blob[300];
	memset(blob, 'r', sizeof(blob));
	assert_int_equal(s->ops->put_rendering(s, a, "r1.svg", blob, 300), OXST_OK);
	assert_int_equal(s->ops->put_rendering(s, a, "r2.svg", blob, 250), OXST_OK);
	/* 950 used: a third rendering evicts the least recently used one (r1) */
	int fd;
	uint64_t size;
	assert_int_equal(s->ops->get_rendering(s, a, "r2.svg", &fd, &size), OXST_OK);
	close(fd);
	assert_int_equal(s->ops->put_rendering(s, a, "r3.svg", blob, 200), OXST_OK);
	assert_int_equal(s->ops->get_rendering(s, a, "r1.svg", &fd, &size), OXST_E_NOT_FOUND);
	assert_int_equal(s->ops->get_rendering(s, a, "r2.svg", &fd, &size), OXST_OK);
	close(fd);
	/* a model that only fits by evicting models: refused while models are kept */
	memset(big, 'b', sizeof(big));
	assert_int_equal(put_bytes(s, big, 700, b, &created), OXST_E_NOSPACE);
	char tmp[300];
	oxst_stats st;
	s->ops->stats(s, &st);
	assert_int_equal(st.renderings, 0); /* renderings went first */
	assert_int_equal(st.models, 1);
	s->ops->close(s);

	/* with model eviction allowed, the least recently used model goes */
	opt.evict_models = true;
	s = open_store(&opt);
	assert_int_equal(put_bytes(s, big, 700, b, &created), OXST_OK);
	assert_true(created);
	assert_int_equal(s->ops->model_path(s, a, tmp, sizeof(tmp)), OXST_E_NOT_FOUND);
	memset(big, 'c', sizeof(big));
	assert_int_equal(put_bytes(s, big, 300, c, &created), OXST_OK);
	s->ops->stats(s, &st);
	assert_int_equal(st.models, 2);
	assert_true(st.model_bytes <= 1000);
	assert_int_equal(st.evicted_models, 1);
	s->ops->close(s);
}

/* A full disk (here: a file size limit, EFBIG) is OXST_E_NOSPACE and leaves no file. */
static void test_nospace(void **state)
{
	(void)state;
	oxst_store *s = open_store(NULL);
	char id[65];
	bool created;
	assert_int_equal(put_bytes(s, "m", 1, id, &created), OXST_OK);
	fflush(NULL);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		signal(SIGXFSZ, SIG_IGN);
		struct rlimit rl = {4096, 4096};
		setrlimit(RLIMIT_FSIZE, &rl);
		static char big[65536];
		oxst_status rc = s->ops->put_rendering(s, id, "big.svg", big, sizeof(big));
		_exit(rc == OXST_E_NOSPACE ? 0 : 10 + (int)rc);
	}
	int status = 0;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	char dir[400];
	snprintf(dir, sizeof(dir), "%s/renderings/%s", root, id);
	assert_true(count_entries(dir) <= 0); /* neither the file nor its temporary */
	s->ops->close(s);
}

static void put_meta_named(oxst_store *s, const char *id, const char *name)
{
	oxst_model_meta m;
	memset(&m, 0, sizeof(m));
	snprintf(m.name, sizeof(m.name), "%s", name);
	snprintf(m.kind, sizeof(m.kind), "model");
	m.nodes = 7;
	assert_int_equal(s->ops->put_meta(s, id, &m), OXST_OK);
}

static void test_meta(void **state)
{
	(void)state;
	oxst_store *s = open_store(NULL);
	char a[65], b[65];
	bool created;
	sha256_hex("model a", 7, a);
	put_meta_named(s, a, "a.onnx");
	put_meta_named(s, a, "again.onnx"); /* the first upload's meta stays */
	assert_int_equal(put_bytes(s, "model a", 7, a, &created), OXST_OK);
	assert_int_equal(put_bytes(s, "model b", 7, b, &created), OXST_OK); /* none kept */
	oxst_model_info page[4];
	size_t n = 0;
	uint64_t total = 0;
	for (int round = 0; round < 2; round++) { /* read from the file, then from memory */
		assert_int_equal(s->ops->list_models(s, "", page, 4, &n, &total), OXST_OK);
		assert_int_equal(n, 2);
		for (size_t i = 0; i < n; i++) {
			bool is_a = strcmp(page[i].id, a) == 0;
			assert_int_equal(page[i].has_meta, is_a);
			if (is_a) {
				assert_string_equal(page[i].meta.name, "a.onnx");
				assert_string_equal(page[i].meta.kind, "model");
				assert_int_equal(page[i].meta.nodes, 7);
			}
		}
	}
	/* a name fills a meta kept without one, never replaces one (read from memory after
	 * the listing above, then from the file after a reopen) */
	assert_int_equal(s->ops->name_meta(s, a, "renamed.onnx"), OXST_OK);
	assert_int_equal(s->ops->name_meta(s, b, "b.onnx"), OXST_E_NOT_FOUND); /* no meta */
	put_meta_named(s, b, ""); /* kept after its model: listed from the file's next read */
	assert_int_equal(s->ops->name_meta(s, b, "later.onnx"), OXST_OK);
	assert_int_equal(s->ops->name_meta(s, b, "third.onnx"), OXST_OK);
	for (int round = 0; round < 2; round++) {
		assert_int_equal(s->ops->list_models(s, "", page, 4, &n, &total), OXST_OK);
		assert_int_equal(n, 2);
		for (size_t i = 0; i < n; i++) {
			bool is_a = strcmp(page[i].id, a) == 0;
			assert_true(page[i].has_meta || round == 0);
			if (page[i].has_meta) {
				assert_string_equal(page[i].meta.name, is_a ? "a.onnx" : "later.onnx");
				assert_int_equal(page[i].meta.nodes, 7);
			}
		}
		s->ops->close(s);
		s = open_store(NULL);
	}
	char path[1024];
	snprintf(path, sizeof(path), "%s/meta/%s.json", root, a);
	assert_int_equal(access(path, F_OK), 0);
	assert_int_equal(s->ops->delete_model(s, a), OXST_OK);
	assert_int_equal(access(path, F_OK), -1); /* deleted with its model */
	/* meta of an upload cut before its model: gone at the next open */
	char c[65];
	sha256_hex("never stored", 12, c);
	put_meta_named(s, c, "c.onnx");
	s->ops->close(s);
	snprintf(path, sizeof(path), "%s/meta/%s.json", root, c);
	assert_int_equal(access(path, F_OK), 0);
	s = open_store(NULL);
	assert_int_equal(access(path, F_OK), -1);
	s->ops->close(s);
}

static void test_verify_background(void **state)
{
	(void)state;
	oxst_store *s = open_store(NULL);
	enum { N = 40 };
	char ids[N][65], liar[65];
	bool created;
	for (int i = 0; i < N; i++) {
		char body[32];
		snprintf(body, sizeof(body), "model number %d", i);
		assert_int_equal(put_bytes(s, body, strlen(body), ids[i], &created), OXST_OK);
	}
	s->ops->close(s);
	/* one file's bytes no longer match its name */
	memcpy(liar, ids[N - 1], sizeof(liar));
	char path[1024];
	snprintf(path, sizeof(path), "%s/models/%.2s/%s.onnx", root, liar, liar);
	write_file(path, "rotten bytes", 12);

	oxst_local_options opt = {.verify = false, .verify_background = true};
	s = open_store(&opt);
	oxst_stats st;
	s->ops->stats(s, &st);
	assert_int_equal(st.to_verify, N);
	/* without waiting, an unchecked model is never said to be there: AGAIN until it is
	 * checked, then OK (or NOT_FOUND for the liar) */
	uint64_t size;
	oxst_status rc = s->ops->stat_model(s, liar, OXST_STAT_NONBLOCK, &size);
	assert_true(rc == OXST_E_AGAIN || rc == OXST_E_NOT_FOUND);
	/* reading it checks it first: never served */
	assert_int_equal(s->ops->model_path(s, liar, path, sizeof(path)), OXST_E_NOT_FOUND);
	assert_int_equal(s->ops->model_path(s, ids[0], path, sizeof(path)), OXST_OK);
	for (int i = 0; i < 500; i++) { /* the thread finishes the rest */
		s->ops->stats(s, &st);
		if (!st.verifying)
			break;
		usleep(10000);
	}
	assert_false(st.verifying);
	assert_int_equal(st.verified, N);
	assert_int_equal(st.quarantined, 1);
	assert_int_equal(st.models, N - 1);
	for (int i = 0; i < N - 1; i++)
		assert_int_equal(s->ops->stat_model(s, ids[i], OXST_STAT_NONBLOCK, &size), OXST_OK);
	assert_int_equal(s->ops->stat_model(s, liar, OXST_STAT_NONBLOCK, &size), OXST_E_NOT_FOUND);
	char q[300];
	snprintf(q, sizeof(q), "%s/quarantine", root);
	assert_int_equal(count_entries(q), 1);
	s->ops->close(s);
}

static void test_data_helpers(void **state)
{
	(void)state;
	char dir[300];
	snprintf(dir, sizeof(dir), "%s/spool", root);
	assert_int_equal(mkdir(dir, 0700), 0);
	int dfd = open(dir, O_RDONLY | O_DIRECTORY);
	assert_true(dfd >= 0);
	int e = 0;
	int f = oxst_create_beneath(dfd, "w/deep/a.bin", &e);
	assert_true(f >= 0);
	assert_int_equal(write(f, "abc", 3), 3);
	close(f);
	f = oxst_create_beneath(dfd, "top.bin", &e);
	assert_true(f >= 0);
	close(f);
	/* never replaced, and a file is no folder */
	assert_int_equal(oxst_create_beneath(dfd, "w/deep/a.bin", &e), -1);
	assert_int_equal(e, EEXIST);
	assert_int_equal(oxst_create_beneath(dfd, "top.bin/x", &e), -1);
	assert_int_equal(e, ENOTDIR);
	oxst_bundle_file *files = NULL;
	size_t n = 0;
	uint64_t bytes = 0;
	assert_true(oxst_data_files(dir, &files, &n, &bytes));
	assert_int_equal(n, 2);
	assert_int_equal(bytes, 3);
	char want[65];
	sha256_hex("abc", 3, want);
	bool seen = false;
	for (size_t i = 0; i < n; i++) {
		if (strcmp(files[i].location, "w/deep/a.bin") == 0) {
			assert_int_equal(files[i].size, 3);
			assert_string_equal(files[i].sha256, want);
			seen = true;
		}
	}
	assert_true(seen);
	free(files);
	/* a symbolic link is not a data file */
	assert_int_equal(symlinkat("/etc/passwd", dfd, "link"), 0);
	assert_false(oxst_data_files(dir, &files, &n, &bytes));
	close(dfd);
}

static void test_status_names(void **state)
{
	(void)state;
	assert_string_equal(oxst_status_name(OXST_OK), "ok");
	assert_string_equal(oxst_status_name(OXST_E_NOSPACE), "no_space");
	assert_string_equal(oxst_status_name(OXST_E_UNAVAILABLE), "unavailable");
	assert_string_equal(oxst_status_name((oxst_status)99), "unknown");
}

/* ---------------------------------------------------------------------------------------
 * Resumable transfers: the hash midstate, the state record, the local store's ops
 */
static void test_sha256_midstate(void **state)
{
	(void)state;
	size_t n = (1 << 20) + 77;
	unsigned char *data = malloc(n);
	assert_non_null(data);
	for (size_t i = 0; i < n; i++)
		data[i] = (unsigned char)(i * 2654435761u >> 13);
	char want[65], got[65];
	sha256_hex(data, n, want);
	/* stopped at block boundaries, each time taken up by a new context from its midstate */
	static const size_t cuts[] = {0, 64, 4096, 65536 + 64, (size_t)1 << 20};
	oxst_xfer x;
	oxst_xfer_init(&x, n, 64, 0, 0);
	uint64_t at = 0;
	for (size_t k = 0; k + 1 < sizeof(cuts) / sizeof(cuts[0]); k++) {
		oxst_sha256 c;
		oxst_sha256_resume(&c, x.h, at);
		oxst_sha256_update(&c, data + cuts[k], cuts[k + 1] - cuts[k]);
		uint64_t bytes = 0;
		assert_true(oxst_sha256_midstate(&c, x.h, &bytes));
		assert_int_equal(bytes, cuts[k + 1]);
		at = bytes;
	}
	oxst_sha256 c;
	oxst_sha256_resume(&c, x.h, at);
	oxst_sha256_update(&c, data + at, 33);
	uint32_t h[8];
	uint64_t bytes = 0;
	assert_false(oxst_sha256_midstate(&c, h, &bytes)); /* not whole blocks */
	oxst_sha256_update(&c, data + at + 33, n - at - 33);
	oxst_sha256_final(&c, got);
	assert_string_equal(got, want);
	/* a midstate that is not this file's gives another hash (the test can fail) */
	x.h[3] ^= 1;
	oxst_sha256_resume(&c, x.h, at);
	oxst_sha256_update(&c, data + at, n - at);
	oxst_sha256_final(&c, got);
	assert_string_not_equal(got, want);
	/* from the start: the initial values */
	oxst_xfer_init(&x, n, 64, 0, 0);
	oxst_sha256_resume(&c, x.h, 0);
	oxst_sha256_update(&c, data, n);
	oxst_sha256_final(&c, got);
	assert_string_equal(got, want);
	free(data);
}

static void xfer_sample(oxst_xfer *x)
{
	oxst_xfer_init(x, 3000, 1024, 1700000000, 60);
	sha256_hex("file", 4, x->sha256);
	sha256_hex("structure", 9, x->structure);
	snprintf(x->name, sizeof(x->name), "my model.onnx");
	x->h[7] = 0xdeadbeef;
}

static void test_xfer_text(void **state)
{
	(void)state;
	oxst_xfer x, y;
	xfer_sample(&x);
	x.offset = 2048;
	snprintf(x.backend, sizeof(x.backend), "mpu 2~abc/DEF+=");
	x.staged = true; /* an object store's transfer begun unnamed (decision 97) */
	char text[4096];
	size_t len = 0;
	assert_true(oxst_xfer_text(&x, text, sizeof(text), &len));
	assert_true(oxst_xfer_parse(text, len, &y));
	assert_memory_equal(&x, &y, sizeof(x)); /* every field back (both zeroed first) */
	assert_int_equal(y.expires, 1700000060);
	/* refused: an offset inside a part, a part not whole hash blocks, no hash, a newline
	 * in a value, a text that does not fit */
	x.offset = 100;
	assert_true(oxst_xfer_text(&x, text, sizeof(text), &len));
	assert_false(oxst_xfer_parse(text, len, &y));
	x.offset = 3000; /* the end is fine */
	assert_true(oxst_xfer_text(&x, text, sizeof(text), &len));
	assert_true(oxst_xfer_parse(text, len, &y));
	x.part = 1000;
	x.offset = 0;
	assert_true(oxst_xfer_text(&x, text, sizeof(text), &len));
	assert_false(oxst_xfer_parse(text, len, &y));
	xfer_sample(&x);
	assert_true(oxst_xfer_text(&x, text, sizeof(text), &len));
	char *hash = strstr(text, "hash ");
	assert_non_null(hash);
	hash[0] = 'H'; /* no hash line (a state of before): the initial values at offset 0 */
	assert_true(oxst_xfer_parse(text, len, &y));
	assert_false(oxst_xfer_unhashed(&y));
	assert_int_equal(y.h[0], 0x6a09e667);
	x.offset = 1024; /* further on: no midstate, for the backend to rebuild */
	assert_true(oxst_xfer_text(&x, text, sizeof(text), &len));
	hash = strstr(text, "hash ");
	hash[0] = 'H';
	assert_true(oxst_xfer_parse(text, len, &y));
	assert_true(oxst_xfer_unhashed(&y));
	assert_false(oxst_xfer_unhashed(&x));
	/* not named yet (decision 97): written as 64 zeros, which a server from before reads as
	 * a claim (no state it would take for corrupt), read back as not named */
	xfer_sample(&x);
	memset(x.sha256, 0, sizeof(x.sha256));
	assert_true(oxst_xfer_text(&x, text, sizeof(text), &len));
	assert_non_null(strstr(text, "\nsha256 0000000000000000000000000000000000000000000000000000000000000000\n"));
	assert_true(oxst_xfer_parse(text, len, &y));
	assert_memory_equal(&x, &y, sizeof(x));
	xfer_sample(&x);
	snprintf(x.name, sizeof(x.name), "a\nb");
	assert_false(oxst_xfer_text(&x, text, sizeof(text), &len));
	xfer_sample(&x);
	assert_false(oxst_xfer_text(&x, text, 100, &len));
	assert_true(oxst_xfer_uid_valid("0123456789abcdef0123456789abcdef"));
	assert_false(oxst_xfer_uid_valid("0123456789abcdef0123456789abcdeF"));
	assert_false(oxst_xfer_uid_valid("../23456789abcdef0123456789abcdef"));
	assert_false(oxst_xfer_uid_valid("0123456789abcdef"));
}

/* Send part `k` (of x->part bytes, the last the rest) of data through the ops. */
static oxst_status send_part(oxst_store *s, const char *uid, oxst_xfer *x, const char *data)
{
	uint64_t len = x->length - x->offset < x->part ? x->length - x->offset : x->part;
	int fd = -1;
	uint64_t at = 0;
	assert_int_equal(s->ops->xfer_part_fd(s, uid, x, &fd, &at), OXST_OK);
	assert_int_equal(pwrite(fd, data + x->offset, len, (off_t)at), (ssize_t)len);
	oxst_xfer next = *x;
	next.offset += len;
	bool last = next.offset == x->length;
	oxst_status st = s->ops->xfer_part_put(s, uid, x, last ? NULL : &next, fd, at, len);
	close(fd);
	if (st == OXST_OK)
		*x = next;
	return st;
}

/* n bytes of a pattern (i % mod) and a sample state for them. */
static void xfer_data(char *data, size_t n, unsigned mod, oxst_xfer *x)
{
	for (size_t i = 0; i < n; i++)
		data[i] = (char)(i % mod);
	xfer_sample(x);
	sha256_hex(data, n, x->sha256);
}

static void test_xfer_local(void **state)
{
	(void)state;
	oxst_store *s = open_store(NULL);
	const char *uid = "00112233445566778899aabbccddeeff";
	char data[3000];
	oxst_xfer x, y;
	xfer_data(data, sizeof(data), 251, &x);
	assert_int_equal(s->ops->xfer_get(s, uid, &y), OXST_E_NOT_FOUND);
	bool created = false;
	assert_int_equal(s->ops->xfer_create(s, uid, &x, &created), OXST_OK);
	assert_true(created);
	assert_int_equal(send_part(s, uid, &x, data), OXST_OK);
	/* the same file again: the transfer as it stands */
	xfer_sample(&y);
	assert_int_equal(s->ops->xfer_create(s, uid, &y, &created), OXST_OK);
	assert_false(created);
	assert_int_equal(y.offset, 1024);
	/* the state's write fails (a file size limit): the part is not acknowledged, the
	 * state stays where it was */
	fflush(NULL);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int fd = -1;
		uint64_t at = 0;
		if (s->ops->xfer_part_fd(s, uid, &x, &fd, &at) != OXST_OK ||
		    pwrite(fd, data + x.offset, 1024, (off_t)at) != 1024)
			_exit(9);
		signal(SIGXFSZ, SIG_IGN);
		struct rlimit rl = {64, 64}; /* the part is written; the state cannot be */
		setrlimit(RLIMIT_FSIZE, &rl);
		oxst_xfer next = x;
		next.offset += 1024;
		oxst_status rc = s->ops->xfer_part_put(s, uid, &x, &next, fd, at, 1024);
		_exit(rc == OXST_E_NOSPACE ? 0 : 10 + (int)rc);
	}
	int status = 0;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_int_equal(s->ops->xfer_get(s, uid, &y), OXST_OK);
	assert_int_equal(y.offset, 1024);
	/* a part sent twice is harmless */
	oxst_xfer again = x;
	again.offset = 0;
	assert_int_equal(send_part(s, uid, &again, data), OXST_OK);
	assert_int_equal(send_part(s, uid, &x, data), OXST_OK);
	assert_int_equal(send_part(s, uid, &x, data), OXST_OK); /* the last: not recorded */
	assert_int_equal(s->ops->xfer_get(s, uid, &y), OXST_OK);
	assert_int_equal(y.offset, 2048);
	char (*uids)[OXST_XFER_UID_LEN + 1] = calloc(4, sizeof(*uids));
	size_t n = 0;
	assert_int_equal(s->ops->xfer_list(s, uids, 4, &n), OXST_OK);
	assert_int_equal(n, 1);
	assert_string_equal(uids[0], uid);
	/* finished: the file as a spool file of the store; the transfer stays until the
	 * service removes it once the model is stored (issue 35 item 3): a store that fails
	 * (the spool removed) leaves it whole, to be finished again */
	int fd = -1;
	char spool[1024], got[3001];
	assert_int_equal(s->ops->xfer_finish(s, uid, &x, &fd, spool, sizeof(spool), &created), OXST_OK);
	assert_true(fd >= 0);
	assert_int_equal(pread(fd, got, sizeof(got), 0), (ssize_t)sizeof(data));
	assert_memory_equal(got, data, sizeof(data));
	close(fd);
	assert_int_equal(unlink(spool), 0); /* put_model failed: its spool is dropped */
	assert_int_equal(s->ops->xfer_get(s, uid, &y), OXST_OK);
	assert_int_equal(y.offset, 2048);
	assert_int_equal(send_part(s, uid, &x, data), OXST_OK); /* the last part again */
	assert_int_equal(s->ops->xfer_finish(s, uid, &x, &fd, spool, sizeof(spool), &created), OXST_OK);
	bool stored = false;
	assert_int_equal(s->ops->put_model(s, x.sha256, spool, fd, &stored), OXST_OK);
	assert_true(stored);
	close(fd);
	assert_int_equal(s->ops->stat_model(s, x.sha256, 0, NULL), OXST_OK);
	/* stored, not yet removed (a crash right there): the file is the model's now, and a
	 * part sent again is never written into it */
	assert_int_equal(s->ops->xfer_get(s, uid, &y), OXST_OK);
	int pfd = -1;
	uint64_t pat = 0;
	assert_int_equal(s->ops->xfer_part_fd(s, uid, &y, &pfd, &pat), OXST_E_NOT_FOUND);
	assert_int_equal(pfd, -1);
	assert_int_equal(s->ops->xfer_abort(s, uid), OXST_OK);
	int mfd = -1;
	uint64_t msize = 0;
	assert_int_equal(s->ops->open_model(s, x.sha256, &mfd, &msize), OXST_OK);
	assert_int_equal(msize, sizeof(data));
	assert_int_equal(pread(mfd, got, sizeof(got), 0), (ssize_t)sizeof(data));
	assert_memory_equal(got, data, sizeof(data));
	close(mfd);
	assert_int_equal(s->ops->xfer_get(s, uid, &y), OXST_E_NOT_FOUND);
	assert_int_equal(s->ops->xfer_list(s, uids, 4, &n), OXST_OK);
	assert_int_equal(n, 0);
	/* abort: all of it goes; an unreadable state is started over */
	xfer_sample(&x);
	assert_int_equal(s->ops->xfer_create(s, uid, &x, &created), OXST_OK);
	assert_int_equal(s->ops->xfer_abort(s, uid), OXST_OK);
	assert_int_equal(s->ops->xfer_get(s, uid, &y), OXST_E_NOT_FOUND);
	assert_int_equal(s->ops->xfer_create(s, uid, &x, &created), OXST_OK);
	char path[600];
	snprintf(path, sizeof(path), "%s/uploads/%s/state", root, uid);
	write_file(path, "garbage", 7);
	assert_int_equal(s->ops->xfer_get(s, uid, &y), OXST_E_IO);
	assert_int_equal(s->ops->xfer_create(s, uid, &x, &created), OXST_OK);
	assert_true(created);
	/* a state written before the midstate was kept: rebuilt from the data file */
	assert_int_equal(s->ops->xfer_abort(s, uid), OXST_OK);
	xfer_sample(&x);
	sha256_hex(data, sizeof(data), x.sha256);
	assert_int_equal(s->ops->xfer_create(s, uid, &x, &created), OXST_OK);
	assert_int_equal(send_part(s, uid, &x, data), OXST_OK);
	assert_int_equal(send_part(s, uid, &x, data), OXST_OK);
	char text[4096], old[4096];
	size_t len = 0;
	assert_true(oxst_xfer_text(&x, text, sizeof(text), &len));
	char *hash = strstr(text, "hash ");
	char *eol = strchr(hash, '\n');
	snprintf(old, sizeof(old), "%.*s%s", (int)(hash - text), text, eol + 1);
	write_file(path, old, strlen(old));
	assert_int_equal(s->ops->xfer_get(s, uid, &y), OXST_OK);
	assert_int_equal(y.offset, 2048);
	oxst_xfer iv;
	oxst_xfer_init(&iv, 0, 64, 0, 0);
	oxst_sha256 c;
	oxst_sha256_resume(&c, iv.h, 0);
	oxst_sha256_update(&c, data, 2048);
	uint32_t want_h[8];
	uint64_t bytes = 0;
	assert_true(oxst_sha256_midstate(&c, want_h, &bytes));
	assert_memory_equal(y.h, want_h, sizeof(want_h));
	/* the same with a data file shorter than the state says: unreadable */
	snprintf(path, sizeof(path), "%s/uploads/%s/data", root, uid);
	assert_int_equal(truncate(path, 1000), 0);
	assert_int_equal(s->ops->xfer_get(s, uid, &y), OXST_E_IO);
	/* a uid that is not one */
	assert_int_equal(s->ops->xfer_get(s, "../../etc", &y), OXST_E_INVALID);
	free(uids);
	s->ops->close(s);
}

/* Issue 35 (suspected, proven here): a state file that cannot be opened now — no
 * descriptors left (EMFILE) — is the machine's trouble, not the transfer's: xfer_get
 * answers it as transient (503 for the service) and xfer_create removes nothing; the
 * transfer is whole once descriptors are back.  Before the fix xfer_create took it for
 * an "unreadable leftover" and removed the acknowledged parts. */
static void test_xfer_transient(void **state)
{
	(void)state;
	oxst_store *s = open_store(NULL);
	const char *uid = "ffeeddccbbaa99887766554433221100";
	char data[3000];
	oxst_xfer x, y;
	xfer_data(data, sizeof(data), 13, &x);
	bool created = false;
	assert_int_equal(s->ops->xfer_create(s, uid, &x, &created), OXST_OK);
	assert_int_equal(send_part(s, uid, &x, data), OXST_OK);
	fflush(NULL);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		/* every descriptor from here on is refused */
		int top = dup(0);
		if (top < 0)
			_exit(9);
		close(top);
		struct rlimit rl = {(rlim_t)top, (rlim_t)top};
		if (setrlimit(RLIMIT_NOFILE, &rl) != 0)
			_exit(8);
		oxst_xfer z, w;
		oxst_status g = s->ops->xfer_get(s, uid, &z);
		xfer_sample(&w);
		bool c2 = false;
		oxst_status cr = s->ops->xfer_create(s, uid, &w, &c2);
		_exit(g == OXST_E_UNAVAILABLE && cr == OXST_E_UNAVAILABLE ? 0 : 10 + (int)g * 10 + (int)cr);
	}
	int status = 0;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_int_equal(s->ops->xfer_get(s, uid, &y), OXST_OK);
	assert_int_equal(y.offset, 1024);
	/* a state that is read and is no state: corrupt, and only that is started over */
	char path[600];
	snprintf(path, sizeof(path), "%s/uploads/%s/state", root, uid);
	write_file(path, "garbage", 7);
	assert_int_equal(s->ops->xfer_get(s, uid, &y), OXST_E_IO);
	s->ops->close(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_put_get_idempotent, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_list_delete, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_renderings, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_lock, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_recovery, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_budget, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_nospace, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_meta, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_verify_background, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_data_helpers, setup, teardown),
	    cmocka_unit_test(test_status_names),
	    cmocka_unit_test(test_sha256_midstate),
	    cmocka_unit_test(test_xfer_text),
	    cmocka_unit_test_setup_teardown(test_xfer_local, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_xfer_transient, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
