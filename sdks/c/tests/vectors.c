/* Reading the conformance vectors, and running one through the SDK. */
#if !defined(_POSIX_C_SOURCE) || _POSIX_C_SOURCE < 200809L
#undef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include "vectors.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *read_file(const char *path, size_t *length) {
  FILE *f = fopen(path, "rb");
  char *data = NULL;
  size_t size = 0, capacity = 0, n;
  if (f == NULL) return NULL;
  for (;;) {
    if (size + 65536 + 1 > capacity) {
      char *grown;
      capacity = capacity == 0 ? 131072 : capacity * 2;
      grown = realloc(data, capacity);
      if (grown == NULL) {
        free(data);
        fclose(f);
        return NULL;
      }
      data = grown;
    }
    n = fread(data + size, 1, 65536, f);
    size += n;
    if (n < 65536) break;
  }
  fclose(f);
  data[size] = '\0';
  *length = size;
  return data;
}

int vector_file_load(const char *dir, const char *name, vector_file *out) {
  char path[4096];
  const licvi_json *kind;
  memset(out, 0, sizeof *out);
  snprintf(path, sizeof path, "%s/%s", dir, name);
  out->name = malloc(strlen(name) + 1);
  if (out->name == NULL) return 0;
  strcpy(out->name, name);
  out->text = read_file(path, &out->length);
  if (out->text == NULL) {
    fprintf(stderr, "%s: cannot read\n", path);
    return 0;
  }
  out->arena = licvi_arena_new();
  out->root = licvi_json_parse(out->arena, out->text, out->length);
  kind = licvi_json_get(out->root, "kind");
  if (!licvi_json_is_string(kind) || licvi_json_get(out->root, "vectors") == NULL) {
    fprintf(stderr, "%s: not a vector file\n", path);
    return 0;
  }
  out->kind = kind->string;
  return 1;
}

void vector_file_free(vector_file *file) {
  licvi_arena_free(file->arena);
  free(file->text);
  free(file->name);
  memset(file, 0, sizeof *file);
}

