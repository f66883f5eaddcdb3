/*
 * License files: verified offline with a product's public key. The error codes come in this
 * order: malformed (alone), unknown_key or signature_invalid, product_mismatch, not_yet_valid,
 * expired, file_expired, fingerprint_mismatch.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static const char LICENSE_TYP[] = "license+jwt";

void licv_license_options_init(licv_license_options *options) {
  if (options == NULL) return;
  memset(options, 0, sizeof *options);
}

static int is_string(const licvi_json *v) { return licvi_json_is_string(v); }
static int is_null(const licvi_json *v) { return v != NULL && v->type == LICVI_JSON_NULL; }
static int is_nullable_string(const licvi_json *v) { return is_null(v) || is_string(v); }
static int is_safe_integer(const licvi_json *v) {
  return v != NULL && v->type == LICVI_JSON_NUMBER && licvi_is_safe_integer(v->number);
}
static int is_string_array(const licvi_json *v) {
  const licvi_json *item;
  if (v == NULL || v->type != LICVI_JSON_ARRAY) return 0;
  for (item = v->first; item != NULL; item = item->next) {
    if (!is_string(item)) return 0;
  }
  return 1;
}

/* A policy: an object whose known members have their types; unknown members are kept. */
static int is_policy(const licvi_json *p) {
  static const char *const COUNTS[] = {"max_machines",
                                       "max_processes",
                                       "max_uses",
                                       "heartbeat_interval_seconds",
                                       "heartbeat_grace_seconds",
                                       "check_in_interval_days"};
  static const char *const STRINGS[] = {"id", "name", "overage", "machine_matching"};
  const licvi_json *uses_reset;
  size_t i;
  if (!licvi_json_is_object(p)) return 0;
  for (i = 0; i < sizeof COUNTS / sizeof COUNTS[0]; i++) {
    const licvi_json *v = licvi_json_get(p, COUNTS[i]);
    if (v != NULL && !is_null(v) && !is_safe_integer(v)) return 0;
  }
  for (i = 0; i < sizeof STRINGS / sizeof STRINGS[0]; i++) {
    const licvi_json *v = licvi_json_get(p, STRINGS[i]);
    if (v != NULL && !is_string(v)) return 0;
  }
  uses_reset = licvi_json_get(p, "uses_reset");
  return uses_reset == NULL || is_nullable_string(uses_reset);
}

/* Whether the payload is shaped like license claims: the same check the service makes. */
static int are_license_claims(const licvi_json *c) {
  static const char *const TYPES[] = {"perpetual", "subscription", "trial", "node_locked",
                                      "floating"};
  const licvi_json *v = licvi_json_get(c, "v");
  const licvi_json *type = licvi_json_get(c, "license_type");
  const licvi_json *binding = licvi_json_get(c, "hardware_binding");
  const licvi_json *exp = licvi_json_get(c, "exp");
  const licvi_json *entitlements = licvi_json_get(c, "entitlements");
  const licvi_json *fingerprint = licvi_json_get(c, "fingerprint");
  const licvi_json *policy = licvi_json_get(c, "policy");
  int known_type = 0;
  size_t i;
  for (i = 0; i < sizeof TYPES / sizeof TYPES[0]; i++) {
    if (licvi_json_string_equals(type, TYPES[i])) known_type = 1;
  }
  return v != NULL && v->type == LICVI_JSON_NUMBER && v->number == 1 &&
         is_string(licvi_json_get(c, "jti")) && is_string(licvi_json_get(c, "sub")) &&
         is_string(licvi_json_get(c, "iss")) && is_safe_integer(licvi_json_get(c, "iat")) &&
         is_safe_integer(licvi_json_get(c, "nbf")) && (exp == NULL || is_safe_integer(exp)) &&
         is_string(licvi_json_get(c, "product_id")) &&
         is_string(licvi_json_get(c, "product_code")) && known_type &&
         is_nullable_string(licvi_json_get(c, "customer_id")) &&
         is_nullable_string(licvi_json_get(c, "customer_email")) &&
         is_string_array(licvi_json_get(c, "features")) &&
         is_safe_integer(licvi_json_get(c, "max_seats")) &&
         (is_null(binding) ||
          (licvi_json_is_object(binding) && is_string(licvi_json_get(binding, "fingerprint")))) &&
         is_string(licvi_json_get(c, "valid_from")) &&
         is_nullable_string(licvi_json_get(c, "valid_until")) &&
         (entitlements == NULL || is_string_array(entitlements)) &&
         (fingerprint == NULL || is_string(fingerprint)) && (policy == NULL || is_policy(policy));
}

