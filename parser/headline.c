/*
 * headline.c — a parse failure in a person's words (issue 39).  The decoder's message
 * is exact but speaks protobuf ("protobuf groups (wire type 3/4) are not supported in
 * unknown field 13 of ModelProto at byte 2"): true, and no help to someone who renamed a
 * .txt file or whose download was cut.  oxp_error_headline() looks at what the file is
 * (its first bytes, its size) and at the error's code and says what a person can act on:
 * "this is not an ONNX model: it looks like text", "the file ends early: 1,000 of at
 * least 102,057,644 bytes — was the download cut?".  The exact message stays below it
 * wherever it is shown (the CLI's second line, the HTTP error's "message").  One place,
 * used by `onnxviz inspect`/`render`/`check` and the upload's error JSON ("headline").
 */
#include "parser/internal.h"

#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* n with thousands separators ("102,057,644") into buf. */
static const char *grouped(uint64_t n, char *buf, size_t size)
{
	char digits[24];
	int len = snprintf(digits, sizeof(digits), "%" PRIu64, n);
	size_t o = 0;
	for (int i = 0; i < len && o + 2 < size; i++) {
		if (i > 0 && (len - i) % 3 == 0)
			buf[o++] = ',';
		buf[o++] = digits[i];
	}
	buf[o] = '\0';
	return buf;
}

static bool starts(const uint8_t *p, size_t n, const char *magic, size_t mlen)
{
	return n >= mlen && memcmp(p, magic, mlen) == 0;
}

/* True when the first bytes read as text: printable ASCII, tabs and line ends, and
 * well-formed UTF-8 sequences (a sequence cut by the end of what was read counts).  A
 * model never does: it starts with a field tag (0x08 for ir_version, a control byte). */
static bool looks_like_text(const uint8_t *p, size_t n)
{
	if (n > 512)
		n = 512;
	for (size_t i = 0; i < n;) {
		uint8_t c = p[i];
		size_t more = c < 0x80 ? 0 : (c & 0xe0) == 0xc0 ? 1 : (c & 0xf0) == 0xe0 ? 2
		                           : (c & 0xf8) == 0xf0 ? 3 : 9;
		if (more == 0 && c < 0x20 && c != '\t' && c != '\n' && c != '\r' && c != '\f')
			return false;
		if (c == 0x7f || more == 9 || (more == 1 && c < 0xc2))
			return false;
		for (size_t k = 1; k <= more && i + k < n; k++)
			if ((p[i + k] & 0xc0) != 0x80)
				return false;
		i += 1 + more;
	}
	return n > 0;
}

/* What another kind of file is, from its first bytes; NULL when none is recognised. */
static const char *other_format(const uint8_t *p, size_t n)
{
	static const struct {
		const char *magic;
		size_t len;
		const char *what;
	} known[] = {
	    {"\x89PNG\r\n\x1a\n", 8, "it is a PNG image"},
	    {"\xff\xd8\xff", 3, "it is a JPEG image"},
	    {"GIF8", 4, "it is a GIF image"},
	    {"%PDF", 4, "it is a PDF document"},
	    {"PK\x03\x04", 4, "it is a zip archive (a PyTorch .pt/.pth checkpoint, a .npz or "
	                      "a .zip?): export the model to ONNX, or unpack the .onnx file"},
	    {"\x1f\x8b", 2, "it is gzip-compressed: decompress it first (gunzip)"},
	    {"\x89HDF\r\n\x1a\n", 8, "it is an HDF5 file (a Keras .h5 model?): convert it "
	                             "to ONNX first (tf2onnx)"},
	    {"\x93NUMPY", 6, "it is a NumPy array (.npy)"},
	    {"GGUF", 4, "it is a GGUF model (llama.cpp), not ONNX"},
	    {"\xfd" "7zXZ", 5, "it is an xz archive: decompress it first"},
	    {"BZh", 3, "it is a bzip2 archive: decompress it first"},
	    {"\x28\xb5\x2f\xfd", 4, "it is a zstd archive: decompress it first"},
	};
	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		if (starts(p, n, known[i].magic, known[i].len))
			return known[i].what;
	if (n >= 8 && memcmp(p + 4, "TFL3", 4) == 0)
		return "it is a TensorFlow Lite model (.tflite): convert it to ONNX first (tf2onnx)";
	if (n >= 2 && p[0] == 0x80 && p[1] >= 2 && p[1] <= 5)
		return "it is a Python pickle (a PyTorch checkpoint?): export the model to ONNX";
	/* safetensors: an 8-byte little-endian header length, then the JSON header */
	if (n >= 10 && p[8] == '{' && p[9] == '"' && p[6] == 0 && p[7] == 0)
		return "it is a safetensors file (weights without a graph), not an ONNX model";
	if (looks_like_text(p, n)) {
		size_t i = 0;
		while (i < n && (p[i] == ' ' || p[i] == '\t' || p[i] == '\r' || p[i] == '\n'))
			i++;
		if (i < n && p[i] == '<')
			return "it looks like text (HTML or XML: a web page saved instead of the file?)";
		if (i < n && (p[i] == '{' || p[i] == '['))
			return "it looks like JSON text";
		if (n >= 7 && (starts(p, n, "version", 7) || starts(p, n, "https:", 6)))
			return "it looks like text (a Git LFS pointer or a link, not the file itself?)";
		return "it looks like text";
	}
	return NULL;
}

