/* tests/fuzz/fuzz_files_listing.c: libFuzzer target for the directory
 * listing GET /v1/sessions/{id}/files reads from the guest
 * (api_files_listing, gateway/api/api_files.c): the guest's find prints
 * "TYPE\tSIZE\tMTIME\tNAME" lines, and a guest can print anything. The
 * input is that text. Checked besides "no crash" (UBSan included: a
 * number no json_int_t holds must not be converted):
 *   - the answer is {path, entries}, with at most one entry per line;
 *   - each entry has a name, a type of dir, file, link or other, and
 *     integer size and mtime. */
#include "gateway/api/api_int.h"

#include <stdint.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_t *j = api_files_listing("/home/vitrine", (const char *)data, size), *entries, *e;
	size_t lines = 1, i;

	if (!j)
		__builtin_trap();
	for (i = 0; i < size; i++)
		lines += data[i] == '\n';
	entries = json_object_get(j, "entries");
	if (strcmp(json_string_value(json_object_get(j, "path")), "/home/vitrine") ||
	    !json_is_array(entries) || json_array_size(entries) > lines)
		__builtin_trap();
	json_array_foreach(entries, i, e)
	{
		const char *type = json_string_value(json_object_get(e, "type"));

		if (!json_is_string(json_object_get(e, "name")) || !type ||
		    (strcmp(type, "dir") && strcmp(type, "file") && strcmp(type, "link") &&
		     strcmp(type, "other")) ||
		    !json_is_integer(json_object_get(e, "size")) ||
		    !json_is_integer(json_object_get(e, "mtime")))
			__builtin_trap();
	}
	json_decref(j);
	return 0;
}