/* The license's times all fit in a JavaScript Date: a time that does not is malformed. */
static int times_fit(const licvi_json *c) {
  const licvi_json *exp = licvi_json_get(c, "exp");
  return licvi_is_date_seconds(licvi_json_get(c, "iat")->number) &&
         licvi_is_date_seconds(licvi_json_get(c, "nbf")->number) &&
         (exp == NULL || licvi_is_date_seconds(exp->number));
}

/*
 * The compact JWS in the input: the file's text, trimmed, or the text a license_blob decodes to.
 * A JWS always holds dots and base64 never does, which tells them apart. NULL when neither.
 */
static const char *compact_jws_of(licvi_arena *arena, const uint8_t *input, size_t length,
                                  size_t *jws_length) {
  size_t start, end, i, n = 0, bytes_length = 0;
  char *compact;
  uint8_t *bytes;
  if (!licvi_utf8_valid(input, length)) return NULL;
  licvi_trim(input, length, &start, &end);
  if (memchr(input + start, '.', end - start) != NULL) {
    *jws_length = end - start;
    return (const char *)input + start;
  }
  /* A blob: every whitespace character is dropped first (a pasted blob's line breaks). */
  compact = licvi_alloc(arena, end - start + 1);
  if (compact == NULL) return NULL;
  for (i = start; i < end;) {
    size_t w = licvi_whitespace_at(input + i, end - i);
    if (w > 0) {
      i += w;
      continue;
    }
    compact[n++] = (char)input[i++];
  }
  bytes = licvi_base64_decode(arena, compact, n, &bytes_length);
  if (bytes == NULL || !licvi_utf8_valid(bytes, bytes_length)) return NULL;
  if (memchr(bytes, '.', bytes_length) == NULL) return NULL;
  *jws_length = bytes_length;
  return (const char *)bytes;
}

static int equals_option(const licvi_json *value, const char *option) {
  return licvi_json_string_equals(value, option);
}

static const char *const *string_array(licvi_arena *arena, const licvi_json *array, size_t *count) {
  const char **items;
  const licvi_json *item;
  size_t n = 0;
  *count = 0;
  items = licvi_alloc(arena, sizeof(char *) * (array == NULL ? 1 : array->length + 1));
  if (items == NULL) return NULL;
  if (array != NULL) {
    for (item = array->first; item != NULL; item = item->next) items[n++] = item->string;
  }
  *count = n;
  return items;
}

static char *format_seconds(licvi_arena *arena, double seconds) {
  char *text = licvi_alloc(arena, 32);
  if (text != NULL) licvi_format_date(seconds * 1000, text);
  return text;
}

static const char *string_or_null(const licvi_json *value) {
  return is_string(value) ? value->string : NULL;
}

