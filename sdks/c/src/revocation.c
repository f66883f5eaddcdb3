/*
 * Revocation lists and deltas. The error codes come in this order: malformed (alone), then
 * unknown_key or signature_invalid, product_mismatch (once), version_regression, version_gap.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static const char LIST_TYP[] = "licensing-revocation-list+jwt";
static const char DELTA_TYP[] = "licensing-revocation-delta+jwt";

/* An entry while a list is made: its serial's length kept for exact comparisons. */
typedef struct entry {
  const char *serial;
  size_t serial_length;
  const char *status;
  const char *at;
} entry;

void licv_revocation_options_init(licv_revocation_options *options) {
  if (options == NULL) return;
  memset(options, 0, sizeof *options);
}

static int is_version(const licvi_json *v) {
  return v != NULL && v->type == LICVI_JSON_NUMBER && licvi_is_safe_integer(v->number) &&
         v->number >= 0;
}

static int is_time(const licvi_json *v) {
  return licvi_json_is_string(v) && !isnan(licvi_parse_date(v->string, v->length));
}

static int is_entry(const licvi_json *v) {
  const licvi_json *status = licvi_json_get(v, "status");
  return licvi_json_is_object(v) && licvi_json_is_string(licvi_json_get(v, "serial")) &&
         (licvi_json_string_equals(status, "revoked") ||
          licvi_json_string_equals(status, "suspended") ||
          licvi_json_string_equals(status, "expired")) &&
         is_time(licvi_json_get(v, "at"));
}

/* Whether the payload is a full list (delta 0) or a delta (delta 1), as its typ says. */
static int is_document(const licvi_json *p, int delta) {
  const licvi_json *entries = licvi_json_get(p, "entries");
  const licvi_json *since = licvi_json_get(p, "since");
  const licvi_json *removed = licvi_json_get(p, "removed");
  const licvi_json *version = licvi_json_get(p, "version");
  const licvi_json *item;
  if (!licvi_json_is_string(licvi_json_get(p, "product_id")) || !is_version(version)) return 0;
  if (!is_time(licvi_json_get(p, "issued_at")) || !is_time(licvi_json_get(p, "next_update")))
    return 0;
  if (entries == NULL || entries->type != LICVI_JSON_ARRAY) return 0;
  for (item = entries->first; item != NULL; item = item->next) {
    if (!is_entry(item)) return 0;
  }
  if (!delta) return since == NULL && removed == NULL;
  if (!is_version(since) || since->number > version->number) return 0;
  if (removed == NULL || removed->type != LICVI_JSON_ARRAY) return 0;
  for (item = removed->first; item != NULL; item = item->next) {
    if (!licvi_json_is_object(item) || !licvi_json_is_string(licvi_json_get(item, "serial")))
      return 0;
  }
  return 1;
}

static int compare_serials(const entry *a, const entry *b) {
  return licvi_compare_utf16(a->serial, a->serial_length, b->serial, b->serial_length);
}

/* A stable merge sort by serial, in JavaScript's order. */
static void sort_entries(entry *items, entry *scratch, size_t count) {
  size_t middle, i, j, k;
  if (count < 2) return;
  middle = count / 2;
  sort_entries(items, scratch, middle);
  sort_entries(items + middle, scratch, count - middle);
  memcpy(scratch, items, count * sizeof(entry));
  i = 0;
  j = middle;
  k = 0;
  while (i < middle && j < count) {
    if (compare_serials(&scratch[j], &scratch[i]) < 0) items[k++] = scratch[j++];
    else items[k++] = scratch[i++];
  }
  while (i < middle) items[k++] = scratch[i++];
  while (j < count) items[k++] = scratch[j++];
}

/* Sorts, then keeps the last entry of each serial (a later one replaces an earlier one). */
static size_t sort_unique(entry *items, entry *scratch, size_t count) {
  size_t i, n = 0;
  sort_entries(items, scratch, count);
  for (i = 0; i < count; i++) {
    if (i + 1 < count && compare_serials(&items[i], &items[i + 1]) == 0) continue;
    items[n++] = items[i];
  }
  return n;
}

static int is_removed(const entry *removed, size_t count, const entry *e) {
  size_t low = 0, high = count;
  while (low < high) {
    size_t middle = low + (high - low) / 2;
    int order = compare_serials(&removed[middle], e);
    if (order == 0) return 1;
    if (order < 0) low = middle + 1;
    else high = middle;
  }
  return 0;
}

static void entry_of_json(entry *e, const licvi_json *v) {
  const licvi_json *serial = licvi_json_get(v, "serial");
  e->serial = serial->string;
  e->serial_length = serial->length;
  e->status = licvi_json_get(v, "status")->string;
  e->at = licvi_json_get(v, "at")->string;
}

