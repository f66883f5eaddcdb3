/*
 * A fuzz pass over the conformance vectors: each iteration takes a vector's input (or its key, or
 * a held revocation list), mutates it (bit flips, truncations, random bytes, insertions, splices,
 * and the same inside a decoded JWS segment), and runs it through the SDK. The run must not
 * crash, leak or trip a sanitizer, and every result must be well formed: valid exactly when it has
 * no errors, malformed alone, a decoded document exactly when not malformed.
 *
 * The seed is fixed, so a run is repeatable: the same seed gives the same inputs, in the same
 * order. It runs for SECONDS of processor time (default 3), so a busy machine runs as many.
 * Usage: licv_fuzz DIR [SECONDS] [SEED].
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "vectors.h"

typedef struct rng {
  uint64_t state;
} rng;

static uint64_t next(rng *r) {
  /* xorshift64* */
  r->state ^= r->state >> 12;
  r->state ^= r->state << 25;
  r->state ^= r->state >> 27;
  return r->state * 0x2545F4914F6CDD1DULL;
}

static size_t below(rng *r, size_t n) { return n == 0 ? 0 : (size_t)(next(r) % n); }

typedef struct bytes {
  uint8_t *data;
  size_t length;
} bytes;

static const char *const TOKENS[] = {".", "=", " ", "\n", "\r\n", "\xc2\xa0", "\xef\xbb\xbf",
                                     "\"", "{", "}", "[", "]", ",", ":", "0", "-1", "1e400",
                                     "null", "true", "\\u0000", "\\ud800", "\x80", "\xff", "-",
                                     "_", "+", "/", "AAAA", "\"alg\":\"none\"", "\"crit\":[]"};

/* Returns a mutated copy (malloc). Always NUL-terminated, for callers that need a C string. */
static bytes mutate_plain(rng *r, const uint8_t *data, size_t length) {
  bytes out;
  size_t capacity = length * 2 + 64, i, at, n;
  out.data = malloc(capacity + 1);
  memcpy(out.data, data, length);
  out.length = length;
  switch (below(r, 7)) {
    case 0: /* bit flips */
      n = 1 + below(r, 8);
      for (i = 0; i < n && out.length > 0; i++) out.data[below(r, out.length)] ^= (uint8_t)(1u << below(r, 8));
      break;
    case 1: /* truncation */
      out.length = below(r, out.length + 1);
      break;
    case 2: /* random bytes over the text */
      n = 1 + below(r, 8);
      for (i = 0; i < n && out.length > 0; i++) out.data[below(r, out.length)] = (uint8_t)next(r);
      break;
    case 3: /* random bytes inserted */
      n = 1 + below(r, 8);
      at = below(r, out.length + 1);
      memmove(out.data + at + n, out.data + at, out.length - at);
      for (i = 0; i < n; i++) out.data[at + i] = (uint8_t)next(r);
      out.length += n;
      break;
    case 4: /* a span deleted */
      at = below(r, out.length + 1);
      n = below(r, out.length - at + 1);
      memmove(out.data + at, out.data + at + n, out.length - at - n);
      out.length -= n;
      break;
    case 5: /* a span copied elsewhere */
      if (out.length > 0) {
        size_t from = below(r, out.length);
        n = 1 + below(r, out.length - from < 32 ? out.length - from : 32);
        at = below(r, out.length + 1);
        memmove(out.data + at + n, out.data + at, out.length - at);
        memmove(out.data + at, data + from, n);
        out.length += n;
      }
      break;
    default: { /* a token that means something to a parser */
      const char *token = TOKENS[below(r, sizeof TOKENS / sizeof TOKENS[0])];
      n = strlen(token);
      at = below(r, out.length + 1);
      memmove(out.data + at + n, out.data + at, out.length - at);
      memcpy(out.data + at, token, n);
      out.length += n;
      break;
    }
  }
  out.data[out.length] = '\0';
  return out;
}

