/*
 * test_beneath.c — oxp_open_beneath (parser/beneath.c), the one confinement of untrusted
 * paths, against every escape; each case runs through openat2 and through the component
 * walk (OXP_BENEATH_NO_OPENAT2), which must give the same answer.
 *
 * A temporary tree:
 *   outside/secret.bin       holds SECRET (must never come back but through a hard link,
 *                            which callers refuse by its link count)
 *   base/                    the directory (dirfd)
 *   base/f.bin, base/sub/g.bin, base/sub/deeper/h.bin    plain files
 *   base/ln_out  -> ../outside/secret.bin   base/ln_abs -> ROOT/outside/secret.bin
 *   base/ln_in   -> f.bin                   base/ln_dir -> sub
 *   base/ln_up   -> ../outside              base/dangling -> nothere
 *   base/ln_proc -> /proc/self/root         base/hard.bin: a hard link to the secret
 *   base/fifo    a FIFO                     base/dir.bin: a folder
 * Every case also checks that no descriptor leaks.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "parser/oxp.h"
#include "tests/unit/support_fs.h"

#define SECRET "TOPSECRET-TOPSECRET-42"

static char root[256];
static int base_fd = -1;

static void at(char *buf, size_t size, const char *rel)
{
	snprintf(buf, size, "%s/%s", root, rel);
}

static int put_file(const char *rel, const char *text)
{
	char path[512];
	at(path, sizeof(path), rel);
	FILE *f = fopen(path, "wb");
	if (f == NULL)
		return -1;
	size_t n = strlen(text);
	int ok = fwrite(text, 1, n, f) == n;
	return fclose(f) == 0 && ok ? 0 : -1;
}

static int link_at(const char *target, const char *rel)
{
	char path[512];
	at(path, sizeof(path), rel);
	return symlink(target, path);
}

static int setup(void **state)
{
	(void)state;
	snprintf(root, sizeof(root), "/tmp/oxp_beneath_XXXXXX");
	if (mkdtemp(root) == NULL)
		return -1;
	static const char *const dirs[] = {"outside", "base", "base/sub", "base/sub/deeper",
	                                   "base/dir.bin"};
	char a[512], b[512];
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		at(a, sizeof(a), dirs[i]);
		if (mkdir(a, 0755) != 0)
			return -1;
	}
	at(a, sizeof(a), "outside/secret.bin");
	at(b, sizeof(b), "base/hard.bin");
	char abs_target[512];
	at(abs_target, sizeof(abs_target), "outside/secret.bin");
	at(a, sizeof(a), "base/fifo");
	if (put_file("outside/secret.bin", SECRET) != 0 || put_file("base/f.bin", "GOOD") != 0 ||
	    put_file("base/sub/g.bin", "SUB") != 0 || put_file("base/sub/deeper/h.bin", "DEEP") != 0 ||
	    link_at("../outside/secret.bin", "base/ln_out") != 0 ||
	    link_at(abs_target, "base/ln_abs") != 0 || link_at("f.bin", "base/ln_in") != 0 ||
	    link_at("sub", "base/ln_dir") != 0 || link_at("../outside", "base/ln_up") != 0 ||
	    link_at("nothere", "base/dangling") != 0 ||
	    link_at("/proc/self/root", "base/ln_proc") != 0 || link(abs_target, b) != 0 ||
	    mkfifo(a, 0644) != 0)
		return -1;
	at(a, sizeof(a), "base");
	base_fd = open(a, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return base_fd < 0 ? -1 : 0;
}

static int teardown(void **state)
{
	(void)state;
	if (base_fd >= 0)
		close(base_fd);
	return sfs_remove_tree(root);
}

/* What an opened fd must be: its text (a regular file), or a kind. */
enum { IS_FILE, IS_DIR, IS_FIFO, IS_CHR, IS_PATH };

typedef struct open_case {
	const char *path;
	size_t len;      /* 0: strlen(path) */
	int oflags;
	int want;        /* 0 or the errno */
	int kind;        /* when want == 0 */
	const char *text;/* IS_FILE: its content */
} open_case;