/* A list of its own arena, holding copies of everything. */
static licv_revocation_list *make_list(const char *product_id, int64_t version,
                                       const char *issued_at, const char *next_update,
                                       const entry *entries, size_t count) {
  licvi_arena *arena = licvi_arena_new();
  licv_revocation_list *list;
  licv_revocation_entry *items;
  size_t i;
  if (arena == NULL) return NULL;
  list = licvi_alloc(arena, sizeof *list);
  items = licvi_alloc(arena, sizeof *items * (count + 1));
  if (list == NULL || items == NULL) goto no_memory;
  list->internal_ = arena;
  list->product_id = licvi_strndup(arena, product_id, strlen(product_id));
  list->issued_at = licvi_strndup(arena, issued_at, strlen(issued_at));
  list->next_update = licvi_strndup(arena, next_update, strlen(next_update));
  if (list->product_id == NULL || list->issued_at == NULL || list->next_update == NULL)
    goto no_memory;
  list->version = version;
  for (i = 0; i < count; i++) {
    items[i].serial = licvi_strndup(arena, entries[i].serial, entries[i].serial_length);
    items[i].status = licvi_strndup(arena, entries[i].status, strlen(entries[i].status));
    items[i].at = licvi_strndup(arena, entries[i].at, strlen(entries[i].at));
    if (items[i].serial == NULL || items[i].status == NULL || items[i].at == NULL) goto no_memory;
  }
  list->entries = items;
  list->entry_count = count;
  return list;
no_memory:
  licvi_arena_free(arena);
  return NULL;
}

/* The delta applied to the list held: its removed serials dropped, its entries added or replaced. */
static entry *apply_delta(licvi_arena *arena, const licv_revocation_list *previous,
                          const licvi_json *delta, size_t *count) {
  const licvi_json *entries = licvi_json_get(delta, "entries");
  const licvi_json *removed_json = licvi_json_get(delta, "removed");
  const licvi_json *item;
  size_t held_count = previous->entry_count, added_count = entries->length;
  size_t removed_count = removed_json->length, largest, i, j, n = 0;
  entry *held, *added, *removed, *scratch, *merged;
  largest = held_count > added_count ? held_count : added_count;
  largest = largest > removed_count ? largest : removed_count;
  held = licvi_alloc(arena, sizeof(entry) * (held_count + 1));
  added = licvi_alloc(arena, sizeof(entry) * (added_count + 1));
  removed = licvi_alloc(arena, sizeof(entry) * (removed_count + 1));
  scratch = licvi_alloc(arena, sizeof(entry) * (largest + 1));
  merged = licvi_alloc(arena, sizeof(entry) * (held_count + added_count + 1));
  if (held == NULL || added == NULL || removed == NULL || scratch == NULL || merged == NULL)
    return NULL;
  for (i = 0; i < held_count; i++) {
    held[i].serial = previous->entries[i].serial;
    held[i].serial_length = strlen(previous->entries[i].serial);
    held[i].status = previous->entries[i].status;
    held[i].at = previous->entries[i].at;
  }
  i = 0;
  for (item = entries->first; item != NULL; item = item->next) entry_of_json(&added[i++], item);
  i = 0;
  for (item = removed_json->first; item != NULL; item = item->next) {
    const licvi_json *serial = licvi_json_get(item, "serial");
    removed[i].serial = serial->string;
    removed[i].serial_length = serial->length;
    i++;
  }
  held_count = sort_unique(held, scratch, held_count);
  added_count = sort_unique(added, scratch, added_count);
  sort_entries(removed, scratch, removed_count);
  for (i = 0, j = 0; i < held_count; i++) {
    if (!is_removed(removed, removed_count, &held[i])) held[j++] = held[i];
  }
  held_count = j;
  i = 0;
  j = 0;
  while (i < held_count || j < added_count) {
    if (j >= added_count) {
      merged[n++] = held[i++];
    } else if (i >= held_count) {
      merged[n++] = added[j++];
    } else {
      int order = compare_serials(&held[i], &added[j]);
      if (order < 0) {
        merged[n++] = held[i++];
      } else {
        if (order == 0) i++;
        merged[n++] = added[j++];
      }
    }
  }
  *count = n;
  return merged;
}

