/* gateway/action/traj_log.c: see traj_log.h. */
#include "gateway/action/traj_log.h"

#include "common/tar.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TRAJ_FORMAT_VERSION 1

void traj_log_init(struct traj_log *log, size_t max_steps, size_t max_bytes)
{
	memset(log, 0, sizeof(*log));
	log->next_n = 1;
	log->max_steps = max_steps ? max_steps : 1;
	log->max_bytes = max_bytes;
}

static void text_unref(struct traj_text *t)
{
	if (t && --t->refs == 0)
		free(t);
}

void traj_step_free(struct traj_step *st)
{
	if (!st)
		return;
	json_decref(st->rec);
	text_unref(st->line);
	display_image_unref(st->image);
	free(st);
}

void traj_log_clear(struct traj_log *log)
{
	for (struct traj_step *st = log->head, *next; st; st = next) {
		next = st->next;
		traj_step_free(st);
	}
	log->head = log->tail = NULL;
	log->n_steps = 0;
	log->bytes = 0;
}

static const char *channel_name(enum traj_channel c)
{
	return c == TRAJ_CONTROL ? "control" : "http";
}

struct traj_step *traj_step_begin(struct traj_log *log, const char *text, size_t len,
				  enum traj_channel channel, int64_t received_ms)
{
	struct traj_step *st = calloc(1, sizeof(*st));
	json_t *action;
	bool is_json;

	if (!st)
		return NULL;
	action = len > TRAJ_MAX_ACTION_BYTES
			 ? NULL
			 : json_loadb(text ? text : "", len,
				      JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, NULL);
	is_json = action != NULL;
	st->n = log->next_n;
	st->rec = json_pack("{s:I, s:I, s:n, s:s, s:n, s:n, s:o?, s:n}", "step", (json_int_t)st->n,
			    "received_ms", (json_int_t)received_ms, "finished_ms", "channel",
			    channel_name(channel), "dialect", "name", "action", action,
			    "coordinates");
	if (!st->rec) {
		free(st);
		return NULL;
	}
	/* What is not JSON is kept as its text, when that is UTF-8. */
	if (len > TRAJ_MAX_ACTION_BYTES) {
		json_object_set_new(st->rec, "action_bytes", json_integer((json_int_t)len));
	} else if (!is_json) {
		json_t *t = json_stringn(text ? text : "", len);

		json_object_set_new(st->rec, "action_text", t ? t : json_null());
	}
	log->next_n++;
	log->in_flight++;
	return st;
}

static const char *dialect_name(enum actions_dialect d)
{
	switch (d) {
	case ACTIONS_DIALECT_ANTHROPIC:
		return "anthropic";
	case ACTIONS_DIALECT_OPENAI:
		return "openai";
	case ACTIONS_DIALECT_VITRINE:
		break;
	}
	return "vitrine";
}

static json_t *point_json(struct action_point p)
{
	return json_pack("[i, i]", p.x, p.y);
}

void traj_step_parsed(struct traj_step *st, const struct action *a)
{
	json_t *c;

	if (!st || !st->rec || !a)
		return;
	json_object_set_new(st->rec, "dialect", json_string(dialect_name(a->dialect)));
	json_object_set_new(st->rec, "name", json_string(a->name));
	c = json_object();
	if (a->has_point)
		json_object_set_new(c, "point", point_json(a->point));
	if (a->path_len) {
		json_t *path = json_array();

		for (size_t i = 0; i < a->path_len; i++)
			json_array_append_new(path, point_json(a->path[i]));
		json_object_set_new(c, "path", path);
		if (a->drag_from_pointer)
			json_object_set_new(c, "from_pointer", json_true());
	}
	if (a->kind == ACTION_ZOOM)
		json_object_set_new(c, "region",
				    json_pack("{s:i, s:i, s:i, s:i}", "x", a->region.x, "y",
					      a->region.y, "width", a->region.w, "height",
					      a->region.h));
	json_object_set_new(st->rec, "coordinates", json_object_size(c) ? c : json_null());
	if (!json_object_size(c))
		json_decref(c);
}

/* The step's bytes against the bound: its line and its image. */
static size_t step_bytes(const struct traj_step *st)
{
	return st->line_len + (st->image ? st->image->len : 0);
}

static void drop_oldest(struct traj_log *log)
{
	struct traj_step *st = log->head;

	log->head = st->next;
	if (!log->head)
		log->tail = NULL;
	log->n_steps--;
	log->bytes -= st->bytes;
	log->dropped++;
	traj_step_free(st);
}