/* Mutates the decoded JSON of a JWS's header or payload, and encodes it again. */
static bytes mutate_segment(rng *r, licvi_arena *arena, const uint8_t *data, size_t length) {
  const uint8_t *first = memchr(data, '.', length), *second;
  size_t start, end, decoded_length = 0, encoded_length = 0;
  uint8_t *decoded;
  char *encoded;
  bytes inner, out;
  if (first == NULL) return mutate_plain(r, data, length);
  second = memchr(first + 1, '.', length - (size_t)(first + 1 - data));
  if (second == NULL) return mutate_plain(r, data, length);
  if (below(r, 2) == 0) {
    start = 0;
    end = (size_t)(first - data);
  } else {
    start = (size_t)(first + 1 - data);
    end = (size_t)(second - data);
  }
  decoded = licvi_base64url_decode(arena, (const char *)data + start, end - start, &decoded_length);
  if (decoded == NULL) return mutate_plain(r, data, length);
  inner = mutate_plain(r, decoded, decoded_length);
  encoded = licvi_base64url_encode(arena, inner.data, inner.length, &encoded_length);
  free(inner.data);
  out.length = start + encoded_length + (length - end);
  out.data = malloc(out.length + 1);
  memcpy(out.data, data, start);
  memcpy(out.data + start, encoded, encoded_length);
  memcpy(out.data + start + encoded_length, data + end, length - end);
  out.data[out.length] = '\0';
  return out;
}

static bytes mutate(rng *r, licvi_arena *arena, const uint8_t *data, size_t length) {
  bytes out = below(r, 3) == 0 ? mutate_segment(r, arena, data, length)
                               : mutate_plain(r, data, length);
  /* Sometimes a second mutation on top of the first. */
  if (below(r, 4) == 0) {
    bytes again = mutate_plain(r, out.data, out.length);
    free(out.data);
    out = again;
  }
  return out;
}

/* ---- invariants ---------------------------------------------------------------------------- */

static size_t failures = 0;

static void fail(const char *what, const char *id) {
  failures++;
  if (failures <= 20) fprintf(stderr, "FAIL %s (vector %s)\n", what, id);
}

static void check_codes(int valid, const licv_error_code *codes, size_t count, int has_document,
                        int malformed_has_document, const char *id) {
  size_t i;
  if (count > LICV_MAX_ERRORS) fail("too many error codes", id);
  if ((valid != 0) != (count == 0)) fail("valid is not the absence of errors", id);
  for (i = 0; i < count && i < LICV_MAX_ERRORS; i++) {
    if (strcmp(licv_error_code_name(codes[i]), "unknown") == 0) fail("an unknown error code", id);
    if ((codes[i] == LICV_MALFORMED || codes[i] == LICV_UNSIGNED) && count != 1)
      fail("malformed or unsigned not alone", id);
  }
  if (count == 1 && (codes[0] == LICV_MALFORMED || codes[0] == LICV_UNSIGNED)) {
    if (has_document != malformed_has_document) fail("a malformed document decoded", id);
  } else if (!has_document) {
    fail("a decoded document missing", id);
  }
}

typedef struct counts {
  size_t iterations, valid, invalid, malformed, keys_refused;
} counts;

static void tally(counts *c, int valid, const licv_error_code *codes, size_t count) {
  if (valid) c->valid++;
  else if (count == 1 && codes[0] == LICV_MALFORMED) c->malformed++;
  else c->invalid++;
}

/* ---- one iteration ------------------------------------------------------------------------- */

typedef struct loaded {
  vector_file file;
  const licvi_json **vectors;
  size_t vector_count;
} loaded;

static void fuzz_key(rng *r, licvi_arena *arena, const vector_file *file, const char *name,
                     counts *c) {
  const licvi_json *entry = licvi_json_get(licvi_json_get(file->root, "keys"), name);
  int is_pem = 0;
  size_t length = 0;
  char *text = key_text(entry, &is_pem, &length);
  bytes m;
  licv_keys *keys = NULL;
  licv_status status;
  if (text == NULL) return;
  m = mutate(r, arena, (const uint8_t *)text, length);
  /* Either reader gets either text: a PEM as JSON and JSON as a PEM must be refused cleanly. */
  status = below(r, 4) == 0 ? (is_pem ? licv_keys_from_jwk((const char *)m.data, m.length, &keys)
                                      : licv_keys_from_pem((const char *)m.data, m.length, &keys))
                            : (is_pem ? licv_keys_from_pem((const char *)m.data, m.length, &keys)
                                      : licv_keys_from_jwk((const char *)m.data, m.length, &keys));
  if (status == LICV_OK) {
    size_t i;
    if (keys == NULL || licv_keys_count(keys) == 0) fail("an empty key set accepted", name);
    for (i = 0; keys != NULL && i < licv_keys_count(keys); i++) {
      if (licv_keys_alg(keys, i) == NULL) fail("a key without an algorithm", name);
    }
  } else {
    if (status != LICV_E_INVALID_KEY) fail("a key refused with another status", name);
    if (keys != NULL) fail("a refused key set handed out", name);
    c->keys_refused++;
  }
  licv_keys_free(keys);
  free(text);
  free(m.data);
}

