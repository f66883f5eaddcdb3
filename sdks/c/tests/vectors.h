/* Reading the conformance vectors, and running one through the SDK. Shared by the tests. */
#ifndef LICV_TEST_VECTORS_H
#define LICV_TEST_VECTORS_H

#include "internal.h"

typedef struct vector_file {
  licvi_arena *arena;
  char *name;
  char *text;
  size_t length;
  const licvi_json *root;
  const char *kind;
} vector_file;

/* Reads dir/name and parses it with the SDK's own JSON reader. 0 on failure (printed). */
int vector_file_load(const char *dir, const char *name, vector_file *out);
void vector_file_free(vector_file *file);

/* The names of the vector files in dir (*.json), sorted; free with vector_names_free. */
char **vector_names(const char *dir, size_t *count);
void vector_names_free(char **names, size_t count);

/* The key text of a key entry ({"pem"}, {"jwk"} or {"jwks"}), and whether it is a PEM. */
char *key_text(const licvi_json *entry, int *is_pem, size_t *length);

/* Imports a key entry of the file. */
licv_status keys_of(const vector_file *file, const char *name, licv_keys **out);

/*
 * Runs a vector with the given keys and input. The outcome is built as the vector's "expected"
 * is written, in arena. NULL when the call itself failed (the status says why).
 */
licvi_json *run_vector(licvi_arena *arena, const vector_file *file, const licvi_json *vector,
                       const licv_keys *keys, licv_status *status);

/* The options a kind of vector may set: an unknown one would otherwise be silently ignored. */
int options_known(const char *kind, const licvi_json *options);

/* Reads a whole file; NULL when it cannot. */
char *read_file(const char *path, size_t *length);

#endif