static void keep_bounds(struct traj_log *log)
{
	while (log->head && (log->n_steps > log->max_steps || log->bytes > log->max_bytes))
		drop_oldest(log);
}

/* Links st in by its number (almost always at the tail). */
static void link_step(struct traj_log *log, struct traj_step *st)
{
	struct traj_step **pp = &log->head;

	if (log->tail && log->tail->n < st->n)
		pp = &log->tail->next;
	else
		while (*pp && (*pp)->n < st->n)
			pp = &(*pp)->next;
	st->next = *pp;
	*pp = st;
	if (!st->next)
		log->tail = st;
	log->n_steps++;
	log->bytes += st->bytes;
}

void traj_log_abandon(struct traj_log *log, struct traj_step *st)
{
	if (!st)
		return;
	log->in_flight--;
	traj_step_free(st);
}

void traj_log_add(struct traj_log *log, struct traj_step *st, int status, json_t *result,
		  struct display_image *image, int64_t finished_ms)
{
	char *text;

	if (!st) {
		json_decref(result);
		return;
	}
	log->in_flight--;
	json_object_set_new(st->rec, "finished_ms", json_integer(finished_ms));
	json_object_set_new(st->rec, "status", json_integer(status));
	json_object_set_new(st->rec, "result", result ? result : json_null());
	text = json_dumps(st->rec, JSON_COMPACT);
	json_decref(st->rec);
	st->rec = NULL;
	st->line_len = text ? strlen(text) - 1 : 0; /* without the closing '}' */
	st->line = text ? malloc(sizeof(*st->line) + st->line_len) : NULL;
	if (!st->line) {
		free(text);
		traj_step_free(st);
		log->dropped++; /* out of memory: lost, and said so */
		return;
	}
	st->line->refs = 1;
	st->line->len = st->line_len;
	memcpy(st->line->data, text, st->line_len);
	free(text);
	st->image = image ? display_image_ref(image) : NULL;
	st->image_from_action = image != NULL;
	st->bytes = step_bytes(st);
	link_step(log, st);
	keep_bounds(log);
}

bool traj_log_observe(struct traj_log *log, struct display_image *image)
{
	struct traj_step *t = log->tail;

	if (!image || !t || t->n != log->next_n - 1 || t->image_from_action)
		return false;
	log->bytes -= t->bytes;
	display_image_unref(t->image);
	t->image = display_image_ref(image);
	t->bytes = step_bytes(t);
	log->bytes += t->bytes;
	keep_bounds(log);
	return true;
}

json_t *traj_reply_without_image(json_t *reply)
{
	json_t *out, *shot;

	if (!reply || !(out = json_copy(reply)))
		return NULL;
	shot = json_object_get(reply, "screenshot");
	if (json_is_object(shot)) {
		json_t *s2 = json_copy(shot);

		if (!s2) {
			json_decref(out);
			return NULL;
		}
		json_object_del(s2, "data");
		json_object_set_new(out, "screenshot", s2);
	}
	return out;
}

void traj_image_name(int64_t n, enum display_format format, char *out, size_t size)
{
	snprintf(out, size, "images/%06" PRId64 ".%s", n,
		 format == DISPLAY_FORMAT_PNG ? "png" : "jpeg");
}

struct traj_entry {
	struct traj_text *line; /* a reference: the step's fields */
	char tail[96]; /* its image fields and the newline */
	size_t tail_len;
	struct display_image *image; /* a reference, or NULL */
	int64_t n;
};

struct traj_archive {
	char *meta; /* owned: meta.json */
	struct traj_entry *e; /* owned, n of them */
	size_t n;
	struct tar_piece *pieces; /* owned: meta, each line (two pieces), each image */
	struct tar_member *members; /* owned, n_members */
	size_t n_members;
	uint64_t total;
};

void traj_archive_free(void *p)
{
	struct traj_archive *a = p;

	if (!a)
		return;
	for (size_t i = 0; i < a->n; i++) {
		text_unref(a->e[i].line);
		display_image_unref(a->e[i].image);
	}
	free(a->e);
	free(a->meta);
	free(a->pieces);
	free(a->members);
	free(a);
}