static void iteration(rng *r, loaded *files, size_t file_count, licv_keys ***keys, counts *c) {
  size_t f = below(r, file_count), v;
  loaded *l = &files[f];
  const licvi_json *vector, *input, *options, *key_entry;
  const char *id, *kind = l->file.kind;
  licvi_arena *arena = licvi_arena_new();
  size_t key_index = 0;
  const licv_keys *vector_keys = NULL;
  if (l->vector_count == 0) {
    licvi_arena_free(arena);
    return;
  }
  v = below(r, l->vector_count);
  vector = l->vectors[v];
  id = licvi_json_get(vector, "id")->string;
  input = licvi_json_get(vector, "input");
  options = licvi_json_get(vector, "options");
  for (key_entry = licvi_json_get(l->file.root, "keys")->first; key_entry != NULL;
       key_entry = key_entry->next, key_index++) {
    if (strcmp(key_entry->key, licvi_json_get(vector, "key")->string) == 0) break;
  }
  if (key_entry != NULL) vector_keys = keys[f][key_index];
  c->iterations++;

  if (strcmp(kind, "public-key") == 0 || below(r, 16) == 0 || vector_keys == NULL) {
    if (key_entry != NULL) fuzz_key(r, arena, &l->file, key_entry->key, c);
  } else if (strcmp(kind, "license") == 0) {
    const licvi_json *text = licvi_json_get(input, "text");
    const licvi_json *b64 = licvi_json_get(input, "bytes_base64");
    const uint8_t *data = NULL;
    size_t length = 0;
    bytes m;
    licv_license_options lo;
    licv_license_result *result = NULL;
    double number;
    if (licvi_json_is_string(text)) {
      data = (const uint8_t *)text->string;
      length = text->length;
    } else if (licvi_json_is_string(b64)) {
      data = licvi_base64_decode(arena, b64->string, b64->length, &length);
    }
    m = mutate(r, arena, data == NULL ? (const uint8_t *)"" : data, length);
    licv_license_options_init(&lo);
    lo.use_now = 1;
    if (!(licvi_json_get(options, "now") != NULL &&
          (lo.now = licvi_json_get(options, "now")->number, 1)))
      lo.now = 1803902400;
    if (licvi_json_is_string(licvi_json_get(options, "product_id")))
      lo.product_id = licvi_json_get(options, "product_id")->string;
    if (licvi_json_is_string(licvi_json_get(options, "fingerprint")))
      lo.fingerprint = licvi_json_get(options, "fingerprint")->string;
    number = 0;
    if (licvi_json_get(options, "clock_tolerance_seconds") != NULL)
      number = licvi_json_get(options, "clock_tolerance_seconds")->number;
    lo.clock_tolerance_seconds = number;
    if (licv_verify_license(m.data, m.length, vector_keys, &lo, &result) != LICV_OK || result == NULL) {
      fail("verify_license did not run", id);
    } else {
      check_codes(result->valid, result->errors, result->error_count, result->license != NULL, 0, id);
      if (result->license != NULL) {
        /* Every string of the summary is readable. */
        size_t i;
        if (strlen(result->license->serial) + strlen(result->license->issued_at) +
                strlen(result->license->algorithm) + strlen(result->license->claims_json) == 0)
          fail("empty summary", id);
        for (i = 0; i < result->license->feature_count; i++) (void)strlen(result->license->features[i]);
      }
      tally(c, result->valid, result->errors, result->error_count);
    }
    licv_license_result_free(result);
    free(m.data);
  } else if (strcmp(kind, "revocation-list") == 0) {
    const licvi_json *text = licvi_json_get(input, "text");
    const licvi_json *held = licvi_json_get(options, "previous");
    licv_revocation_list *previous = NULL;
    licv_revocation_options ro;
    licv_revocation_result *result = NULL;
    bytes m;
    licv_revocation_options_init(&ro);
    if (held != NULL) {
      size_t length = 0;
      char *json = licvi_json_write(held, &length);
      if (below(r, 4) == 0) {
        bytes mh = mutate(r, arena, (const uint8_t *)json, length);
        licv_status status = licv_revocation_list_from_json((const char *)mh.data, mh.length, &previous);
        if (status != LICV_OK && status != LICV_E_INVALID_ARGUMENT) fail("from_json failed oddly", id);
        free(mh.data);
      } else {
        licv_revocation_list_from_json(json, length, &previous);
      }
      free(json);
    }
    ro.previous = previous;
    if (licvi_json_is_string(licvi_json_get(options, "product_id")))
      ro.product_id = licvi_json_get(options, "product_id")->string;
    m = mutate(r, arena, (const uint8_t *)text->string, text->length);
    if (licv_verify_revocation_list((const char *)m.data, m.length, vector_keys, &ro, &result) != LICV_OK ||
        result == NULL) {
      fail("verify_revocation_list did not run", id);
    } else {
      check_codes(result->valid, result->errors, result->error_count, 1, 1, id);
      if ((result->list != NULL) != (result->valid != 0)) fail("a list without validity", id);
      if (result->list != NULL) {
        char *json = NULL;
        licv_revocation_list *back = NULL;
        size_t i, length = 0;
        for (i = 1; i < result->list->entry_count; i++) {
          const char *a = result->list->entries[i - 1].serial, *b = result->list->entries[i].serial;
          if (licvi_compare_utf16(a, strlen(a), b, strlen(b)) > 0) fail("entries not sorted", id);
        }
        if (licv_revocation_list_to_json(result->list, &json, &length) != LICV_OK ||
            licv_revocation_list_from_json(json, length, &back) != LICV_OK ||
            back->entry_count != result->list->entry_count)
          fail("a list does not survive its JSON", id);
        if (result->list->entry_count > 0 &&
            licv_revocation_list_find(result->list, result->list->entries[0].serial) == NULL)
          fail("find misses an entry", id);
        licv_revocation_list_free(back);
        licv_free(json);
      }
      tally(c, result->valid, result->errors, result->error_count);
    }
    licv_revocation_result_free(result);
    licv_revocation_list_free(previous);
    free(m.data);
  } else if (strcmp(kind, "signed-answer") == 0) {
    const licvi_json *body = licvi_json_get(input, "body");
    const licvi_json *signature = licvi_json_get(input, "signature");
    const licvi_json *nonce = licvi_json_get(input, "nonce");
    licv_signed_answer answer;
    licv_signed_answer_options so;
    licv_signed_answer_result result;
    bytes mb = {NULL, 0}, ms = {NULL, 0};
    licv_signed_answer_options_init(&so);
    so.use_now = 1;
    so.now = licvi_json_get(options, "now") != NULL ? licvi_json_get(options, "now")->number : 1803902400;
    answer.body = body->string;
    answer.body_length = body->length;
    answer.signature = licvi_json_is_string(signature) ? signature->string : NULL;
    answer.nonce = licvi_json_is_string(nonce) ? nonce->string : NULL;
    if (below(r, 3) == 0) {
      mb = mutate(r, arena, (const uint8_t *)body->string, body->length);
      answer.body = mb.data;
      answer.body_length = mb.length;
    } else if (answer.signature != NULL) {
      ms = mutate(r, arena, (const uint8_t *)signature->string, signature->length);
      answer.signature = (const char *)ms.data;
    }
    if (licv_verify_signed_answer(&answer, vector_keys, &so, &result) != LICV_OK) {
      fail("verify_signed_answer did not run", id);
    } else {
      int decoded = !(result.error_count == 1 &&
                      (result.errors[0] == LICV_MALFORMED || result.errors[0] == LICV_UNSIGNED));
      check_codes(result.valid, result.errors, result.error_count, result.signed_at != NULL, 0, id);
      if (decoded != (result.signed_at != NULL)) fail("signed_at without a decoded signature", id);
      tally(c, result.valid, result.errors, result.error_count);
    }
    free(mb.data);
    free(ms.data);
  } else if (strcmp(kind, "activation") == 0) {
    const licvi_json *text = licvi_json_get(input, "text");
    licv_activation_options ao;
    licv_activation_result *result = NULL;
    bytes m = mutate(r, arena, (const uint8_t *)text->string, text->length);
    licv_activation_options_init(&ao);
    ao.use_now = 1;
    ao.now = licvi_json_get(options, "now") != NULL ? licvi_json_get(options, "now")->number : 1803902400;
    if (licv_verify_activation((const char *)m.data, m.length, vector_keys, &ao, &result) != LICV_OK ||
        result == NULL) {
      fail("verify_activation did not run", id);
    } else {
      check_codes(result->valid, result->errors, result->error_count, result->activation != NULL, 0, id);
      tally(c, result->valid, result->errors, result->error_count);
    }
    licv_activation_result_free(result);
    free(m.data);
  }
  licvi_arena_free(arena);
}

