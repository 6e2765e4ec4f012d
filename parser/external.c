/*
 * external.c — external tensor data, kept confined to one directory.
 *
 * external_data entries come from the model and are untrusted (onnx had five path-
 * traversal CVEs in four years: "../", "a/../../x", symlinks in the last and in a parent
 * component, hard links; plus injected keys and negative lengths).  The rules, each with
 * its own oxp_ext_rule:
 *   - keys: location (required), offset, length, checksum, each at most once;
 *   - location: not empty, at most 4095 bytes, no NUL, no backslash, not absolute, no
 *     drive prefix, no ".." component (checked on the text before any system call);
 *   - offset, length: digits only, at most 2^63-1, offset + length too;
 *   - length (when given) == the bytes dims x dtype need;
 *   - the file is opened beneath the caller's directory fd without following any symbolic
 *     link (oxp_open_beneath, parser/beneath.c), must be a regular file with one link,
 *     and offset + length must lie within it.
 */
#include "parser/internal.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define LOCATION_MAX OXP_BENEATH_MAX /* the most oxp_open_beneath takes */

static const char *const rule_names[OXP_EXT__COUNT] = {
    [OXP_EXT_OK] = "ok",
    [OXP_EXT_NOT_EXTERNAL] = "not_external",
    [OXP_EXT_INLINE_DATA] = "inline_data",
    [OXP_EXT_DTYPE] = "bad_dtype",
    [OXP_EXT_UNKNOWN_KEY] = "unknown_key",
    [OXP_EXT_DUPLICATE_KEY] = "duplicate_key",
    [OXP_EXT_NO_LOCATION] = "no_location",
    [OXP_EXT_EMPTY_LOCATION] = "empty_location",
    [OXP_EXT_NUL] = "nul_in_location",
    [OXP_EXT_BACKSLASH] = "backslash",
    [OXP_EXT_ABSOLUTE] = "absolute_path",
    [OXP_EXT_DRIVE] = "drive_path",
    [OXP_EXT_DOTDOT] = "dotdot",
    [OXP_EXT_TOO_LONG] = "location_too_long",
    [OXP_EXT_BAD_NUMBER] = "bad_number",
    [OXP_EXT_NUMBER_RANGE] = "number_out_of_range",
    [OXP_EXT_LENGTH] = "length_mismatch",
    [OXP_EXT_SYMLINK] = "symlink",
    [OXP_EXT_ESCAPE] = "escapes_directory",
    [OXP_EXT_NOT_FOUND] = "not_found",
    [OXP_EXT_NOT_REGULAR] = "not_regular_file",
    [OXP_EXT_HARDLINK] = "hard_link",
    [OXP_EXT_PAST_EOF] = "past_end_of_file",
    [OXP_EXT_IO] = "io_error",
};

const char *oxp_ext_rule_name(oxp_ext_rule rule)
{
	if ((unsigned)rule >= OXP_EXT__COUNT)
		return "unknown";
	return rule_names[rule];
}

/* Record a refusal: *rulep (when given), and err with a message naming the rule. */
static oxp_code refuse(oxp_ext_rule *rulep, oxp_ext_rule rule, oxp_code code,
                       const char *path, oxp_error *err, const char *fmt, ...)
    OXP_PRINTF(6, 7);

static oxp_code refuse(oxp_ext_rule *rulep, oxp_ext_rule rule, oxp_code code,
                       const char *path, oxp_error *err, const char *fmt, ...)
{
	char msg[200];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (rulep != NULL)
		*rulep = rule;
	return oxp__set_error(err, code, 0, path, "external data refused (%s): %s",
	                      oxp_ext_rule_name(rule), msg);
}

/* A printable copy of a model string for messages: at most 40 characters of
 * [A-Za-z0-9_.-], anything else shown as '?'. */
static const char *printable(oxp_str s, char *buf, size_t size)
{
	size_t n = 0;
	for (size_t i = 0; i < s.len && n + 4 < size && i < 40; i++) {
		char ch = s.p[i];
		bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
		          (ch >= '0' && ch <= '9') || ch == '_' || ch == '.' || ch == '-';
		buf[n++] = ok ? ch : '?';
	}
	if (s.len > 40 && n + 4 < size)
		buf[n++] = '.', buf[n++] = '.', buf[n++] = '.';
	buf[n] = '\0';
	return buf;
}

