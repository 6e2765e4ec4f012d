/*
 * beneath.c — open a path beneath a directory and never anywhere else.
 *
 * The one implementation of the confinement every untrusted path goes through: external
 * data locations (parser/external.c), --models-dir files (service/routes.c) and the
 * files of uploaded or downloaded data folders (store/local.c).  Two ways, which refuse
 * the same things (tests/unit/test_beneath.c runs every case through both):
 *   - openat2() with RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS: the
 *     kernel resolves the whole path and refuses any symbolic link, magic link (/proc)
 *     and escape;
 *   - where the kernel has no openat2 (before Linux 5.6, or a seccomp filter answering
 *     ENOSYS/EPERM), and always when folders are to be made: a walk of the components,
 *     each opened relative to the last with O_NOFOLLOW (folders also O_DIRECTORY and
 *     checked with fstat), so no name is ever resolved through a link.
 * Before either, the text itself: not empty, no NUL, not absolute, no ".." component, at
 * most OXP_BENEATH_MAX bytes — so neither way ever walks up, whatever the caller checked.
 */
#include "parser/internal.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#if defined(__linux__) && defined(SYS_openat2)
#include <linux/openat2.h>
#define HAVE_OPENAT2 1
#endif

#define DIR_FLAGS (O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)

/* The text's own faults, before any system call. */
static int check_text(const char *path, size_t len)
{
	if (len > OXP_BENEATH_MAX)
		return ENAMETOOLONG;
	if (len == 0)
		return ENOENT;
	if (memchr(path, '\0', len) != NULL)
		return EINVAL;
	if (path[0] == '/')
		return EXDEV;
	for (size_t i = 0; i < len;) {
		size_t j = i;
		while (j < len && path[j] != '/')
			j++;
		if (j - i == 2 && path[i] == '.' && path[i + 1] == '.')
			return EXDEV;
		i = j + 1;
	}
	return 0;
}

static int via_openat2(int *out, int dirfd, const char *path, int oflags)
{
#ifdef HAVE_OPENAT2
	struct open_how how;
	memset(&how, 0, sizeof(how));
	how.flags = (uint64_t)(unsigned)(oflags | O_CLOEXEC | O_NOFOLLOW);
	if (oflags & O_CREAT)
		how.mode = 0600;
	how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
	long r = syscall(SYS_openat2, dirfd, path, &how, sizeof(how));
	if (r < 0)
		return errno;
	*out = (int)r;
	return 0;
#else
	(void)out, (void)dirfd, (void)path, (void)oflags;
	return ENOSYS;
#endif
}

/* After openat(dir, name, ...|O_NOFOLLOW) failed with e: ELOOP when name is a symbolic
 * link (O_DIRECTORY|O_NOFOLLOW reports one as ENOTDIR, O_EXCL as EEXIST: that stays), else
 * e. */
static int classify(int dir, const char *name, int e)
{
	struct stat st;
	if (e != EEXIST && fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode))
		return ELOOP;
	return e;
}

/* Is p[0..] (up to the next '/' or the end) "" or "."? */
static bool is_empty_component(const char *p)
{
	return p[0] == '/' || p[0] == '\0' || (p[0] == '.' && (p[1] == '/' || p[1] == '\0'));
}

/* The portable way: component by component from dirfd (path passed check_text, so every
 * step stays beneath it).  path is split in place. */
static int walk(int *out, int dirfd, char *path, int oflags, bool mkdirs)
{
	int cur = dirfd, rc = 0;
	char *p = path;
	for (;;) {
		while (*p != '\0' && is_empty_component(p)) /* "", "." (a//b, ./a): stay */
			p += p[0] == '/' ? 1 : p[1] == '/' ? 2 : 1;
		char *slash = strchr(p, '/');
		char *next = slash != NULL ? slash + 1 : NULL;
		bool last = true, dir_wanted = false;
		for (const char *q = next; q != NULL;) { /* anything named after this one? */
			if (!is_empty_component(q)) {
				last = false;
				break;
			}
			dir_wanted = true; /* "name/" or "name/.": name must be a folder */
			const char *s2 = strchr(q, '/');
			q = s2 != NULL ? s2 + 1 : NULL;
		}
		if (slash != NULL)
			*slash = '\0';
		const char *name = *p != '\0' ? p : "."; /* only "" and "." components: dirfd */
		int nfd;
		if (last) {
			if (dir_wanted && (oflags & O_CREAT)) {
				rc = EISDIR; /* as open("new/", O_CREAT) says */
				break;
			}
			nfd = openat(cur, name, oflags | O_NOFOLLOW | O_CLOEXEC | (dir_wanted ? O_DIRECTORY : 0),
			             0600);
		} else {
			if (mkdirs && mkdirat(cur, name, 0700) != 0 && errno != EEXIST) {
				rc = classify(cur, name, errno);
				break;
			}
			nfd = openat(cur, name, DIR_FLAGS);
		}
		if (nfd < 0) {
			rc = classify(cur, name, errno);
			break;
		}
		struct stat st;
		if (!last && (fstat(nfd, &st) != 0 || !S_ISDIR(st.st_mode))) {
			close(nfd);
			rc = ENOTDIR;
			break;
		}
		if (cur != dirfd)
			close(cur);
		cur = nfd;
		if (last) {
			*out = nfd;
			return 0;
		}
		p = next;
	}
	if (cur != dirfd)
		close(cur);
	return rc;
}

int oxp_open_beneath(int *out, int dirfd, const char *path, size_t len, int oflags,
                     unsigned flags)
{
	int rc = check_text(path, len);
	if (rc != 0)
		return rc;
	char copy[OXP_BENEATH_MAX + 1];
	memcpy(copy, path, len);
	copy[len] = '\0';
	int fd = -1;
	rc = ENOSYS;
	if (!(flags & (OXP_BENEATH_NO_OPENAT2 | OXP_BENEATH_MKDIRS)))
		rc = via_openat2(&fd, dirfd, copy, oflags);
	/* No openat2 (old kernel, or a seccomp filter that answers EPERM/ENOSYS): walk.  Its
	 * ENOTDIR may be a symbolic link opened O_PATH|O_DIRECTORY: the walk says which. */
	if (rc == ENOSYS || rc == EPERM || rc == E2BIG || rc == EINVAL || rc == ENOTDIR)
		rc = walk(&fd, dirfd, copy, oflags, (flags & OXP_BENEATH_MKDIRS) != 0);
	if (rc != 0)
		return rc;
	/* O_PATH|O_NOFOLLOW opens a final symbolic link itself (openat2 as well) */
	struct stat st;
	if ((oflags & O_PATH) && (fstat(fd, &st) != 0 || S_ISLNK(st.st_mode))) {
		close(fd);
		return ELOOP;
	}
	*out = fd;
	return 0;
}