/* Open c through both ways beneath dir; check the answer, what was opened, and fds. */
static void expect_at(int dir, const open_case *c)
{
	size_t len = c->len ? c->len : strlen(c->path);
	for (unsigned flags = 0; flags <= OXP_BENEATH_NO_OPENAT2; flags += OXP_BENEATH_NO_OPENAT2) {
		const char *how = flags ? "walk" : "openat2";
		int before = sfs_count_fds();
		int fd = -7;
		int e = oxp_open_beneath(&fd, dir, c->path, len, c->oflags, flags);
		if (e != c->want)
			fail_msg("%s '%.60s': got %s, want %s", how, c->path, e ? strerror(e) : "success",
			         c->want ? strerror(c->want) : "success");
		if (e != 0) {
			assert_int_equal(fd, -7); /* untouched */
			assert_int_equal(sfs_count_fds(), before);
			continue;
		}
		struct stat st;
		assert_int_equal(fstat(fd, &st), 0);
		assert_true(fcntl(fd, F_GETFD) & FD_CLOEXEC);
		switch (c->kind) {
		case IS_FILE: {
			assert_true(S_ISREG(st.st_mode));
			char buf[64] = "";
			ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
			assert_true(n >= 0);
			buf[n] = '\0';
			if (strcmp(buf, c->text) != 0)
				fail_msg("%s '%s': read '%s', want '%s'", how, c->path, buf, c->text);
			break;
		}
		case IS_DIR:
			assert_true(S_ISDIR(st.st_mode));
			break;
		case IS_FIFO:
			assert_true(S_ISFIFO(st.st_mode));
			break;
		case IS_CHR:
			assert_true(S_ISCHR(st.st_mode));
			break;
		default:
			assert_false(S_ISLNK(st.st_mode));
			break;
		}
		close(fd);
		assert_int_equal(sfs_count_fds(), before);
	}
}

#define RD (O_RDONLY | O_NONBLOCK | O_NOCTTY)

static void run(int dir, const open_case *cases, size_t n)
{
	for (size_t i = 0; i < n; i++)
		expect_at(dir, &cases[i]);
}

static void test_inside(void **state)
{
	(void)state;
	static char longest[OXP_BENEATH_MAX + 1]; /* "./" x 2045 + "f.bin": exactly the most */
	size_t k = 0;
	while (k + 5 < OXP_BENEATH_MAX)
		k += (size_t)snprintf(longest + k, sizeof(longest) - k, "./");
	snprintf(longest + k, sizeof(longest) - k, "f.bin");
	assert_int_equal(strlen(longest), OXP_BENEATH_MAX);
	const open_case cases[] = {
	    {"f.bin", 0, RD, 0, IS_FILE, "GOOD"},
	    {"sub/g.bin", 0, RD, 0, IS_FILE, "SUB"},
	    {"sub/deeper/h.bin", 0, RD, 0, IS_FILE, "DEEP"},
	    {"./f.bin", 0, RD, 0, IS_FILE, "GOOD"},           /* "." components stay */
	    {"sub//g.bin", 0, RD, 0, IS_FILE, "SUB"},         /* so do empty ones */
	    {"sub/./deeper//./h.bin", 0, RD, 0, IS_FILE, "DEEP"},
	    {".//sub/g.bin", 0, RD, 0, IS_FILE, "SUB"},
	    {"f.bin\0junk", 5, RD, 0, IS_FILE, "GOOD"},       /* only path[0..len) counts */
	    {longest, 0, RD, 0, IS_FILE, "GOOD"},
	    {"sub", 0, RD, 0, IS_DIR, NULL},                   /* folders open (callers fstat) */
	    {"sub/", 0, RD, 0, IS_DIR, NULL},
	    {".", 0, RD, 0, IS_DIR, NULL},
	    {"sub", 0, O_PATH | O_DIRECTORY, 0, IS_PATH, NULL},
	    {"sub/deeper", 0, O_PATH | O_DIRECTORY, 0, IS_PATH, NULL},
	    {"fifo", 0, RD, 0, IS_FIFO, NULL},                 /* opened, not waited on */
	    {"hard.bin", 0, RD, 0, IS_FILE, SECRET},           /* see test_hard_link */
	};
	run(base_fd, cases, sizeof(cases) / sizeof(cases[0]));
}

static void test_text_refused(void **state)
{
	(void)state;
	char abs_path[512];
	at(abs_path, sizeof(abs_path), "outside/secret.bin");
	static char too_long[OXP_BENEATH_MAX + 2];
	memset(too_long, 'a', sizeof(too_long) - 1);
	for (size_t i = 1; i < sizeof(too_long) - 1; i += 2)
		too_long[i] = '/';
	char name256[300];
	memset(name256, 'x', 256);
	name256[256] = '\0';
	const open_case cases[] = {
	    {"..", 0, RD, EXDEV, 0, NULL},
	    {"../outside/secret.bin", 0, RD, EXDEV, 0, NULL},
	    {"sub/../../outside/secret.bin", 0, RD, EXDEV, 0, NULL},
	    {"sub/../f.bin", 0, RD, EXDEV, 0, NULL}, /* even one that would stay inside */
	    {"sub/..", 0, RD, EXDEV, 0, NULL},
	    {"./../outside", 0, RD, EXDEV, 0, NULL},
	    {"/etc/passwd", 0, RD, EXDEV, 0, NULL},
	    {"//etc/passwd", 0, RD, EXDEV, 0, NULL},
	    {abs_path, 0, RD, EXDEV, 0, NULL},
	    {"", 0, RD, ENOENT, 0, NULL},
	    {"f.bin\0/../../x", 14, RD, EINVAL, 0, NULL}, /* NUL inside the length */
	    {"\0", 1, RD, EINVAL, 0, NULL},
	    {too_long, 0, RD, ENAMETOOLONG, 0, NULL},
	    {name256, 0, RD, ENAMETOOLONG, 0, NULL}, /* a component over NAME_MAX */
	};
	run(base_fd, cases, sizeof(cases) / sizeof(cases[0]));
}