licv_status licv_verify_revocation_list(const char *text, size_t length, const licv_keys *keys,
                                        const licv_revocation_options *options,
                                        licv_revocation_result **out) {
  licv_revocation_options defaults;
  licvi_arena *arena;
  licv_revocation_result *result;
  licvi_jws jws;
  licvi_codes codes = {0, {(licv_error_code)0}};
  const licvi_json *typ, *p = NULL, *product_id, *since;
  const licv_revocation_list *previous;
  size_t start = 0, end = 0, i, count = 0;
  int decoded = 0, delta = 0;
  double version;
  entry *entries;

  if (out == NULL) return LICV_E_INVALID_ARGUMENT;
  *out = NULL;
  if (keys == NULL || (text == NULL && length > 0)) return LICV_E_INVALID_ARGUMENT;
  if (options == NULL) {
    licv_revocation_options_init(&defaults);
    options = &defaults;
  }
  previous = options->previous;
  arena = licvi_arena_new();
  if (arena == NULL) return LICV_E_NO_MEMORY;
  result = licvi_alloc(arena, sizeof *result);
  if (result == NULL) {
    licvi_arena_free(arena);
    return LICV_E_NO_MEMORY;
  }
  result->internal_ = arena;
  *out = result;

  if (text != NULL && licvi_utf8_valid((const uint8_t *)text, length)) {
    licvi_trim((const uint8_t *)text, length, &start, &end);
    decoded = licvi_jws_decode(arena, text + start, end - start, NULL, 0, 0, &jws);
    if (decoded < 0) goto no_memory;
  }
  if (decoded) {
    typ = licvi_json_get(jws.header, "typ");
    delta = licvi_json_string_equals(typ, DELTA_TYP);
    if (delta || licvi_json_string_equals(typ, LIST_TYP)) p = jws.payload;
  }
  if (p == NULL || !is_document(p, delta)) {
    result->errors[0] = LICV_MALFORMED;
    result->error_count = 1;
    return LICV_OK;
  }

  switch (licvi_jws_verify(&jws, keys)) {
    case LICVI_SIGNATURE_UNKNOWN_KEY: licvi_push(&codes, LICV_UNKNOWN_KEY); break;
    case LICVI_SIGNATURE_INVALID: licvi_push(&codes, LICV_SIGNATURE_INVALID); break;
    case LICVI_SIGNATURE_VALID: break;
  }
  product_id = licvi_json_get(p, "product_id");
  version = licvi_json_get(p, "version")->number;
  since = licvi_json_get(p, "since");
  if (options->product_id != NULL && !licvi_json_string_equals(product_id, options->product_id))
    licvi_push(&codes, LICV_PRODUCT_MISMATCH);
  if (previous != NULL && !licvi_json_string_equals(product_id, previous->product_id))
    licvi_push(&codes, LICV_PRODUCT_MISMATCH);
  if (previous != NULL && version < (double)previous->version)
    licvi_push(&codes, LICV_VERSION_REGRESSION);
  if (delta && (previous == NULL || since->number > (double)previous->version))
    licvi_push(&codes, LICV_VERSION_GAP);
  if (codes.count > 0) {
    for (i = 0; i < codes.count; i++) result->errors[i] = codes.codes[i];
    result->error_count = codes.count;
    return LICV_OK;
  }

  if (delta) {
    entries = apply_delta(arena, previous, p, &count);
    if (entries == NULL) goto no_memory;
  } else {
    const licvi_json *item;
    const licvi_json *list_entries = licvi_json_get(p, "entries");
    entry *scratch;
    count = list_entries->length;
    entries = licvi_alloc(arena, sizeof(entry) * (count + 1));
    scratch = licvi_alloc(arena, sizeof(entry) * (count + 1));
    if (entries == NULL || scratch == NULL) goto no_memory;
    i = 0;
    for (item = list_entries->first; item != NULL; item = item->next) entry_of_json(&entries[i++], item);
    sort_entries(entries, scratch, count);
  }
  result->list = make_list(product_id->string, (int64_t)version,
                           licvi_json_get(p, "issued_at")->string,
                           licvi_json_get(p, "next_update")->string, entries, count);
  if (result->list == NULL) goto no_memory;
  result->valid = 1;
  return LICV_OK;

no_memory:
  *out = NULL;
  licvi_arena_free(arena);
  return LICV_E_NO_MEMORY;
}

void licv_revocation_result_free(licv_revocation_result *result) {
  if (result == NULL) return;
  licv_revocation_list_free(result->list);
  licvi_arena_free(result->internal_);
}

licv_revocation_list *licv_revocation_result_take_list(licv_revocation_result *result) {
  licv_revocation_list *list;
  if (result == NULL) return NULL;
  list = result->list;
  result->list = NULL;
  return list;
}

void licv_revocation_list_free(licv_revocation_list *list) {
  if (list != NULL) licvi_arena_free(list->internal_);
}