/* The rules on the text of a location.  Returns OXP_EXT_OK or the rule broken. */
static oxp_ext_rule check_location(oxp_str loc)
{
	if (loc.len == 0)
		return OXP_EXT_EMPTY_LOCATION;
	if (loc.len > LOCATION_MAX)
		return OXP_EXT_TOO_LONG;
	if (memchr(loc.p, '\0', loc.len) != NULL)
		return OXP_EXT_NUL;
	if (loc.p[0] == '/')
		return OXP_EXT_ABSOLUTE;
	char c0 = loc.p[0];
	if (loc.len >= 2 && loc.p[1] == ':' && ((c0 >= 'a' && c0 <= 'z') || (c0 >= 'A' && c0 <= 'Z')))
		return OXP_EXT_DRIVE;
	if (memchr(loc.p, '\\', loc.len) != NULL)
		return OXP_EXT_BACKSLASH; /* Windows separators, \\server\share */
	bool named = false; /* a component other than "" and "." */
	for (size_t i = 0; i < loc.len;) {
		size_t j = i;
		while (j < loc.len && loc.p[j] != '/')
			j++;
		size_t n = j - i;
		if (n == 2 && loc.p[i] == '.' && loc.p[i + 1] == '.')
			return OXP_EXT_DOTDOT;
		if (n > 0 && !(n == 1 && loc.p[i] == '.'))
			named = true;
		i = j + 1;
	}
	/* The last component must name the file: not "", not "." (a trailing "/" or "/."). */
	char last = loc.p[loc.len - 1];
	if (!named || last == '/' || (last == '.' && (loc.len == 1 || loc.p[loc.len - 2] == '/')))
		return OXP_EXT_EMPTY_LOCATION;
	return OXP_EXT_OK;
}

/* offset / length: decimal digits only, at most INT64_MAX. */
static oxp_ext_rule parse_number(oxp_str s, uint64_t *out)
{
	if (s.len == 0)
		return OXP_EXT_BAD_NUMBER;
	uint64_t v = 0;
	for (size_t i = 0; i < s.len; i++) {
		if (s.p[i] < '0' || s.p[i] > '9')
			return OXP_EXT_BAD_NUMBER;
	}
	for (size_t i = 0; i < s.len; i++) {
		uint64_t d = (uint64_t)(s.p[i] - '0');
		if (v > ((uint64_t)INT64_MAX - d) / 10)
			return OXP_EXT_NUMBER_RANGE;
		v = v * 10 + d;
	}
	*out = v;
	return OXP_EXT_OK;
}

/* Bytes dims x dtype need in raw form; false when the type has no raw form or the size
 * overflows. */
static bool needed_bytes(const oxp_tensor *t, uint64_t *out)
{
	uint64_t count;
	unsigned bits = oxp_dtype_bits(t->data_type);
	if (bits == 0 || !oxp_dims_count(t->dims, t->ndims, &count))
		return false;
	if (bits < 8) {
		uint64_t per = 8 / bits;
		*out = count / per + (count % per != 0);
		return true;
	}
	return !__builtin_mul_overflow(count, (uint64_t)(bits / 8), out);
}

enum { K_LOCATION, K_OFFSET, K_LENGTH, K_CHECKSUM, K__COUNT };