static void test_links_refused(void **state)
{
	(void)state;
	const open_case cases[] = {
	    {"ln_out", 0, RD, ELOOP, 0, NULL},             /* to outside, relative */
	    {"ln_abs", 0, RD, ELOOP, 0, NULL},             /* to outside, absolute */
	    {"ln_in", 0, RD, ELOOP, 0, NULL},              /* to inside: refused as well */
	    {"ln_dir/g.bin", 0, RD, ELOOP, 0, NULL},       /* in a middle component, inside */
	    {"ln_up/secret.bin", 0, RD, ELOOP, 0, NULL},   /* in a middle component, outside */
	    {"dangling", 0, RD, ELOOP, 0, NULL},
	    {"ln_proc", 0, RD, ELOOP, 0, NULL},            /* to a magic link */
	    {"ln_proc/etc/passwd", 0, RD, ELOOP, 0, NULL},
	    {"ln_dir/", 0, RD, ELOOP, 0, NULL},
	    {"ln_in", 0, O_PATH, ELOOP, 0, NULL},          /* O_PATH would open the link */
	    {"ln_dir", 0, O_PATH | O_DIRECTORY, ELOOP, 0, NULL},
	    {"dangling", 0, O_PATH, ELOOP, 0, NULL},
	    {"dangling", 0, O_RDWR | O_CREAT, ELOOP, 0, NULL}, /* never created through it */
	};
	run(base_fd, cases, sizeof(cases) / sizeof(cases[0]));
	char p[512];
	at(p, sizeof(p), "base/nothere");
	assert_int_equal(access(p, F_OK), -1);
}

