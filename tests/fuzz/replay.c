// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Runs a fuzz harness over files without libFuzzer, so that make check can
 * replay the seed corpora (and any crash found later) with the ordinary
 * compiler: replay [FILE|DIR...]; without arguments, the harness's seed
 * corpus ($SRCDIR/tests/fuzz/<CORPUS>), as a test of make check.  A
 * harness failure aborts.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	unsigned char *buf = NULL;
	size_t n = 0, cap = 0, got;

	if (!f) {
		perror(path);
		return 1;
	}
	do {
		if (n == cap) {
			unsigned char *nb = realloc(buf, cap = cap ? 2 * cap : 65536);

			if (!nb) {
				fclose(f);
				free(buf);
				return 1;
			}
			buf = nb;
		}
		got = fread(buf + n, 1, cap - n, f);
		n += got;
	} while (got);
	fclose(f);
	LLVMFuzzerTestOneInput(buf, n);
	free(buf);
	return 0;
}

int main(int argc, char **argv)
{
	int i, err = 0, count = 0;
	char seeds[4096];
	const char *src = getenv("SRCDIR");

	if (argc < 2) {
		snprintf(seeds, sizeof(seeds), "%s/tests/fuzz/%s",
			 src ? src : ".", CORPUS);
		argv[0] = seeds;
		argc = 1;
		i = 0;
	} else {
		i = 1;
	}
	for (; i < argc; i++) {
		struct stat st;
		DIR *d;
		struct dirent *e;
		char path[4096];

		if (stat(argv[i], &st)) {
			perror(argv[i]);
			return 1;
		}
		if (!S_ISDIR(st.st_mode)) {
			err |= run_file(argv[i]);
			count++;
			continue;
		}
		d = opendir(argv[i]);
		while (d && (e = readdir(d))) {
			if (e->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "%s/%s", argv[i], e->d_name);
			err |= run_file(path);
			count++;
		}
		if (d)
			closedir(d);
	}
	printf("replayed %d inputs\n", count);
	return err || !count;
}