oxp_code oxp_external_parse(const oxp_tensor *t, oxp_external *out, oxp_ext_rule *rule,
                            oxp_error *err)
{
	static const char *const keys[K__COUNT] = {"location", "offset", "length", "checksum"};
	char kb[48];
	if (err != NULL)
		memset(err, 0, sizeof(*err));
	if (t->data_location != 1)
		return refuse(rule, OXP_EXT_NOT_EXTERNAL, OXP_E_STORAGE, "data_location", err,
		              "the tensor's data_location is not EXTERNAL");
	if (t->has_raw_data || t->nstring_data > 0 || t->typed_fields != 0)
		return refuse(rule, OXP_EXT_INLINE_DATA, OXP_E_STORAGE, "", err,
		              "the tensor also stores values inline");
	oxp_value_class cls = oxp_dtype_class(t->data_type);
	if (cls == OXP_VC_NONE || cls == OXP_VC_STRING)
		return refuse(rule, OXP_EXT_DTYPE, OXP_E_DTYPE, "data_type", err,
		              "data type %s cannot be stored externally",
		              cls == OXP_VC_STRING ? "STRING" : "UNDEFINED or unknown");
	uint64_t need;
	if (!needed_bytes(t, &need))
		return refuse(rule, OXP_EXT_NUMBER_RANGE, OXP_E_DIMS, "dims", err,
		              "dims x dtype overflow 64 bits");

	const oxp_str *val[K__COUNT] = {NULL, NULL, NULL, NULL};
	for (size_t i = 0; i < t->nexternal_data; i++) {
		const oxp_entry *e = &t->external_data[i];
		int k = 0;
		while (k < K__COUNT && !oxp_str_eq(e->key, keys[k]))
			k++;
		if (k == K__COUNT)
			return refuse(rule, OXP_EXT_UNKNOWN_KEY, OXP_E_EXTERNAL, "external_data", err,
			              "key '%s' (entry %zu) is not one of location, offset, length, "
			              "checksum", printable(e->key, kb, sizeof(kb)), i);
		if (val[k] != NULL)
			return refuse(rule, OXP_EXT_DUPLICATE_KEY, OXP_E_EXTERNAL, "external_data", err,
			              "key '%s' given twice", keys[k]);
		val[k] = &e->value;
	}
	if (val[K_LOCATION] == NULL)
		return refuse(rule, OXP_EXT_NO_LOCATION, OXP_E_EXTERNAL, "external_data", err,
		              "no location entry");
	static const char *const why[OXP_EXT__COUNT] = {
	    [OXP_EXT_EMPTY_LOCATION] = "location names no file (empty, or ends in / or /.)",
	    [OXP_EXT_TOO_LONG] = "location is longer than 4095 bytes",
	    [OXP_EXT_NUL] = "location contains a NUL byte",
	    [OXP_EXT_BACKSLASH] = "location contains a backslash",
	    [OXP_EXT_ABSOLUTE] = "location is an absolute path",
	    [OXP_EXT_DRIVE] = "location starts with a drive letter",
	    [OXP_EXT_DOTDOT] = "location has a '..' component",
	};
	oxp_ext_rule r = check_location(*val[K_LOCATION]);
	if (r != OXP_EXT_OK)
		return refuse(rule, r, OXP_E_EXTERNAL, "external_data.location", err, "%s", why[r]);

	oxp_external x;
	memset(&x, 0, sizeof(x));
	x.location = *val[K_LOCATION];
	for (int k = K_OFFSET; k <= K_LENGTH; k++) {
		uint64_t v = 0;
		r = val[k] != NULL ? parse_number(*val[k], &v) : OXP_EXT_OK;
		if (r != OXP_EXT_OK)
			return refuse(rule, r, OXP_E_EXTERNAL, k == K_OFFSET ? "external_data.offset"
			                                                    : "external_data.length",
			              err, "%s '%s' is not a decimal integer in 0..2^63-1", keys[k],
			              printable(*val[k], kb, sizeof(kb)));
		*(k == K_OFFSET ? &x.offset : &x.length) = v;
	}
	x.has_length = val[K_LENGTH] != NULL;
	if (x.has_length && x.length != need)
		return refuse(rule, OXP_EXT_LENGTH, OXP_E_STORAGE, "external_data.length", err,
		              "length %" PRIu64 " but dims x %s need %" PRIu64 " bytes", x.length,
		              oxp_dtype_name(t->data_type), need);
	x.length = need;
	if (x.offset > (uint64_t)INT64_MAX - x.length)
		return refuse(rule, OXP_EXT_NUMBER_RANGE, OXP_E_EXTERNAL, "external_data.offset",
		              err, "offset + length exceed 2^63-1");
	if (val[K_CHECKSUM] != NULL)
		x.checksum = *val[K_CHECKSUM];
	if (rule != NULL)
		*rule = OXP_EXT_OK;
	*out = x;
	return OXP_OK;
}

