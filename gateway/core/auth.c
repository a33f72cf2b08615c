/* gateway/core/auth.c: see auth.h. */
#include "gateway/core/auth.h"

#include "common/sha256.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

int auth_new_token(char *out)
{
	static const char b64url[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
	unsigned char raw[33];
	size_t o = 0;

	if (getrandom(raw, 32, 0) != 32)
		return -EIO;
	raw[32] = 0;
	for (size_t i = 0; i < 33 && o < AUTH_TOKEN_LEN; i += 3) {
		unsigned v = (unsigned)raw[i] << 16 | (unsigned)raw[i + 1] << 8 | raw[i + 2];

		out[o++] = b64url[v >> 18 & 63];
		out[o++] = b64url[v >> 12 & 63];
		if (o < AUTH_TOKEN_LEN)
			out[o++] = b64url[v >> 6 & 63];
		if (o < AUTH_TOKEN_LEN)
			out[o++] = b64url[v & 63];
	}
	out[AUTH_TOKEN_LEN] = '\0';
	return 0;
}

bool auth_equal(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), n = la > lb ? la : lb;
	unsigned char diff = (unsigned char)(la != lb);

	for (size_t i = 0; i < n; i++)
		diff |= (unsigned char)((i < la ? a[i] : 0) ^ (i < lb ? b[i] : 0));
	return diff == 0;
}

int auth_parse_bearer(const char *header, char *out, size_t outlen)
{
	size_t n;

	if (!header || strncasecmp(header, "Bearer ", 7))
		return -EINVAL;
	header += 7;
	while (*header == ' ')
		header++;
	n = strcspn(header, " \t\r\n");
	if (n == 0 || n >= outlen || header[n] != '\0')
		return -EINVAL;
	memcpy(out, header, n);
	out[n] = '\0';
	return 0;
}

void auth_token_hash(const char *token, char out[AUTH_HASH_LEN + 1])
{
	sha256_hex(token, strlen(token), out);
}

static const char *const right_names[] = { "view", "act",   "exec", "root",   "egress",
					   "fork", "share", "vnc",  "manage", "admin" };

enum auth_scope auth_scope_from_rights(unsigned rights)
{
	return rights & (AUTH_R_ADMIN | AUTH_R_MANAGE) ? AUTH_OPERATOR
	       : rights & AUTH_R_ACT		       ? AUTH_CONTROL
	       : rights & AUTH_R_VIEW		       ? AUTH_VIEW
						       : AUTH_NONE;
}

const char *auth_right_name(unsigned right)
{
	for (unsigned i = 0; i < sizeof(right_names) / sizeof(right_names[0]); i++)
		if (right == 1u << i)
			return right_names[i];
	return NULL;
}

unsigned auth_right_by_name(const char *name)
{
	for (unsigned i = 0; name && i < sizeof(right_names) / sizeof(right_names[0]); i++)
		if (!strcmp(name, right_names[i]) && (1u << i) & AUTH_RIGHTS_MINTABLE)
			return 1u << i;
	return 0;
}

int auth_new_grant_id(char *id)
{
	static const char alnum[] = "abcdefghijklmnopqrstuvwxyz0123456789";
	unsigned char raw[AUTH_GRANT_ID_LEN - 1];

	if (getrandom(raw, sizeof(raw), 0) != (ssize_t)sizeof(raw))
		return -EIO;
	id[0] = 't';
	for (size_t i = 0; i < sizeof(raw); i++)
		id[i + 1] = alnum[raw[i] % 36];
	id[AUTH_GRANT_ID_LEN] = '\0';
	return 0;
}

static bool hash_is(const char *hash, const char *want)
{
	return want && *want && auth_equal(hash, want);
}

unsigned auth_rights_of_hash(const char *hash, const char *operator_hash, const char *control_hash,
			     const char *view_hash, const struct auth_grant *grants, int n,
			     int64_t now_unix_ms, const char **which)
{
	unsigned rights = 0;
	const char *what = "";

	if (hash && *hash) {
		for (int i = 0; i < n; i++)
			if (hash_is(hash, grants[i].hash) &&
			    (!grants[i].expires_unix_ms ||
			     grants[i].expires_unix_ms > now_unix_ms)) {
				rights = grants[i].rights & AUTH_RIGHTS_MINTABLE;
				what = grants[i].id;
			}
		if (hash_is(hash, view_hash)) {
			rights = AUTH_RIGHTS_VIEW;
			what = "view";
		}
		if (hash_is(hash, control_hash)) {
			rights = AUTH_RIGHTS_CONTROL;
			what = "control";
		}
		if (hash_is(hash, operator_hash)) {
			rights = AUTH_RIGHTS_OPERATOR;
			what = "operator";
		}
	}
	if (which)
		*which = what;
	return rights;
}

