/*
 * Runs every vector of every file in the conformance directory through the C SDK. Each must get
 * exactly its expected verdict: valid or not, the same error codes in the same order, and the
 * same decoded document. Prints one line per file, and every mismatch.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vectors.h"

static void print_json(const char *label, const licvi_json *value) {
  char *text = value == NULL ? NULL : licvi_json_write(value, NULL);
  fprintf(stderr, "    %s: %s\n", label, text == NULL ? "(none)" : text);
  free(text);
}

/* The public-key vectors: the key is accepted, with these types, algorithms and kids, or refused. */
static licvi_json *run_public_key(licvi_arena *arena, const vector_file *file,
                                  const licvi_json *vector) {
  licv_keys *keys = NULL;
  licv_status status = keys_of(file, licvi_json_get(vector, "key")->string, &keys);
  licvi_json *o = licvi_json_new(arena, LICVI_JSON_OBJECT);
  if (status == LICV_E_INVALID_KEY) {
    licvi_json_set(arena, o, "accepted", licvi_json_new(arena, LICVI_JSON_FALSE));
  } else if (status == LICV_OK) {
    licvi_json *list = licvi_json_new(arena, LICVI_JSON_ARRAY);
    size_t i;
    for (i = 0; i < licv_keys_count(keys); i++) {
      licvi_json *k = licvi_json_new(arena, LICVI_JSON_OBJECT);
      licvi_json_set(arena, k, "type",
                     licvi_json_new_cstring(arena, licv_key_type_name(licv_keys_type(keys, i))));
      licvi_json_set(arena, k, "alg", licvi_json_new_cstring(arena, licv_keys_alg(keys, i)));
      licvi_json_set(arena, k, "kid", licvi_json_new_cstring(arena, licv_keys_kid(keys, i)));
      licvi_json_append(list, k);
    }
    licvi_json_set(arena, o, "accepted", licvi_json_new(arena, LICVI_JSON_TRUE));
    licvi_json_set(arena, o, "keys", list);
  } else {
    licvi_json_set(arena, o, "status", licvi_json_new_cstring(arena, licv_status_name(status)));
  }
  licv_keys_free(keys);
  return o;
}

static int run_file(const char *dir, const char *name, size_t *passed, size_t *total) {
  vector_file file;
  const licvi_json *vector;
  int ok = 1;
  *passed = 0;
  *total = 0;
  if (!vector_file_load(dir, name, &file)) {
    vector_file_free(&file);
    return 0;
  }
  for (vector = licvi_json_get(file.root, "vectors")->first; vector != NULL; vector = vector->next) {
    const licvi_json *id = licvi_json_get(vector, "id");
    const licvi_json *key = licvi_json_get(vector, "key");
    const licvi_json *expected = licvi_json_get(vector, "expected");
    licvi_arena *arena = licvi_arena_new();
    licvi_json *actual = NULL;
    licv_status status = LICV_OK;
    const char *problem = NULL;
    (*total)++;
    if (!licvi_json_is_string(id) || !licvi_json_is_string(key) || expected == NULL) {
      problem = "the vector lacks id, key or expected";
    } else if (!options_known(file.kind, licvi_json_get(vector, "options"))) {
      problem = "the vector sets an option its kind does not know";
    } else if (strcmp(file.kind, "public-key") == 0) {
      actual = run_public_key(arena, &file, vector);
    } else {
      licv_keys *keys = NULL;
      status = keys_of(&file, key->string, &keys);
      if (status != LICV_OK) {
        problem = "the vector's key is refused";
      } else {
        actual = run_vector(arena, &file, vector, keys, &status);
        if (actual == NULL) problem = "the verifier failed";
      }
      licv_keys_free(keys);
    }
    if (problem == NULL && licvi_json_equal(actual, expected)) {
      (*passed)++;
    } else {
      ok = 0;
      fprintf(stderr, "FAIL %s %s: %s (status %s)\n", name,
              licvi_json_is_string(id) ? id->string : "?",
              problem == NULL ? "the outcome differs" : problem, licv_status_name(status));
      print_json("expected", expected);
      print_json("actual  ", actual);
    }
    licvi_arena_free(arena);
  }
  vector_file_free(&file);
  return ok && *total > 0;
}

int main(int argc, char **argv) {
  const char *dir = argc > 1 ? argv[1] : "../conformance";
  size_t count = 0, i, all_passed = 0, all_total = 0;
  char **names = vector_names(dir, &count);
  int ok = count > 0;
  if (count == 0) fprintf(stderr, "no vector files in %s\n", dir);
  for (i = 0; i < count; i++) {
    size_t passed = 0, total = 0;
    if (!run_file(dir, names[i], &passed, &total)) ok = 0;
    printf("%-24s %zu/%zu vectors passed\n", names[i], passed, total);
    all_passed += passed;
    all_total += total;
  }
  printf("%-24s %zu/%zu vectors passed\n", "all", all_passed, all_total);
  vector_names_free(names, count);
  return ok ? 0 : 1;
}