int main(int argc, char **argv) {
  const char *dir = argc > 1 ? argv[1] : "../conformance";
  double seconds = argc > 2 ? atof(argv[2]) : 3.0;
  uint64_t seed = argc > 3 ? strtoull(argv[3], NULL, 0) : 0x5EED1CE5C0FFEEULL;
  size_t count = 0, i, j;
  char **names = vector_names(dir, &count);
  loaded *files = calloc(count == 0 ? 1 : count, sizeof(loaded));
  licv_keys ***keys = calloc(count == 0 ? 1 : count, sizeof(licv_keys **));
  counts c = {0, 0, 0, 0, 0};
  rng r;
  double started, elapsed;
  r.state = seed == 0 ? 1 : seed;
  if (count == 0) {
    fprintf(stderr, "no vector files in %s\n", dir);
    return 1;
  }
  for (i = 0; i < count; i++) {
    const licvi_json *v, *k;
    size_t key_count;
    if (!vector_file_load(dir, names[i], &files[i].file)) return 1;
    files[i].vector_count = licvi_json_get(files[i].file.root, "vectors")->length;
    files[i].vectors = calloc(files[i].vector_count + 1, sizeof(licvi_json *));
    j = 0;
    for (v = licvi_json_get(files[i].file.root, "vectors")->first; v != NULL; v = v->next)
      files[i].vectors[j++] = v;
    key_count = licvi_json_get(files[i].file.root, "keys")->length;
    keys[i] = calloc(key_count + 1, sizeof(licv_keys *));
    j = 0;
    for (k = licvi_json_get(files[i].file.root, "keys")->first; k != NULL; k = k->next)
      keys_of(&files[i].file, k->key, &keys[i][j++]);
  }
  started = (double)clock();
  /* Checks the clock every 64 iterations: the sequence depends on the seed alone. */
  do {
    for (j = 0; j < 64; j++) iteration(&r, files, count, keys, &c);
    elapsed = ((double)clock() - started) / CLOCKS_PER_SEC;
  } while (elapsed < seconds && failures == 0);
  printf("fuzz: %zu iterations in %.1f s of processor time (seed 0x%llx): %zu valid, %zu invalid, %zu malformed, "
         "%zu keys refused, %zu failures\n",
         c.iterations, elapsed, (unsigned long long)seed, c.valid, c.invalid, c.malformed,
         c.keys_refused, failures);
  for (i = 0; i < count; i++) {
    size_t key_count = licvi_json_get(files[i].file.root, "keys")->length;
    for (j = 0; j < key_count; j++) licv_keys_free(keys[i][j]);
    free(keys[i]);
    free(files[i].vectors);
    vector_file_free(&files[i].file);
  }
  free(keys);
  free(files);
  vector_names_free(names, count);
  return failures == 0 ? 0 : 1;
}
