/*
 * The library's own parts, shared by its files and its tests. Not installed: the public API is
 * licensing_verifier.h alone.
 */
#ifndef LICV_INTERNAL_H
#define LICV_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "licensing_verifier.h"

/* ---- arena: every allocation of one result, freed at once ---------------------------------- */

typedef struct licvi_arena licvi_arena;

licvi_arena *licvi_arena_new(void);
void licvi_arena_free(licvi_arena *arena);
/* Zeroed memory, aligned for any type; NULL when out of memory. */
void *licvi_alloc(licvi_arena *arena, size_t size);
/* A NUL-terminated copy of length bytes. */
char *licvi_strndup(licvi_arena *arena, const char *text, size_t length);

/* ---- JSON (RFC 8259, read as JavaScript's JSON.parse reads it) ----------------------------- */

typedef enum licvi_json_type {
  LICVI_JSON_NULL,
  LICVI_JSON_FALSE,
  LICVI_JSON_TRUE,
  LICVI_JSON_NUMBER,
  LICVI_JSON_STRING,
  LICVI_JSON_ARRAY,
  LICVI_JSON_OBJECT
} licvi_json_type;

typedef struct licvi_json licvi_json;
struct licvi_json {
  licvi_json_type type;
  double number;
  /* A string's UTF-8 bytes (NUL-terminated), or NULL. */
  const char *string;
  /* A string's byte count, or an array's or object's count of children. */
  size_t length;
  /* The first child of an array or object; children are linked by next. */
  licvi_json *first;
  licvi_json *last;
  licvi_json *next;
  /* An object member's name. */
  const char *key;
  size_t key_length;
};

/*
 * Parses JSON text (UTF-8 already checked or not: invalid UTF-8 is refused). When a member
 * appears twice, the last one counts, at the place of the first. NULL when it is not JSON.
 */
licvi_json *licvi_json_parse(licvi_arena *arena, const char *text, size_t length);

/* The member of an object, or NULL (also when value is not an object). */
const licvi_json *licvi_json_get(const licvi_json *object, const char *key);

int licvi_json_is_string(const licvi_json *value);
int licvi_json_is_object(const licvi_json *value);
/* A string equal to the NUL-terminated text, byte for byte. */
int licvi_json_string_equals(const licvi_json *value, const char *text);
/* Deep equality; object members in any order. */
int licvi_json_equal(const licvi_json *a, const licvi_json *b);

/* Builders, for values made rather than read. */
licvi_json *licvi_json_new(licvi_arena *arena, licvi_json_type type);
licvi_json *licvi_json_new_number(licvi_arena *arena, double number);
licvi_json *licvi_json_new_string(licvi_arena *arena, const char *text, size_t length);
/* A string, or null when text is NULL. */
licvi_json *licvi_json_new_cstring(licvi_arena *arena, const char *text);
/* Appends to an array, or sets an object's member (replacing one of the same name). */
void licvi_json_append(licvi_json *array, licvi_json *value);
int licvi_json_set(licvi_arena *arena, licvi_json *object, const char *key, licvi_json *value);

/* Compact JSON text, NUL-terminated, allocated with malloc; NULL when out of memory. */
char *licvi_json_write(const licvi_json *value, size_t *length);

/* ---- text ---------------------------------------------------------------------------------- */

/* Whether the bytes are UTF-8 (strict: no overlong forms, no surrogates). */
int licvi_utf8_valid(const uint8_t *bytes, size_t length);

/* The bytes with JavaScript's String.prototype.trim whitespace removed from both ends. */
void licvi_trim(const uint8_t *bytes, size_t length, size_t *start, size_t *end);

/* The byte count of the whitespace character at bytes[0], or 0. */
size_t licvi_whitespace_at(const uint8_t *bytes, size_t length);

/* Canonical unpadded base64url; NULL when not canonical. The output is NUL-terminated. */
uint8_t *licvi_base64url_decode(licvi_arena *arena, const char *text, size_t length,
                                size_t *out_length);
/* Canonical padded standard base64 (no whitespace); NULL when not canonical or empty. */
uint8_t *licvi_base64_decode(licvi_arena *arena, const char *text, size_t length,
                             size_t *out_length);
char *licvi_base64url_encode(licvi_arena *arena, const uint8_t *bytes, size_t length,
                             size_t *out_length);

/* Date.parse for the ISO 8601 forms: milliseconds since 1970, or NaN when unreadable. */
double licvi_parse_date(const char *text, size_t length);
/* Date#toISOString of a time in milliseconds (at most 8.64e15 either side of 1970). */
void licvi_format_date(double milliseconds, char out[32]);
/* Whether Unix seconds fit in a JavaScript Date. */
int licvi_is_date_seconds(double seconds);
/* Number.isSafeInteger. */
int licvi_is_safe_integer(double value);

/* Compares strings as JavaScript's < compares them: by UTF-16 code units. */
int licvi_compare_utf16(const char *a, size_t a_length, const char *b, size_t b_length);

/* The current time in milliseconds. */
double licvi_now_ms(void);

/* ---- keys and JWS -------------------------------------------------------------------------- */

typedef struct licvi_jws {
  const licvi_json *header;
  /* NULL for a detached payload. */
  const licvi_json *payload;
  /* The payload's decoded JSON text. */
  const char *payload_text;
  size_t payload_text_length;
  const uint8_t *signing_input;
  size_t signing_input_length;
  const uint8_t *signature;
  size_t signature_length;
} licvi_jws;

/*
 * Takes a compact JWS apart. With detached (not NULL), the payload segment must be empty and the
 * signing input is made with those bytes. 0 when anything is malformed, -1 when out of memory.
 */
int licvi_jws_decode(licvi_arena *arena, const char *text, size_t length, const uint8_t *detached,
                     size_t detached_length, int is_detached, licvi_jws *out);

/* The signature check of a decoded JWS against a key set. */
typedef enum licvi_signature {
  LICVI_SIGNATURE_VALID = 0,
  LICVI_SIGNATURE_UNKNOWN_KEY,
  LICVI_SIGNATURE_INVALID
} licvi_signature;

licvi_signature licvi_jws_verify(const licvi_jws *jws, const licv_keys *keys);

/* ---- results ------------------------------------------------------------------------------- */

typedef struct licvi_codes {
  size_t count;
  licv_error_code codes[LICV_MAX_ERRORS];
} licvi_codes;

void licvi_push(licvi_codes *codes, licv_error_code code);

/* Checks an option's tolerance: finite and not negative. */
int licvi_tolerance_ok(double seconds);

#endif