/* The end of st's line: its image fields and a newline, into e. */
static void line_tail(const struct traj_step *st, struct traj_entry *e)
{
	char name[48];
	int k;

	if (st->image) {
		traj_image_name(st->n, st->image->format, name, sizeof(name));
		k = snprintf(e->tail, sizeof(e->tail),
			     ",\"image\":\"%s\",\"image_source\":\"%s\"}\n", name,
			     st->image_from_action ? "action" : "screenshot");
	} else {
		k = snprintf(e->tail, sizeof(e->tail), ",\"image\":null,\"image_source\":null}\n");
	}
	e->tail_len = (size_t)k;
}

static json_t *meta_json(const struct traj_log *log, const struct traj_archive *a, const char *id,
			 int width, int height, int64_t now_ms, size_t n_images)
{
	return json_pack("{s:s, s:i, s:s, s:{s:i, s:i}, s:I, s:I, s:I, s:o, s:o, s:I, s:i, "
			 "s:{s:I, s:I}}",
			 "format", "vitrine-trajectory", "version", TRAJ_FORMAT_VERSION, "session",
			 id, "screen", "width", width, "height", height, "created_ms",
			 (json_int_t)now_ms, "steps", (json_int_t)a->n, "images",
			 (json_int_t)n_images, "first_step",
			 a->n ? json_integer(a->e[0].n) : json_null(), "last_step",
			 a->n ? json_integer(a->e[a->n - 1].n) : json_null(), "dropped",
			 (json_int_t)log->dropped, "in_flight", log->in_flight, "bounds",
			 "max_steps", (json_int_t)log->max_steps, "max_bytes",
			 (json_int_t)log->max_bytes);
}

struct traj_archive *traj_archive_new(const struct traj_log *log, const char *id, int width,
				      int height, int64_t now_ms)
{
	struct traj_archive *a = calloc(1, sizeof(*a));
	size_t n_images = 0, m = 0, p = 0;
	json_t *meta;

	if (!a || (log->n_steps && !(a->e = calloc(log->n_steps, sizeof(*a->e)))))
		goto fail;
	for (const struct traj_step *st = log->head; st; st = st->next) {
		struct traj_entry *e = &a->e[a->n];

		e->line = st->line;
		e->line->refs++;
		line_tail(st, e);
		e->n = st->n;
		e->image = st->image ? display_image_ref(st->image) : NULL;
		n_images += e->image != NULL;
		a->n++;
	}
	meta = meta_json(log, a, id, width, height, now_ms, n_images);
	a->meta = meta ? json_dumps(meta, JSON_INDENT(2)) : NULL;
	json_decref(meta);
	a->pieces = calloc(1 + 2 * a->n + n_images, sizeof(*a->pieces));
	a->members = calloc(2 + n_images, sizeof(*a->members));
	if (!a->meta || !a->pieces || !a->members)
		goto fail;
	/* meta.json first (what a reader wants before the rest), then the
	 * steps, then the images in step order. */
	a->pieces[p] = (struct tar_piece){ a->meta, strlen(a->meta) };
	a->members[m++] = (struct tar_member){ .name = "meta.json",
					       .mtime = now_ms / 1000,
					       .pieces = &a->pieces[p++],
					       .n_pieces = 1 };
	a->members[m] = (struct tar_member){ .name = "trajectory.jsonl",
					     .mtime = now_ms / 1000,
					     .pieces = &a->pieces[p],
					     .n_pieces = 2 * a->n };
	m++;
	for (size_t i = 0; i < a->n; i++) {
		a->pieces[p++] = (struct tar_piece){ a->e[i].line->data, a->e[i].line->len };
		a->pieces[p++] = (struct tar_piece){ a->e[i].tail, a->e[i].tail_len };
	}
	for (size_t i = 0; i < a->n; i++) {
		struct tar_member *mm = &a->members[m];

		if (!a->e[i].image)
			continue;
		traj_image_name(a->e[i].n, a->e[i].image->format, mm->name, sizeof(mm->name));
		mm->mtime = now_ms / 1000;
		a->pieces[p] = (struct tar_piece){ a->e[i].image->data, a->e[i].image->len };
		mm->pieces = &a->pieces[p++];
		mm->n_pieces = 1;
		m++;
	}
	a->n_members = m;
	if (!(a->total = tar_layout(a->members, a->n_members)))
		goto fail;
	return a;
fail:
	traj_archive_free(a);
	return NULL;
}

uint64_t traj_archive_size(const struct traj_archive *a)
{
	return a->total;
}

size_t traj_archive_read(void *p, uint64_t off, unsigned char *buf, size_t cap)
{
	struct traj_archive *a = p;

	return tar_read(a->members, a->n_members, a->total, off, buf, cap);
}