bool auth_origin_allowed(const char *origin, const char *allowlist)
{
	const char *p = allowlist;
	size_t olen;

	if (!origin || !*origin)
		return true;
	if (!allowlist)
		return false;
	olen = strlen(origin);
	while (*p) {
		size_t n = strcspn(p, ",");
		const char *item = p;

		while (n && *item == ' ') {
			item++;
			n--;
		}
		while (n && item[n - 1] == ' ')
			n--;
		if ((n == 1 && *item == '*') || (n == olen && !strncasecmp(item, origin, n)))
			return true;
		p += strcspn(p, ",");
		if (*p == ',')
			p++;
	}
	return false;
}

/* Reads the existing key file at path into text (NUL-terminated, at most
 * len - 1 bytes), refusing a symlink, anything but a regular file, and a
 * file that group or others may read or write: the key opens every
 * session. Returns 0, -ENOENT when there is none, or -errno with a reason
 * in err. */
static int read_key_file(const char *path, char *text, size_t len, char *err, size_t errlen)
{
	struct stat st;
	size_t used = 0;
	ssize_t n;
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC), rc;

	if (fd < 0) {
		rc = -errno;
		if (rc == -ELOOP)
			snprintf(err, errlen,
				 "%s is a symbolic link; the API key must be a regular file "
				 "(replace the link with the file, then chmod 600 %s)",
				 path, path);
		else if (rc != -ENOENT)
			snprintf(err, errlen, "%s: %s", path, strerror(-rc));
		return rc;
	}
	if (fstat(fd, &st) < 0) {
		rc = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(-rc));
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		rc = -EINVAL;
		snprintf(err, errlen,
			 "%s is not a regular file; the API key must be one (chmod 600)", path);
		goto out;
	}
	if (st.st_mode & (S_IRWXG | S_IRWXO)) {
		rc = -EPERM;
		snprintf(err, errlen,
			 "%s is open to group or others (mode %03o); the API key must be "
			 "private: chmod 600 %s",
			 path, (unsigned)(st.st_mode & 0777), path);
		goto out;
	}
	while (used < len - 1 && (n = read(fd, text + used, len - 1 - used)) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			rc = -errno;
			snprintf(err, errlen, "read %s: %s", path, strerror(-rc));
			goto out;
		}
		used += (size_t)n;
	}
	text[used] = '\0';
	rc = 0;
out:
	close(fd);
	return rc;
}

int auth_read_key(const char *path, char *key, size_t keylen, char *err, size_t errlen)
{
	char text[4096];
	int rc = read_key_file(path, text, sizeof(text), err, errlen);

	if (rc < 0) {
		if (rc == -ENOENT)
			snprintf(err, errlen, "%s: no such file", path);
		return rc;
	}
	text[strcspn(text, "\r\n")] = '\0';
	if (strlen(text) < 16 || strlen(text) >= keylen) {
		snprintf(err, errlen, "%s: the API key must be 16..%zu characters", path,
			 keylen - 1);
		return -EINVAL;
	}
	strcpy(key, text);
	return 0;
}

int auth_load_or_create_key(const char *path, char *key, size_t keylen, char *err, size_t errlen)
{
	char fresh[AUTH_TOKEN_LEN + 2];
	int rc, fd;

	rc = auth_read_key(path, key, keylen, err, errlen);
	if (rc == 0)
		return 0;
	if (rc != -ENOENT)
		return rc;
	if (auth_new_token(fresh) < 0 || keylen <= AUTH_TOKEN_LEN) {
		snprintf(err, errlen, "cannot make an API key");
		return -EIO;
	}
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		rc = -errno;
		snprintf(err, errlen, "create %s: %s", path, strerror(errno));
		return rc;
	}
	strcat(fresh, "\n");
	if (write(fd, fresh, strlen(fresh)) != (ssize_t)strlen(fresh)) {
		rc = -errno;
		close(fd);
		unlink(path);
		snprintf(err, errlen, "write %s failed", path);
		return rc ? rc : -EIO;
	}
	close(fd);
	fresh[AUTH_TOKEN_LEN] = '\0';
	strcpy(key, fresh);
	return 0;
}