static int compare_names(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

char **vector_names(const char *dir, size_t *count) {
  DIR *d = opendir(dir);
  struct dirent *e;
  char **names = NULL;
  size_t n = 0;
  *count = 0;
  if (d == NULL) return NULL;
  while ((e = readdir(d)) != NULL) {
    size_t length = strlen(e->d_name);
    char **grown;
    if (length < 6 || strcmp(e->d_name + length - 5, ".json") != 0) continue;
    grown = realloc(names, sizeof(char *) * (n + 1));
    if (grown == NULL) break;
    names = grown;
    names[n] = malloc(length + 1);
    if (names[n] == NULL) break;
    strcpy(names[n++], e->d_name);
  }
  closedir(d);
  if (n > 0) qsort(names, n, sizeof(char *), compare_names);
  *count = n;
  return names;
}

void vector_names_free(char **names, size_t count) {
  size_t i;
  for (i = 0; i < count; i++) free(names[i]);
  free(names);
}

char *key_text(const licvi_json *entry, int *is_pem, size_t *length) {
  const licvi_json *pem = licvi_json_get(entry, "pem");
  const licvi_json *jwk = licvi_json_get(entry, "jwk");
  if (jwk == NULL) jwk = licvi_json_get(entry, "jwks");
  *is_pem = pem != NULL;
  if (pem != NULL) {
    char *copy;
    if (!licvi_json_is_string(pem)) return NULL;
    copy = malloc(pem->length + 1);
    if (copy != NULL) memcpy(copy, pem->string, pem->length + 1);
    *length = pem->length;
    return copy;
  }
  if (jwk == NULL) return NULL;
  return licvi_json_write(jwk, length);
}

licv_status keys_of(const vector_file *file, const char *name, licv_keys **out) {
  const licvi_json *entry = licvi_json_get(licvi_json_get(file->root, "keys"), name);
  int is_pem = 0;
  size_t length = 0;
  char *text;
  licv_status status;
  *out = NULL;
  if (entry == NULL) return LICV_E_INVALID_ARGUMENT;
  text = key_text(entry, &is_pem, &length);
  if (text == NULL) return LICV_E_INVALID_ARGUMENT;
  status = is_pem ? licv_keys_from_pem(text, length, out) : licv_keys_from_jwk(text, length, out);
  free(text);
  return status;
}

int options_known(const char *kind, const licvi_json *options) {
  static const char *const LICENSE[] = {"now", "product_id", "fingerprint",
                                        "clock_tolerance_seconds", NULL};
  static const char *const LIST[] = {"product_id", "previous", NULL};
  static const char *const ANSWER[] = {"now", "max_age_seconds", "clock_tolerance_seconds", NULL};
  static const char *const ACTIVATION[] = {"now", "nonce", "machine_key", "fingerprint",
                                           "product_id", "clock_tolerance_seconds", NULL};
  static const char *const NONE[] = {NULL};
  const char *const *known = strcmp(kind, "license") == 0           ? LICENSE
                             : strcmp(kind, "revocation-list") == 0 ? LIST
                             : strcmp(kind, "signed-answer") == 0   ? ANSWER
                             : strcmp(kind, "activation") == 0      ? ACTIVATION
                                                                    : NONE;
  const licvi_json *option;
  if (!licvi_json_is_object(options)) return 0;
  for (option = options->first; option != NULL; option = option->next) {
    size_t i;
    int found = 0;
    for (i = 0; known[i] != NULL; i++) {
      if (strcmp(option->key, known[i]) == 0) found = 1;
    }
    if (!found) return 0;
  }
  return 1;
}

/* ---- building the outcome as the vectors write it ------------------------------------------ */

static licvi_json *errors_of(licvi_arena *arena, const licv_error_code *codes, size_t count) {
  licvi_json *array = licvi_json_new(arena, LICVI_JSON_ARRAY);
  size_t i;
  for (i = 0; i < count; i++)
    licvi_json_append(array, licvi_json_new_cstring(arena, licv_error_code_name(codes[i])));
  return array;
}

static licvi_json *strings_of(licvi_arena *arena, const char *const *items, size_t count) {
  licvi_json *array = licvi_json_new(arena, LICVI_JSON_ARRAY);
  size_t i;
  for (i = 0; i < count; i++) licvi_json_append(array, licvi_json_new_cstring(arena, items[i]));
  return array;
}

static licvi_json *boolean(licvi_arena *arena, int value) {
  return licvi_json_new(arena, value ? LICVI_JSON_TRUE : LICVI_JSON_FALSE);
}

static const char *option_string(const licvi_json *options, const char *name) {
  const licvi_json *value = licvi_json_get(options, name);
  return licvi_json_is_string(value) ? value->string : NULL;
}

static int option_number(const licvi_json *options, const char *name, double *out) {
  const licvi_json *value = licvi_json_get(options, name);
  if (value == NULL || value->type != LICVI_JSON_NUMBER) return 0;
  *out = value->number;
  return 1;
}

static licvi_json *license_json(licvi_arena *arena, const licv_license *l) {
  licvi_json *o = licvi_json_new(arena, LICVI_JSON_OBJECT);
  licvi_json *binding;
  licvi_json_set(arena, o, "license_id", licvi_json_new_cstring(arena, l->license_id));
  licvi_json_set(arena, o, "serial", licvi_json_new_cstring(arena, l->serial));
  licvi_json_set(arena, o, "organization_id", licvi_json_new_cstring(arena, l->organization_id));
  licvi_json_set(arena, o, "product_id", licvi_json_new_cstring(arena, l->product_id));
  licvi_json_set(arena, o, "product_code", licvi_json_new_cstring(arena, l->product_code));
  licvi_json_set(arena, o, "license_type", licvi_json_new_cstring(arena, l->license_type));
  licvi_json_set(arena, o, "customer_id", licvi_json_new_cstring(arena, l->customer_id));
  licvi_json_set(arena, o, "customer_email", licvi_json_new_cstring(arena, l->customer_email));
  licvi_json_set(arena, o, "features", strings_of(arena, l->features, l->feature_count));
  licvi_json_set(arena, o, "entitlements", strings_of(arena, l->entitlements, l->entitlement_count));
  licvi_json_set(arena, o, "max_seats", licvi_json_new_number(arena, (double)l->max_seats));
  if (l->hardware_binding_fingerprint != NULL) {
    binding = licvi_json_new(arena, LICVI_JSON_OBJECT);
    licvi_json_set(arena, binding, "fingerprint",
                   licvi_json_new_cstring(arena, l->hardware_binding_fingerprint));
  } else {
    binding = licvi_json_new(arena, LICVI_JSON_NULL);
  }
  licvi_json_set(arena, o, "hardware_binding", binding);
  licvi_json_set(arena, o, "fingerprint", licvi_json_new_cstring(arena, l->fingerprint));
  licvi_json_set(arena, o, "valid_from", licvi_json_new_cstring(arena, l->valid_from));
  licvi_json_set(arena, o, "valid_until", licvi_json_new_cstring(arena, l->valid_until));
  licvi_json_set(arena, o, "issued_at", licvi_json_new_cstring(arena, l->issued_at));
  licvi_json_set(arena, o, "expires_at", licvi_json_new_cstring(arena, l->expires_at));
  licvi_json_set(arena, o, "is_expired", boolean(arena, l->is_expired));
  licvi_json_set(arena, o, "is_file_expired", boolean(arena, l->is_file_expired));
  if (l->policy_json != NULL) {
    licvi_json *policy = licvi_json_parse(arena, l->policy_json, strlen(l->policy_json));
    licvi_json_set(arena, o, "policy",
                   policy != NULL ? policy : licvi_json_new_cstring(arena, "unreadable policy_json"));
  }
  licvi_json_set(arena, o, "key_id", licvi_json_new_cstring(arena, l->key_id));
  licvi_json_set(arena, o, "algorithm", licvi_json_new_cstring(arena, l->algorithm));
  return o;
}

static licvi_json *list_json(licvi_arena *arena, const licv_revocation_list *list) {
  licvi_json *o, *entries;
  size_t i;
  if (list == NULL) return licvi_json_new(arena, LICVI_JSON_NULL);
  o = licvi_json_new(arena, LICVI_JSON_OBJECT);
  entries = licvi_json_new(arena, LICVI_JSON_ARRAY);
  licvi_json_set(arena, o, "product_id", licvi_json_new_cstring(arena, list->product_id));
  licvi_json_set(arena, o, "version", licvi_json_new_number(arena, (double)list->version));
  licvi_json_set(arena, o, "issued_at", licvi_json_new_cstring(arena, list->issued_at));
  licvi_json_set(arena, o, "next_update", licvi_json_new_cstring(arena, list->next_update));
  for (i = 0; i < list->entry_count; i++) {
    licvi_json *e = licvi_json_new(arena, LICVI_JSON_OBJECT);
    licvi_json_set(arena, e, "serial", licvi_json_new_cstring(arena, list->entries[i].serial));
    licvi_json_set(arena, e, "status", licvi_json_new_cstring(arena, list->entries[i].status));
    licvi_json_set(arena, e, "at", licvi_json_new_cstring(arena, list->entries[i].at));
    licvi_json_append(entries, e);
  }
  licvi_json_set(arena, o, "entries", entries);
  return o;
}

static licvi_json *activation_json(licvi_arena *arena, const licv_activation *a) {
  licvi_json *o = licvi_json_new(arena, LICVI_JSON_OBJECT);
  licvi_json *components = licvi_json_new(arena, LICVI_JSON_OBJECT);
  size_t i;
  licvi_json_set(arena, o, "activation_id", licvi_json_new_cstring(arena, a->activation_id));
  licvi_json_set(arena, o, "serial", licvi_json_new_cstring(arena, a->serial));
  licvi_json_set(arena, o, "license_id", licvi_json_new_cstring(arena, a->license_id));
  licvi_json_set(arena, o, "organization_id", licvi_json_new_cstring(arena, a->organization_id));
  licvi_json_set(arena, o, "product_id", licvi_json_new_cstring(arena, a->product_id));
  licvi_json_set(arena, o, "product_code", licvi_json_new_cstring(arena, a->product_code));
  licvi_json_set(arena, o, "features", strings_of(arena, a->features, a->feature_count));
  licvi_json_set(arena, o, "fingerprint", licvi_json_new_cstring(arena, a->fingerprint));
  for (i = 0; i < a->component_count; i++) {
    licvi_json_set(arena, components, a->components[i].name,
                   licvi_json_new_cstring(arena, a->components[i].value));
  }
  licvi_json_set(arena, o, "components", components);
  licvi_json_set(arena, o, "issued_at", licvi_json_new_cstring(arena, a->issued_at));
  licvi_json_set(arena, o, "expires_at", licvi_json_new_cstring(arena, a->expires_at));
  return o;
}

static licvi_json *outcome(licvi_arena *arena, int valid, const licv_error_code *codes,
                           size_t count) {
  licvi_json *o = licvi_json_new(arena, LICVI_JSON_OBJECT);
  licvi_json_set(arena, o, "valid", boolean(arena, valid));
  licvi_json_set(arena, o, "errors", errors_of(arena, codes, count));
  return o;
}

licvi_json *run_vector(licvi_arena *arena, const vector_file *file, const licvi_json *vector,
                       const licv_keys *keys, licv_status *status) {
  const licvi_json *input = licvi_json_get(vector, "input");
  const licvi_json *options = licvi_json_get(vector, "options");
  const char *kind = file->kind;
  licvi_json *o = NULL;
  double number;
  *status = LICV_OK;

  if (strcmp(kind, "license") == 0) {
    licv_license_options lo;
    licv_license_result *result = NULL;
    const licvi_json *text = licvi_json_get(input, "text");
    const licvi_json *bytes = licvi_json_get(input, "bytes_base64");
    const void *data = NULL;
    size_t length = 0;
    licv_license_options_init(&lo);
    if (option_number(options, "now", &lo.now)) lo.use_now = 1;
    lo.product_id = option_string(options, "product_id");
    lo.fingerprint = option_string(options, "fingerprint");
    if (option_number(options, "clock_tolerance_seconds", &number)) lo.clock_tolerance_seconds = number;
    if (licvi_json_is_string(text)) {
      data = text->string;
      length = text->length;
    } else if (licvi_json_is_string(bytes)) {
      data = licvi_base64_decode(arena, bytes->string, bytes->length, &length);
      if (data == NULL && bytes->length > 0) return NULL;
    }
    *status = licv_verify_license(data, length, keys, &lo, &result);
    if (*status != LICV_OK) return NULL;
    o = outcome(arena, result->valid, result->errors, result->error_count);
    licvi_json_set(arena, o, "license",
                   result->license == NULL ? licvi_json_new(arena, LICVI_JSON_NULL)
                                           : license_json(arena, result->license));
    licv_license_result_free(result);
  } else if (strcmp(kind, "revocation-list") == 0) {
    licv_revocation_options ro;
    licv_revocation_result *result = NULL;
    licv_revocation_list *previous = NULL;
    const licvi_json *text = licvi_json_get(input, "text");
    const licvi_json *held = licvi_json_get(options, "previous");
    licv_revocation_options_init(&ro);
    ro.product_id = option_string(options, "product_id");
    if (held != NULL) {
      size_t length = 0;
      char *json = licvi_json_write(held, &length);
      *status = licv_revocation_list_from_json(json, length, &previous);
      free(json);
      if (*status != LICV_OK) return NULL;
      ro.previous = previous;
    }
    *status = licv_verify_revocation_list(text == NULL ? NULL : text->string,
                                          text == NULL ? 0 : text->length, keys, &ro, &result);
    licv_revocation_list_free(previous);
    if (*status != LICV_OK) return NULL;
    o = outcome(arena, result->valid, result->errors, result->error_count);
    licvi_json_set(arena, o, "list", list_json(arena, result->list));
    licv_revocation_result_free(result);
  } else if (strcmp(kind, "signed-answer") == 0) {
    licv_signed_answer_options so;
    licv_signed_answer_result result;
    licv_signed_answer answer;
    const licvi_json *body = licvi_json_get(input, "body");
    licv_signed_answer_options_init(&so);
    if (option_number(options, "now", &so.now)) so.use_now = 1;
    if (option_number(options, "max_age_seconds", &number)) so.max_age_seconds = number;
    if (option_number(options, "clock_tolerance_seconds", &number)) so.clock_tolerance_seconds = number;
    answer.body = licvi_json_is_string(body) ? body->string : NULL;
    answer.body_length = licvi_json_is_string(body) ? body->length : 0;
    answer.signature = option_string(input, "signature");
    answer.nonce = option_string(input, "nonce");
    *status = licv_verify_signed_answer(&answer, keys, &so, &result);
    if (*status != LICV_OK) return NULL;
    o = outcome(arena, result.valid, result.errors, result.error_count);
    licvi_json_set(arena, o, "signed_at", licvi_json_new_cstring(arena, result.signed_at));
  } else if (strcmp(kind, "activation") == 0) {
    licv_activation_options ao;
    licv_activation_result *result = NULL;
    const licvi_json *text = licvi_json_get(input, "text");
    const licvi_json *machine_key = licvi_json_get(options, "machine_key");
    licv_activation_options_init(&ao);
    if (option_number(options, "now", &ao.now)) ao.use_now = 1;
    ao.nonce = option_string(options, "nonce");
    ao.fingerprint = option_string(options, "fingerprint");
    ao.product_id = option_string(options, "product_id");
    if (machine_key != NULL) {
      /* A machine key without an x matches no activation. */
      ao.machine_key_x = option_string(machine_key, "x");
      if (ao.machine_key_x == NULL) ao.machine_key_x = "";
    }
    if (option_number(options, "clock_tolerance_seconds", &number)) ao.clock_tolerance_seconds = number;
    *status = licv_verify_activation(text == NULL ? NULL : text->string,
                                     text == NULL ? 0 : text->length, keys, &ao, &result);
    if (*status != LICV_OK) return NULL;
    o = outcome(arena, result->valid, result->errors, result->error_count);
    licvi_json_set(arena, o, "activation",
                   result->activation == NULL ? licvi_json_new(arena, LICVI_JSON_NULL)
                                              : activation_json(arena, result->activation));
    licv_activation_result_free(result);
  } else {
    *status = LICV_E_INVALID_ARGUMENT;
  }
  return o;
}