const licv_revocation_entry *licv_revocation_list_find(const licv_revocation_list *list,
                                                       const char *serial) {
  size_t low = 0, high, serial_length;
  const licv_revocation_entry *found = NULL;
  if (list == NULL || serial == NULL) return NULL;
  high = list->entry_count;
  serial_length = strlen(serial);
  while (low < high) {
    size_t middle = low + (high - low) / 2;
    const char *s = list->entries[middle].serial;
    int order = licvi_compare_utf16(s, strlen(s), serial, serial_length);
    if (order < 0) {
      low = middle + 1;
    } else {
      /* When a list names a serial twice, the last one counts. */
      if (order == 0) found = &list->entries[middle];
      if (order == 0) low = middle + 1;
      else high = middle;
    }
  }
  return found;
}

licv_status licv_revocation_list_to_json(const licv_revocation_list *list, char **json,
                                         size_t *length) {
  licvi_arena *arena;
  licvi_json *root, *entries;
  size_t i;
  int ok = 1;
  if (json == NULL) return LICV_E_INVALID_ARGUMENT;
  *json = NULL;
  if (list == NULL) return LICV_E_INVALID_ARGUMENT;
  arena = licvi_arena_new();
  if (arena == NULL) return LICV_E_NO_MEMORY;
  root = licvi_json_new(arena, LICVI_JSON_OBJECT);
  entries = licvi_json_new(arena, LICVI_JSON_ARRAY);
  ok = root != NULL && entries != NULL &&
       licvi_json_set(arena, root, "product_id", licvi_json_new_cstring(arena, list->product_id)) &&
       licvi_json_set(arena, root, "version", licvi_json_new_number(arena, (double)list->version)) &&
       licvi_json_set(arena, root, "issued_at", licvi_json_new_cstring(arena, list->issued_at)) &&
       licvi_json_set(arena, root, "next_update", licvi_json_new_cstring(arena, list->next_update)) &&
       licvi_json_set(arena, root, "entries", entries);
  for (i = 0; ok && i < list->entry_count; i++) {
    licvi_json *e = licvi_json_new(arena, LICVI_JSON_OBJECT);
    ok = e != NULL &&
         licvi_json_set(arena, e, "serial", licvi_json_new_cstring(arena, list->entries[i].serial)) &&
         licvi_json_set(arena, e, "status", licvi_json_new_cstring(arena, list->entries[i].status)) &&
         licvi_json_set(arena, e, "at", licvi_json_new_cstring(arena, list->entries[i].at));
    if (ok) licvi_json_append(entries, e);
  }
  if (ok) *json = licvi_json_write(root, length);
  licvi_arena_free(arena);
  return *json == NULL ? LICV_E_NO_MEMORY : LICV_OK;
}

licv_status licv_revocation_list_from_json(const char *json, size_t length,
                                           licv_revocation_list **out) {
  licvi_arena *arena;
  const licvi_json *root, *entries, *version, *item;
  entry *items;
  size_t i = 0;
  licv_status status = LICV_E_INVALID_ARGUMENT;
  if (out == NULL) return LICV_E_INVALID_ARGUMENT;
  *out = NULL;
  if (json == NULL && length > 0) return LICV_E_INVALID_ARGUMENT;
  arena = licvi_arena_new();
  if (arena == NULL) return LICV_E_NO_MEMORY;
  root = licvi_json_parse(arena, json, length);
  entries = licvi_json_get(root, "entries");
  version = licvi_json_get(root, "version");
  if (licvi_json_is_string(licvi_json_get(root, "product_id")) && is_version(version) &&
      licvi_json_is_string(licvi_json_get(root, "issued_at")) &&
      licvi_json_is_string(licvi_json_get(root, "next_update")) && entries != NULL &&
      entries->type == LICVI_JSON_ARRAY) {
    status = LICV_OK;
    for (item = entries->first; item != NULL; item = item->next) {
      if (!licvi_json_is_object(item) || !licvi_json_is_string(licvi_json_get(item, "serial")) ||
          !licvi_json_is_string(licvi_json_get(item, "status")) ||
          !licvi_json_is_string(licvi_json_get(item, "at")))
        status = LICV_E_INVALID_ARGUMENT;
    }
  }
  if (status == LICV_OK) {
    entry *scratch;
    items = licvi_alloc(arena, sizeof(entry) * (entries->length + 1));
    scratch = licvi_alloc(arena, sizeof(entry) * (entries->length + 1));
    if (items == NULL || scratch == NULL) {
      status = LICV_E_NO_MEMORY;
    } else {
      for (item = entries->first; item != NULL; item = item->next) entry_of_json(&items[i++], item);
      /* A list is kept sorted, whatever order the text had. */
      sort_entries(items, scratch, i);
      *out = make_list(licvi_json_get(root, "product_id")->string, (int64_t)version->number,
                       licvi_json_get(root, "issued_at")->string,
                       licvi_json_get(root, "next_update")->string, items, i);
      if (*out == NULL) status = LICV_E_NO_MEMORY;
    }
  }
  licvi_arena_free(arena);
  return status;
}
