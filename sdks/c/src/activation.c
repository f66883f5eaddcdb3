/*
 * Activation files of air-gapped machines. The error codes come in this order: malformed
 * (alone), then unknown_key or signature_invalid, nonce_mismatch, machine_key_mismatch,
 * fingerprint_mismatch, product_mismatch, not_yet_valid, expired.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

static const char ACTIVATION_TYP[] = "activation+jwt";

void licv_activation_options_init(licv_activation_options *options) {
  if (options == NULL) return;
  memset(options, 0, sizeof *options);
}

static int is_time(const licvi_json *v) {
  return v != NULL && v->type == LICVI_JSON_NUMBER && licvi_is_safe_integer(v->number) &&
         licvi_is_date_seconds(v->number);
}

/* Whether the payload is shaped like an activation file's claims. */
static int are_activation_claims(const licvi_json *c) {
  static const char *const STRINGS[] = {"jti", "sub", "iss", "license_id", "product_id",
                                        "product_code", "fingerprint", "nonce"};
  const licvi_json *v = licvi_json_get(c, "v");
  const licvi_json *features = licvi_json_get(c, "features");
  const licvi_json *components = licvi_json_get(c, "components");
  const licvi_json *item;
  size_t i;
  if (v == NULL || v->type != LICVI_JSON_NUMBER || v->number != 1) return 0;
  for (i = 0; i < sizeof STRINGS / sizeof STRINGS[0]; i++) {
    if (!licvi_json_is_string(licvi_json_get(c, STRINGS[i]))) return 0;
  }
  if (features == NULL || features->type != LICVI_JSON_ARRAY) return 0;
  for (item = features->first; item != NULL; item = item->next) {
    if (!licvi_json_is_string(item)) return 0;
  }
  /* Components map names to strings. (JavaScript also takes an array of strings.) */
  if (components == NULL ||
      (components->type != LICVI_JSON_OBJECT && components->type != LICVI_JSON_ARRAY))
    return 0;
  for (item = components->first; item != NULL; item = item->next) {
    if (!licvi_json_is_string(item)) return 0;
  }
  if (!licvi_json_is_string(licvi_json_get(licvi_json_get(licvi_json_get(c, "cnf"), "jwk"), "x")))
    return 0;
  return is_time(licvi_json_get(c, "iat")) && is_time(licvi_json_get(c, "nbf")) &&
         is_time(licvi_json_get(c, "exp"));
}

static const char *string_of(const licvi_json *c, const char *name) {
  return licvi_json_get(c, name)->string;
}

