/*
 * cutdump.c — the structure parser/cut.c makes of a model (oxp_cut), for
 * tests/e2e/cut.test.mjs, which compares it with web/structure.js's on the same file.
 *
 *   cutdump FILE NAME [OUT [MIN_SAVING]]
 *
 * Cuts FILE naming oxp_cut_location(NAME) and prints one JSON line: {"ok": true, "cuts":
 * bool, "cut": N, "tensors": N, "bytes": N, "location_ok": bool} (and with OUT, when it
 * cuts, writes the structure there; MIN_SAVING instead of the page's), or {"ok": false,
 * "code": "...", "offset": N}.
 * Exit status 0, 1 when the walk failed, 2 on usage or I/O errors.
 */
#include "parser/oxp.h"

#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static bool to_file(void *ctx, const void *p, size_t n)
{
	return fwrite(p, 1, n, (FILE *)ctx) == n;
}

int main(int argc, char **argv)
{
	if (argc < 3 || argc > 5) {
		fprintf(stderr, "usage: cutdump FILE NAME [OUT [MIN_SAVING]]\n");
		return 2;
	}
	int fd = open(argv[1], O_RDONLY | O_CLOEXEC);
	struct stat sb;
	if (fd < 0 || fstat(fd, &sb) != 0 || sb.st_size <= 0) {
		fprintf(stderr, "cutdump: cannot read %s\n", argv[1]);
		return 2;
	}
	void *m = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (m == MAP_FAILED) {
		fprintf(stderr, "cutdump: cannot map %s\n", argv[1]);
		return 2;
	}
	char loc[OXP_CUT_LOCATION_MAX + 1];
	(void)oxp_cut_location(argv[2], loc, sizeof(loc));
	FILE *out = argc >= 4 ? fopen(argv[3], "wb") : NULL;
	if (argc >= 4 && out == NULL) {
		fprintf(stderr, "cutdump: cannot write %s\n", argv[3]);
		return 2;
	}
	oxp_cut_info info;
	oxp_error err;
		uint64_t min_saving = argc == 5 ? strtoull(argv[4], NULL, 10) : OXP_CUT_MIN_SAVING;
	oxp_code c = oxp_cut(&info, m, (size_t)sb.st_size, loc, min_saving,
	                     out != NULL ? to_file : NULL, out, &err);
	int rc = 0;
	if (out != NULL && fclose(out) != 0)
		rc = 2;
	munmap(m, (size_t)sb.st_size);
	if (c != OXP_OK) {
		printf("{\"ok\":false,\"code\":\"%s\",\"offset\":%" PRIu64 "}\n", oxp_code_name(c),
		       err.offset);
		return 1;
	}
	printf("{\"ok\":true,\"cuts\":%s,\"cut\":%" PRIu64 ",\"tensors\":%" PRIu64
	       ",\"bytes\":%" PRIu64 ",\"location_ok\":%s}\n",
	       info.cuts ? "true" : "false", info.cut, info.tensors, info.bytes,
	       strcmp(loc, argv[2]) == 0 ? "true" : "false");
	return rc;
}