static void test_magic_links(void **state)
{
	(void)state;
	int self = open("/proc/self", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int proc = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(self >= 0 && proc >= 0);
	const open_case in_self[] = {
	    {"root", 0, RD, ELOOP, 0, NULL},
	    {"root/etc/passwd", 0, RD, ELOOP, 0, NULL},
	    {"cwd", 0, RD, ELOOP, 0, NULL},
	    {"exe", 0, RD, ELOOP, 0, NULL},
	    {"fd/0", 0, RD, ELOOP, 0, NULL},
	    {"root", 0, O_PATH, ELOOP, 0, NULL},
	    {"fd/0", 0, O_PATH, ELOOP, 0, NULL},
	};
	run(self, in_self, sizeof(in_self) / sizeof(in_self[0]));
	const open_case in_proc[] = {
	    {"self/root/etc/passwd", 0, RD, ELOOP, 0, NULL}, /* /proc/self is a link itself */
	    {"thread-self/cwd", 0, RD, ELOOP, 0, NULL},
	};
	run(proc, in_proc, sizeof(in_proc) / sizeof(in_proc[0]));
	close(self);
	close(proc);
}

static void test_not_where_a_folder_is_wanted(void **state)
{
	(void)state;
	const open_case cases[] = {
	    {"nothere", 0, RD, ENOENT, 0, NULL},
	    {"sub/nothere", 0, RD, ENOENT, 0, NULL},
	    {"nodir/f.bin", 0, RD, ENOENT, 0, NULL},
	    {"f.bin/", 0, RD, ENOTDIR, 0, NULL},          /* trailing slash: a folder */
	    {"f.bin/.", 0, RD, ENOTDIR, 0, NULL},
	    {"f.bin/x", 0, RD, ENOTDIR, 0, NULL},         /* a path through a file */
	    {"fifo/x", 0, RD, ENOTDIR, 0, NULL},
	    {"f.bin", 0, O_PATH | O_DIRECTORY, ENOTDIR, 0, NULL},
	    {"dir.bin/", 0, O_RDWR, EISDIR, 0, NULL},
	};
	run(base_fd, cases, sizeof(cases) / sizeof(cases[0]));
	/* a device is opened like any file: the callers refuse what is not regular */
	int dev = open("/dev", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(dev >= 0);
	const open_case devs[] = {{"null", 0, RD, 0, IS_CHR, NULL}};
	run(dev, devs, 1);
	close(dev);
}

/* A hard link is just a file to the kernel: what oxp_open_beneath gives has st_nlink 2,
 * which external data and --models-dir files refuse (test_external, http suite). */
static void test_hard_link(void **state)
{
	(void)state;
	for (unsigned flags = 0; flags <= OXP_BENEATH_NO_OPENAT2; flags += OXP_BENEATH_NO_OPENAT2) {
		int fd = -1;
		assert_int_equal(oxp_open_beneath(&fd, base_fd, "hard.bin", 8, RD, flags), 0);
		struct stat st;
		assert_int_equal(fstat(fd, &st), 0);
		assert_int_equal(st.st_nlink, 2);
		close(fd);
	}
}

/* Creating: O_CREAT through both ways, and with OXP_BENEATH_MKDIRS the folders on the way
 * (always the walk); nothing is created outside, through a link, or over what exists. */
static void test_create(void **state)
{
	(void)state;
	char p[512];
	for (unsigned flags = 0; flags <= OXP_BENEATH_NO_OPENAT2; flags += OXP_BENEATH_NO_OPENAT2) {
		int fd = -1;
		const char *name = flags ? "c_walk.bin" : "c_openat2.bin";
		assert_int_equal(oxp_open_beneath(&fd, base_fd, name, strlen(name),
		                                  O_RDWR | O_CREAT | O_EXCL, flags), 0);
		struct stat st;
		assert_int_equal(fstat(fd, &st), 0);
		assert_int_equal(st.st_mode & 0777, 0600);
		close(fd);
		fd = -7;
		assert_int_equal(oxp_open_beneath(&fd, base_fd, name, strlen(name),
		                                  O_RDWR | O_CREAT | O_EXCL, flags), EEXIST);
		assert_int_equal(oxp_open_beneath(&fd, base_fd, "ln_out", 6,
		                                  O_RDWR | O_CREAT | O_EXCL, flags), EEXIST);
		assert_int_equal(oxp_open_beneath(&fd, base_fd, "ln_dir/x.bin", 12,
		                                  O_RDWR | O_CREAT | O_EXCL, flags), ELOOP);
		assert_int_equal(oxp_open_beneath(&fd, base_fd, "nodir/x.bin", 11,
		                                  O_RDWR | O_CREAT | O_EXCL, flags), ENOENT);
		assert_int_equal(fd, -7);
	}
	const unsigned mk = OXP_BENEATH_MKDIRS;
	int fd = -1;
	int before = sfs_count_fds();
	assert_int_equal(oxp_open_beneath(&fd, base_fd, "new/deep/a.bin", 14,
	                                  O_RDWR | O_CREAT | O_EXCL, mk), 0);
	assert_int_equal(write(fd, "NEW", 3), 3);
	close(fd);
	assert_int_equal(sfs_count_fds(), before);
	struct stat st;
	at(p, sizeof(p), "base/new/deep");
	assert_int_equal(stat(p, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0700);
	const open_case back[] = {{"new/deep/a.bin", 0, RD, 0, IS_FILE, "NEW"}};
	run(base_fd, back, 1);
	static const struct {
		const char *path;
		int want;
	} refused[] = {
	    {"new/deep/a.bin", EEXIST},     /* never replaced */
	    {"ln_dir/made/x.bin", ELOOP},   /* no folder made through a link */
	    {"ln_up/x.bin", ELOOP},
	    {"dangling/x.bin", ELOOP},
	    {"f.bin/x.bin", ENOTDIR},       /* a file used as a folder */
	    {"../escaped/x.bin", EXDEV},    /* nothing made outside */
	    {"/tmp/x.bin", EXDEV},
	    {"new2/", EISDIR},
	    {"", ENOENT},
	};
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		fd = -7;
		int e = oxp_open_beneath(&fd, base_fd, refused[i].path, strlen(refused[i].path),
		                         O_RDWR | O_CREAT | O_EXCL, mk);
		if (e != refused[i].want)
			fail_msg("create '%s': got %s, want %s", refused[i].path, strerror(e),
			         strerror(refused[i].want));
		assert_int_equal(fd, -7);
		assert_int_equal(sfs_count_fds(), before);
	}
	at(p, sizeof(p), "base/sub/made");
	assert_int_equal(access(p, F_OK), -1);
	at(p, sizeof(p), "escaped");
	assert_int_equal(access(p, F_OK), -1);
	at(p, sizeof(p), "outside/x.bin");
	assert_int_equal(access(p, F_OK), -1);
	/* the secret is as it was */
	at(p, sizeof(p), "outside/secret.bin");
	assert_int_equal(stat(p, &st), 0);
	assert_int_equal(st.st_size, (off_t)strlen(SECRET));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_inside),
	    cmocka_unit_test(test_text_refused),
	    cmocka_unit_test(test_links_refused),
	    cmocka_unit_test(test_magic_links),
	    cmocka_unit_test(test_not_where_a_folder_is_wanted),
	    cmocka_unit_test(test_hard_link),
	    cmocka_unit_test(test_create),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