/* A varint at p[0..n) into *v: its length, 0 when it does not end inside n bytes. */
static size_t varint_at(const uint8_t *p, size_t n, uint64_t *v)
{
	*v = 0;
	for (size_t i = 0; i < n && i < 10; i++) {
		*v |= (uint64_t)(p[i] & 0x7f) << (7 * i);
		if ((p[i] & 0x80) == 0)
			return i + 1;
	}
	return 0;
}

/* For a field past the end at `offset` (the error's, where its tag is): the bytes the
 * file would need at least (the end of that field), 0 when the bytes read cannot tell.
 * Only a field of the model itself (path without '.' or '['): the end of a field inside
 * another is bounded by that one's, so past it is damage, whatever the file's size (a cut
 * file fails first at the model's field that crosses the end: the decoder checks a
 * length before it reads what it holds). */
static uint64_t needed_bytes(const uint8_t *p, size_t n, const oxp_error *err)
{
	uint64_t offset = err->offset;
	if (offset >= n || strpbrk(err->path, ".[") != NULL)
		return 0;
	size_t at = (size_t)offset;
	uint64_t tag, len;
	size_t t = varint_at(p + at, n - at, &tag);
	if (t == 0 || (tag & 7) != 2)
		return 0;
	size_t l = varint_at(p + at + t, n - at - t, &len);
	if (l == 0)
		return 0;
	return oxp_sat_add_u64((uint64_t)(at + t + l), len);
}

char *oxp_error_headline(const oxp_error *err, const uint8_t *head, size_t len,
                         uint64_t size, char *buf, size_t bufsize)
{
	if (bufsize == 0)
		return buf;
	buf[0] = '\0';
	if (len > size)
		len = (size_t)size;
	char a[32], b[32];
	const char *other = head != NULL ? other_format(head, len) : NULL;
	bool readable = err->code != OXP_OK && err->code != OXP_E_IO && err->code != OXP_E_NOMEM;
	if (readable && size == 0) {
		snprintf(buf, bufsize, "the file is empty (0 bytes): was it saved or copied "
		                       "completely?");
		return buf;
	}
	if (readable && other != NULL) {
		snprintf(buf, bufsize, "this is not an ONNX model: %s", other);
		return buf;
	}
	uint64_t need = head != NULL ? needed_bytes(head, len, err) : 0;
	switch (err->code) {
	case OXP_OK:
		break;
	case OXP_E_IO:
		snprintf(buf, bufsize, "the file cannot be read (%s)", err->message);
		break;
	case OXP_E_NOMEM:
		snprintf(buf, bufsize, "out of memory while reading the model: try again later");
		break;
	case OXP_E_BUDGET:
		snprintf(buf, bufsize, "the model needs more memory than is allowed for one model: "
		                       "it is unusually large, or damaged");
		break;
	case OXP_E_LIMIT:
	case OXP_E_DEPTH:
	case OXP_E_GRAPH_DEPTH:
		snprintf(buf, bufsize, "the model is beyond this program's limits (nesting or "
		                       "counts): it may be damaged, or unusually large");
		break;
	case OXP_E_RECURSION:
		snprintf(buf, bufsize, "the model's functions call each other in a loop: it "
		                       "cannot be drawn");
		break;
	case OXP_E_DIMS:
		snprintf(buf, bufsize, "the model is damaged: a tensor has an impossible shape");
		break;
	case OXP_E_TRUNCATED:
	case OXP_E_LENGTH:
		if (need > size && size != UINT64_MAX)
			snprintf(buf, bufsize,
			         "the file ends early: %s of at least %s bytes — was the download or "
			         "copy cut short?",
			         grouped(size, a, sizeof(a)), grouped(need, b, sizeof(b)));
		else if (err->code == OXP_E_TRUNCATED)
			snprintf(buf, bufsize, "the file ends early: was the download or copy cut short?");
		else
			snprintf(buf, bufsize, "the model is damaged: a part of it claims more bytes "
			                       "than it holds (or this is not an ONNX model)");
		break;
	case OXP_E_NOT_MODEL:
		snprintf(buf, bufsize, "this is not an ONNX model: it has neither a graph nor an "
		                       "ONNX version (another format saved as .onnx?)");
		break;
	case OXP_E_VARINT:
	case OXP_E_TAG:
	case OXP_E_WIRETYPE:
	case OXP_E_GROUP:
	case OXP_E_PACKED:
		snprintf(buf, bufsize, "this is not an ONNX model, or it is damaged: its bytes do "
		                       "not read as one");
		break;
	default: /* tensor and check codes: the exact message says it best */
		break;
	}
	return buf;
}

char *oxp_error_headline_file(const oxp_error *err, const char *path, char *buf,
                              size_t bufsize)
{
	uint8_t head[16 * 1024];
	size_t n = 0;
	uint64_t size = 0;
	int fd = path != NULL ? open(path, O_RDONLY | O_CLOEXEC) : -1;
	struct stat st;
	bool ok = fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
	if (ok) {
		size = (uint64_t)st.st_size;
		while (n < sizeof(head)) {
			ssize_t got = pread(fd, head + n, sizeof(head) - n, (off_t)n);
			if (got <= 0)
				break;
			n += (size_t)got;
		}
	}
	if (fd >= 0)
		close(fd);
	return oxp_error_headline(err, ok ? head : NULL, n, ok ? size : UINT64_MAX, buf, bufsize);
}