licv_status licv_verify_license(const void *input, size_t length, const licv_keys *keys,
                                const licv_license_options *options, licv_license_result **out) {
  licv_license_options defaults;
  licvi_arena *arena;
  licv_license_result *result;
  licv_license *license;
  licvi_jws jws;
  licvi_codes codes = {0, {(licv_error_code)0}};
  const char *text;
  size_t text_length = 0;
  const licvi_json *c, *exp, *valid_until, *binding, *fingerprint, *policy, *kid;
  double now_ms, tolerance_ms, at_ms, nbf, valid_until_ms = NAN;
  int has_file_expiry = 0, has_license_end = 0, expired, file_expired, decoded;
  double file_expiry = 0, license_end = 0;
  size_t i;

  if (out == NULL) return LICV_E_INVALID_ARGUMENT;
  *out = NULL;
  if (keys == NULL || (input == NULL && length > 0)) return LICV_E_INVALID_ARGUMENT;
  if (options == NULL) {
    licv_license_options_init(&defaults);
    options = &defaults;
  }
  if (!licvi_tolerance_ok(options->clock_tolerance_seconds)) return LICV_E_INVALID_ARGUMENT;
  if (options->use_now && !isfinite(options->now)) return LICV_E_INVALID_ARGUMENT;
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

  text = compact_jws_of(arena, (const uint8_t *)(input == NULL ? "" : input), length, &text_length);
  decoded = text == NULL ? 0 : licvi_jws_decode(arena, text, text_length, NULL, 0, 0, &jws);
  if (decoded < 0) goto no_memory;
  c = decoded ? jws.payload : NULL;
  /* A JWS of another type is not a license, whoever signed it. */
  if (c == NULL || !licvi_json_string_equals(licvi_json_get(jws.header, "typ"), LICENSE_TYP) ||
      !are_license_claims(c) || !times_fit(c)) {
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
  if (options->product_id != NULL && !equals_option(licvi_json_get(c, "product_id"), options->product_id))
    licvi_push(&codes, LICV_PRODUCT_MISMATCH);
  nbf = licvi_json_get(c, "nbf")->number;
  if (nbf * 1000 > now_ms + tolerance_ms) licvi_push(&codes, LICV_NOT_YET_VALID);

  /*
   * A checkout file has an expiry of its own: an exp before its valid_until, or any exp when the
   * license never ends. An ordinary file's exp is the license's end.
   */
  exp = licvi_json_get(c, "exp");
  valid_until = licvi_json_get(c, "valid_until");
  if (is_string(valid_until)) valid_until_ms = licvi_parse_date(valid_until->string, valid_until->length);
  if (exp != NULL) {
    if (is_null(valid_until)) {
      has_file_expiry = 1;
      file_expiry = exp->number;
    } else if (isfinite(valid_until_ms) && exp->number < floor(valid_until_ms / 1000)) {
      has_file_expiry = 1;
      file_expiry = exp->number;
    }
  }
  if (!has_file_expiry) {
    has_license_end = exp != NULL;
    license_end = exp != NULL ? exp->number : 0;
  } else if (is_string(valid_until)) {
    has_license_end = 1;
    license_end = floor(valid_until_ms / 1000);
  }
  at_ms = now_ms - tolerance_ms;
  expired = has_license_end && license_end * 1000 <= at_ms;
  file_expired = has_file_expiry && file_expiry * 1000 <= at_ms;
  if (expired) licvi_push(&codes, LICV_EXPIRED);
  if (file_expired) licvi_push(&codes, LICV_FILE_EXPIRED);

  binding = licvi_json_get(c, "hardware_binding");
  fingerprint = licvi_json_get(c, "fingerprint");
  if (options->fingerprint != NULL &&
      ((licvi_json_is_object(binding) &&
        !equals_option(licvi_json_get(binding, "fingerprint"), options->fingerprint)) ||
       (fingerprint != NULL && !equals_option(fingerprint, options->fingerprint))))
    licvi_push(&codes, LICV_FINGERPRINT_MISMATCH);

  license = licvi_alloc(arena, sizeof *license);
  if (license == NULL) goto no_memory;
  license->license_id = licvi_json_get(c, "jti")->string;
  license->serial = licvi_json_get(c, "sub")->string;
  license->organization_id = licvi_json_get(c, "iss")->string;
  license->product_id = licvi_json_get(c, "product_id")->string;
  license->product_code = licvi_json_get(c, "product_code")->string;
  license->license_type = licvi_json_get(c, "license_type")->string;
  license->customer_id = string_or_null(licvi_json_get(c, "customer_id"));
  license->customer_email = string_or_null(licvi_json_get(c, "customer_email"));
  license->features = string_array(arena, licvi_json_get(c, "features"), &license->feature_count);
  license->entitlements =
      string_array(arena, licvi_json_get(c, "entitlements"), &license->entitlement_count);
  if (license->features == NULL || license->entitlements == NULL) goto no_memory;
  license->max_seats = (int64_t)licvi_json_get(c, "max_seats")->number;
  license->hardware_binding_fingerprint =
      licvi_json_is_object(binding) ? licvi_json_get(binding, "fingerprint")->string : NULL;
  license->fingerprint = string_or_null(fingerprint);
  license->valid_from = licvi_json_get(c, "valid_from")->string;
  license->valid_until = string_or_null(valid_until);
  license->issued_at_seconds = (int64_t)licvi_json_get(c, "iat")->number;
  license->not_before_seconds = (int64_t)nbf;
  license->issued_at = format_seconds(arena, licvi_json_get(c, "iat")->number);
  if (license->issued_at == NULL) goto no_memory;
  if (exp != NULL) {
    license->has_expiry = 1;
    license->expires_at_seconds = (int64_t)exp->number;
    license->expires_at = format_seconds(arena, exp->number);
    if (license->expires_at == NULL) goto no_memory;
  }
  license->is_expired = expired;
  license->is_file_expired = file_expired;
  policy = licvi_json_get(c, "policy");
  if (policy != NULL) {
    size_t policy_length = 0;
    char *written = licvi_json_write(policy, &policy_length);
    if (written == NULL) goto no_memory;
    license->policy_json = licvi_strndup(arena, written, policy_length);
    free(written);
    if (license->policy_json == NULL) goto no_memory;
  }
  kid = licvi_json_get(jws.header, "kid");
  license->key_id = string_or_null(kid);
  license->algorithm = licvi_json_get(jws.header, "alg")->string;
  license->claims_json = jws.payload_text;

  for (i = 0; i < codes.count; i++) result->errors[i] = codes.codes[i];
  result->error_count = codes.count;
  result->valid = codes.count == 0;
  result->license = license;
  *out = result;
  return LICV_OK;

no_memory:
  licvi_arena_free(arena);
  return LICV_E_NO_MEMORY;
}

void licv_license_result_free(licv_license_result *result) {
  if (result != NULL) licvi_arena_free(result->internal_);
}