oxp_code oxp_external_open(oxp_external_file *out, int dirfd, const oxp_tensor *t,
                           unsigned flags, oxp_ext_rule *rule, oxp_error *err)
{
	oxp_external x;
	oxp_code rc = oxp_external_parse(t, &x, rule, err);
	if (rc != OXP_OK)
		return rc;
	int fd = -1;
	int e = oxp_open_beneath(&fd, dirfd, x.location.p, x.location.len,
	                         O_RDONLY | O_NOCTTY | O_NONBLOCK,
	                         (flags & OXP_EXT_NO_OPENAT2) ? OXP_BENEATH_NO_OPENAT2 : 0);
	if (e != 0) {
		if (e == ELOOP)
			return refuse(rule, OXP_EXT_SYMLINK, OXP_E_EXTERNAL, "external_data.location",
			              err, "a component of the location is a symbolic link");
		if (e == EXDEV)
			return refuse(rule, OXP_EXT_ESCAPE, OXP_E_EXTERNAL, "external_data.location",
			              err, "the location leads out of the model's directory");
		if (e == ENOENT)
			return refuse(rule, OXP_EXT_NOT_FOUND, OXP_E_IO, "external_data.location", err,
			              "no such file");
		if (e == ENOTDIR)
			return refuse(rule, OXP_EXT_NOT_REGULAR, OXP_E_EXTERNAL,
			              "external_data.location", err,
			              "a directory component of the location is not a directory");
		return refuse(rule, OXP_EXT_IO, OXP_E_IO, "external_data.location", err,
		              "cannot open the file: %s", strerror(e));
	}
	struct stat st;
	if (fstat(fd, &st) != 0) {
		e = errno;
		close(fd);
		return refuse(rule, OXP_EXT_IO, OXP_E_IO, "", err, "fstat failed: %s", strerror(e));
	}
	oxp_ext_rule bad = OXP_EXT_OK;
	if (!S_ISREG(st.st_mode))
		bad = OXP_EXT_NOT_REGULAR;
	else if (st.st_nlink > 1)
		bad = OXP_EXT_HARDLINK;
	else if (st.st_size < 0 || x.offset + x.length > (uint64_t)st.st_size)
		bad = OXP_EXT_PAST_EOF;
	if (bad != OXP_EXT_OK) {
		close(fd);
		if (bad == OXP_EXT_NOT_REGULAR)
			return refuse(rule, bad, OXP_E_EXTERNAL, "external_data.location", err,
			              "the location is not a regular file");
		if (bad == OXP_EXT_HARDLINK)
			return refuse(rule, bad, OXP_E_EXTERNAL, "external_data.location", err,
			              "the file has %ju links (hard links are refused)",
			              (uintmax_t)st.st_nlink);
		return refuse(rule, bad, OXP_E_RANGE, "external_data.offset", err,
		              "offset %" PRIu64 " + length %" PRIu64 " is beyond the file's %jd bytes",
		              x.offset, x.length, (intmax_t)st.st_size);
	}
	out->fd = fd;
	out->offset = x.offset;
	out->length = x.length;
	out->file_size = (uint64_t)st.st_size;
	return OXP_OK;
}

void oxp_external_close(oxp_external_file *f)
{
	if (f != NULL && f->fd >= 0) {
		close(f->fd);
		f->fd = -1;
	}
}

oxp_code oxp_external_map(oxp_external_region *out, const oxp_external_file *f,
                          oxp_error *err)
{
	static const uint8_t empty[1];
	if (err != NULL)
		memset(err, 0, sizeof(*err));
	oxp_external_region m = {empty, 0, NULL, 0};
	if (f->length == 0) {
		*out = m;
		return OXP_OK;
	}
	long page = sysconf(_SC_PAGESIZE);
	uint64_t start = f->offset - f->offset % (uint64_t)(page > 0 ? page : 4096);
	uint64_t len = f->offset - start + f->length; /* offset + length <= 2^63-1 */
	struct stat st;
	if (len > SIZE_MAX || fstat(f->fd, &st) != 0 ||
	    f->offset + f->length > (uint64_t)st.st_size)
		return refuse(NULL, OXP_EXT_IO, OXP_E_IO, "", err,
		              "the region cannot be mapped (too large, or the file changed)");
	void *base = mmap(NULL, (size_t)len, PROT_READ, MAP_PRIVATE, f->fd, (off_t)start);
	if (base == MAP_FAILED)
		return refuse(NULL, OXP_EXT_IO, OXP_E_IO, "", err, "mmap failed: %s",
		              strerror(errno));
	m.base = base;
	m.base_len = (size_t)len;
	m.bytes = (const uint8_t *)base + (f->offset - start);
	m.nbytes = (size_t)f->length;
	*out = m;
	return OXP_OK;
}

void oxp_external_unmap(oxp_external_region *m)
{
	if (m != NULL && m->base != NULL) {
		munmap(m->base, m->base_len);
		m->base = NULL;
		m->bytes = NULL;
		m->nbytes = 0;
	}
}
