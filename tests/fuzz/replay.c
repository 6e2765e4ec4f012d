/*
 * replay.c — a plain main() for any libFuzzer target: runs LLVMFuzzerTestOneInput over
 * every regular file named on the command line or found (not recursively) in the
 * directories named, so fuzz corpora and saved crashers replay in an ordinary build
 * (and under ASan/UBSan) without libFuzzer.
 *
 *   replay_<target> DIR|FILE...
 *
 * Prints one line per directory and a total; exits 0 when every input ran (a broken
 * invariant aborts the process, a sanitizer report ends it), 1 when an input could not be
 * read, 2 on usage errors.  Each input is read into a malloc'd buffer of exactly its size so
 * that ASan catches any read past its end.
 */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define REPLAY_MAX_INPUT ((size_t)64 << 20) /* larger inputs are not fuzz inputs */

/* Read path into a fresh buffer of exactly its size (NULL data for an empty file).
 * Returns 0, or -1 with a message on stderr. */
static int read_file(const char *path, uint8_t **data, size_t *size)
{
	FILE *f = fopen(path, "rb");
	if (f == NULL) {
		fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
		return -1;
	}
	struct stat st;
	if (fstat(fileno(f), &st) != 0 || st.st_size < 0 ||
	    (uint64_t)st.st_size > REPLAY_MAX_INPUT) {
		fprintf(stderr, "replay: %s: unreadable or larger than %zu bytes\n", path,
		        REPLAY_MAX_INPUT);
		fclose(f);
		return -1;
	}
	size_t n = (size_t)st.st_size;
	uint8_t *buf = NULL;
	if (n > 0) {
		buf = malloc(n);
		if (buf == NULL || fread(buf, 1, n, f) != n) {
			fprintf(stderr, "replay: %s: read failed\n", path);
			free(buf);
			fclose(f);
			return -1;
		}
	}
	fclose(f);
	*data = buf;
	*size = n;
	return 0;
}

static int run_one(const char *path)
{
	uint8_t *data;
	size_t size;
	if (read_file(path, &data, &size) != 0)
		return -1;
	/* libFuzzer never passes NULL: give empty inputs a valid (zero-length) pointer too */
	uint8_t empty = 0;
	LLVMFuzzerTestOneInput(data != NULL ? data : &empty, size);
	free(data);
	return 0;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Replay every regular file directly inside dir, in name order (hidden files skipped).
 * Adds to *ran; returns the number of inputs that could not be read. */
static int run_dir(const char *dir, size_t *ran)
{
	DIR *d = opendir(dir);
	if (d == NULL) {
		fprintf(stderr, "replay: %s: %s\n", dir, strerror(errno));
		return 1;
	}
	char **names = NULL;
	size_t n = 0, cap = 0;
	int bad = 0;
	struct dirent *de;
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		if (n == cap) {
			size_t ncap = cap ? cap * 2 : 64;
			char **nn = realloc(names, ncap * sizeof(*nn));
			if (nn == NULL) {
				bad++;
				break;
			}
			names = nn;
			cap = ncap;
		}
		if (asprintf(&names[n], "%s/%s", dir, de->d_name) < 0) {
			bad++;
			break;
		}
		n++;
	}
	closedir(d);
	if (n > 0)
		qsort(names, n, sizeof(*names), cmp_names);
	size_t here = 0;
	for (size_t i = 0; i < n; i++) {
		struct stat st;
		if (stat(names[i], &st) == 0 && S_ISREG(st.st_mode)) {
			if (run_one(names[i]) != 0)
				bad++;
			else
				here++;
		}
		free(names[i]);
	}
	free(names);
	printf("replay: %s: %zu inputs\n", dir, here);
	*ran += here;
	return bad;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: %s DIR|FILE...\n", argv[0]);
		return 2;
	}
	size_t ran = 0;
	int bad = 0;
	for (int i = 1; i < argc; i++) {
		struct stat st;
		if (stat(argv[i], &st) == 0 && S_ISDIR(st.st_mode)) {
			bad += run_dir(argv[i], &ran);
		} else if (run_one(argv[i]) == 0) {
			ran++;
		} else {
			bad++;
		}
	}
	printf("replay: %zu inputs ran, %d unreadable\n", ran, bad);
	return bad ? 1 : 0;
}