licv_status licv_verify_activation(const char *file, size_t length, const licv_keys *keys,
                                   const licv_activation_options *options,
                                   licv_activation_result **out) {
  licv_activation_options defaults;
  licvi_arena *arena;
  licv_activation_result *result;
  licv_activation *activation;
  licvi_jws jws;
  licvi_codes codes = {0, {(licv_error_code)0}};
  const licvi_json *c = NULL, *item, *features, *components;
  size_t start = 0, end = 0, i;
  double now_ms, tolerance_ms;
  int decoded = 0;
  char *time_text;

  if (out == NULL) return LICV_E_INVALID_ARGUMENT;
  *out = NULL;
  if (keys == NULL || (file == NULL && length > 0)) return LICV_E_INVALID_ARGUMENT;
  if (options == NULL) {
    licv_activation_options_init(&defaults);
    options = &defaults;
  }
  if (!licvi_tolerance_ok(options->clock_tolerance_seconds) ||
      (options->use_now && !isfinite(options->now)))
    return LICV_E_INVALID_ARGUMENT;
  now_ms = options->use_now ? options->now * 1000 : licvi_now_ms();
  tolerance_ms = options->clock_tolerance_seconds * 1000;

  arena = licvi_arena_new();
  if (arena == NULL) return LICV_E_NO_MEMORY;
  result = licvi_alloc(arena, sizeof *result);
  if (result == NULL) {
    licvi_arena_free(arena);
    return LICV_E_NO_MEMORY;
  }
  result->internal_ = arena;

  if (file != NULL && licvi_utf8_valid((const uint8_t *)file, length)) {
    licvi_trim((const uint8_t *)file, length, &start, &end);
    decoded = licvi_jws_decode(arena, file + start, end - start, NULL, 0, 0, &jws);
    if (decoded < 0) goto no_memory;
  }
  if (decoded && licvi_json_string_equals(licvi_json_get(jws.header, "typ"), ACTIVATION_TYP))
    c = jws.payload;
  if (c == NULL || !are_activation_claims(c)) {
    result->errors[0] = LICV_MALFORMED;
    result->error_count = 1;
    *out = result;
    return LICV_OK;
  }

  switch (licvi_jws_verify(&jws, keys)) {
    case LICVI_SIGNATURE_UNKNOWN_KEY: licvi_push(&codes, LICV_UNKNOWN_KEY); break;
    case LICVI_SIGNATURE_INVALID: licvi_push(&codes, LICV_SIGNATURE_INVALID); break;
    case LICVI_SIGNATURE_VALID: break;
  }
  if (options->nonce != NULL && !licvi_json_string_equals(licvi_json_get(c, "nonce"), options->nonce))
    licvi_push(&codes, LICV_NONCE_MISMATCH);
  if (options->machine_key_x != NULL &&
      !licvi_json_string_equals(licvi_json_get(licvi_json_get(licvi_json_get(c, "cnf"), "jwk"), "x"),
                                options->machine_key_x))
    licvi_push(&codes, LICV_MACHINE_KEY_MISMATCH);
  if (options->fingerprint != NULL &&
      !licvi_json_string_equals(licvi_json_get(c, "fingerprint"), options->fingerprint))
    licvi_push(&codes, LICV_FINGERPRINT_MISMATCH);
  if (options->product_id != NULL &&
      !licvi_json_string_equals(licvi_json_get(c, "product_id"), options->product_id))
    licvi_push(&codes, LICV_PRODUCT_MISMATCH);
  if (licvi_json_get(c, "nbf")->number * 1000 > now_ms + tolerance_ms)
    licvi_push(&codes, LICV_NOT_YET_VALID);
  if (licvi_json_get(c, "exp")->number * 1000 <= now_ms - tolerance_ms)
    licvi_push(&codes, LICV_EXPIRED);

  activation = licvi_alloc(arena, sizeof *activation);
  if (activation == NULL) goto no_memory;
  activation->activation_id = string_of(c, "jti");
  activation->serial = string_of(c, "sub");
  activation->license_id = string_of(c, "license_id");
  activation->organization_id = string_of(c, "iss");
  activation->product_id = string_of(c, "product_id");
  activation->product_code = string_of(c, "product_code");
  activation->fingerprint = string_of(c, "fingerprint");
  features = licvi_json_get(c, "features");
  {
    const char **items = licvi_alloc(arena, sizeof(char *) * (features->length + 1));
    if (items == NULL) goto no_memory;
    i = 0;
    for (item = features->first; item != NULL; item = item->next) items[i++] = item->string;
    activation->features = items;
    activation->feature_count = i;
  }
  components = licvi_json_get(c, "components");
  {
    licv_component *items = licvi_alloc(arena, sizeof(licv_component) * (components->length + 1));
    if (items == NULL) goto no_memory;
    i = 0;
    for (item = components->first; item != NULL; item = item->next) {
      if (components->type == LICVI_JSON_ARRAY) {
        /* An array's members are named by their index, as JavaScript spreads it. */
        char *name = licvi_alloc(arena, 24);
        if (name == NULL) goto no_memory;
        snprintf(name, 24, "%lu", (unsigned long)i);
        items[i].name = name;
      } else {
        items[i].name = item->key;
      }
      items[i].value = item->string;
      i++;
    }
    activation->components = items;
    activation->component_count = i;
  }
  activation->issued_at_seconds = (int64_t)licvi_json_get(c, "iat")->number;
  activation->not_before_seconds = (int64_t)licvi_json_get(c, "nbf")->number;
  activation->expires_at_seconds = (int64_t)licvi_json_get(c, "exp")->number;
  time_text = licvi_alloc(arena, 64);
  if (time_text == NULL) goto no_memory;
  licvi_format_date(licvi_json_get(c, "iat")->number * 1000, time_text);
  licvi_format_date(licvi_json_get(c, "exp")->number * 1000, time_text + 32);
  activation->issued_at = time_text;
  activation->expires_at = time_text + 32;

  for (i = 0; i < codes.count; i++) result->errors[i] = codes.codes[i];
  result->error_count = codes.count;
  result->valid = codes.count == 0;
  result->activation = activation;
  *out = result;
  return LICV_OK;

no_memory:
  licvi_arena_free(arena);
  return LICV_E_NO_MEMORY;
}

void licv_activation_result_free(licv_activation_result *result) {
  if (result != NULL) licvi_arena_free(result->internal_);
}
